import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AppError } from '@svc/errors';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import { LOGGER } from '../logging/logger';
import type { Logger } from '../logging/logger';
import { clientAddress } from '../http/client-address';
import { AttemptCountersRepository } from '../attempt-counters/attempt-counters.repository';

/** One limit counted per email and per client address: the counters' scopes and bounds. */
interface PairLimit {
  /** The counters are `<scope>:email:<sha256>` and `<scope>:addr:<sha256>`. */
  scope: string;
  perEmail: number;
  perAddress: number;
  windowSeconds: number;
  /** What the 429's message says was attempted too often. */
  what: string;
}

/**
 * The anonymous account routes are limited per email and per client address (429 rate_limited
 * with Retry-After), each attempt counted in a fixed window:
 * - sign-in and sign-up attempts (SIGN_IN_*); a successful sign-in clears its email's count;
 * - sign-up mails and password resets (SIGNUP_MAILS_*, PASSWORD_RESETS_*, MAIL_LIMIT_WINDOW_SECONDS),
 *   so nobody can have the platform mail an address, or from one client address, without bound.
 * Every limit counts an address whether or not an account uses it, so a 429 tells nothing about
 * registration. When Redis cannot be reached the limits are not applied (logged): signing in
 * stays possible, and the password check's cost still bounds guessing.
 */
@Injectable()
export class SignInLimitService {
  constructor(
    @Inject(AttemptCountersRepository) private readonly counters: AttemptCountersRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Counts a sign-in or sign-up attempt for `email` from the request's client address. */
  async admit(email: string, request: FastifyRequest): Promise<void> {
    const c = this.config;
    await this.admitPair(email, request, { scope: 'sign-in', perEmail: c.SIGN_IN_ATTEMPTS_PER_EMAIL, perAddress: c.SIGN_IN_ATTEMPTS_PER_ADDRESS, windowSeconds: c.SIGN_IN_WINDOW_SECONDS, what: 'sign-in attempts' });
  }

  /** Counts a sign-up that would mail `email` (a confirmation link or "already registered"). */
  async admitSignupMail(email: string, request: FastifyRequest): Promise<void> {
    const c = this.config;
    await this.admitPair(email, request, { scope: 'signup-mail', perEmail: c.SIGNUP_MAILS_PER_EMAIL, perAddress: c.SIGNUP_MAILS_PER_ADDRESS, windowSeconds: c.MAIL_LIMIT_WINDOW_SECONDS, what: 'sign-ups' });
  }

  /** Counts a password-reset request for `email`. */
  async admitPasswordReset(email: string, request: FastifyRequest): Promise<void> {
    const c = this.config;
    await this.admitPair(email, request, { scope: 'password-reset', perEmail: c.PASSWORD_RESETS_PER_EMAIL, perAddress: c.PASSWORD_RESETS_PER_ADDRESS, windowSeconds: c.MAIL_LIMIT_WINDOW_SECONDS, what: 'password resets' });
  }

  async succeeded(email: string): Promise<void> {
    await this.counters.forget('sign-in:email', email).catch(() => undefined);
  }

  private async admitPair(email: string, request: FastifyRequest, limit: PairLimit): Promise<void> {
    const address = clientAddress(request, this.config.TRUSTED_PROXIES);
    const windowMs = limit.windowSeconds * 1000;
    let counts;
    try {
      counts = await Promise.all([this.counters.count(`${limit.scope}:email`, email, windowMs), this.counters.count(`${limit.scope}:addr`, address, windowMs)]);
    } catch (error) {
      this.logger.warn({ err: error instanceof Error ? error.message : String(error), limit: limit.scope }, 'rate limit not applied: redis unavailable');
      return;
    }
    const [byEmail, byAddress] = counts;
    const waitMs = Math.max(
      byEmail.attempts > limit.perEmail ? byEmail.windowLeftMs : 0,
      byAddress.attempts > limit.perAddress ? byAddress.windowLeftMs : 0,
    );
    if (waitMs > 0) {
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      throw new AppError('rate_limited', `too many ${limit.what}; try again in ${seconds} s`, { retryAfterSeconds: seconds });
    }
  }
}
