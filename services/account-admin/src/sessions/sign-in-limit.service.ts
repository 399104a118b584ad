import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AppError } from '@svc/errors';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import { LOGGER } from '../logging/logger';
import type { Logger } from '../logging/logger';
import { clientAddress } from '../http/client-address';
import { AttemptCountersRepository } from '../attempt-counters/attempt-counters.repository';

/** The counters' scopes (the Redis keys are `sign-in:email:<sha256>` and `sign-in:addr:<sha256>`). */
const EMAIL_SCOPE = 'sign-in:email';
const ADDRESS_SCOPE = 'sign-in:addr';

/**
 * Login and signup are rate limited per email and per client address (429 rate_limited
 * with Retry-After): every attempt counts in a fixed window; a successful login clears its
 * email's count. When Redis cannot be reached the limit is not applied (logged): signing in
 * stays possible, and the password check's cost still bounds guessing.
 */
@Injectable()
export class SignInLimitService {
  constructor(
    @Inject(AttemptCountersRepository) private readonly counters: AttemptCountersRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Counts an attempt for `email` from the request's client address; 429 rate_limited over either limit. */
  async admit(email: string, request: FastifyRequest): Promise<void> {
    const address = clientAddress(request, this.config.TRUSTED_PROXIES);
    const windowMs = this.config.SIGN_IN_WINDOW_SECONDS * 1000;
    let counts;
    try {
      counts = await Promise.all([this.counters.count(EMAIL_SCOPE, email, windowMs), this.counters.count(ADDRESS_SCOPE, address, windowMs)]);
    } catch (error) {
      this.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'sign-in rate limit not applied: redis unavailable');
      return;
    }
    const [byEmail, byAddress] = counts;
    const over = [
      byEmail.attempts > this.config.SIGN_IN_ATTEMPTS_PER_EMAIL ? byEmail.windowLeftMs : 0,
      byAddress.attempts > this.config.SIGN_IN_ATTEMPTS_PER_ADDRESS ? byAddress.windowLeftMs : 0,
    ];
    const waitMs = Math.max(...over);
    if (waitMs > 0) {
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      throw new AppError('rate_limited', `too many sign-in attempts; try again in ${seconds} s`, { retryAfterSeconds: seconds });
    }
  }

  async succeeded(email: string): Promise<void> {
    await this.counters.forget(EMAIL_SCOPE, email).catch(() => undefined);
  }
}
