import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '@svc/errors';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import { secretsEqual } from '@svc/http-edge';
import type { SessionResolver } from '../http/actor';
import type { Credentials } from './sessions.dto';
import { MailService } from '../mail/mail.service';
import { SessionsRepository } from './sessions.repository';
import type { DraftMail, NewSession, SessionWithUser } from './sessions.repository';
import { PasswordAdapter } from './password.adapter';

export const SESSION_COOKIE = 'svc_session';

export interface SignedIn {
  accountId: string;
  email: string;
  csrfToken: string;
  /** The cookie value; only its SHA-256 is stored. */
  sessionToken: string;
}

export function sessionIdOf(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Reads one cookie from a Cookie header. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

const WRONG_CREDENTIALS = 'email or password is wrong';
const NOT_CONFIRMED = 'confirm your email address first: open the link we mailed to it (sign up again for a new one)';
const BAD_LINK = 'this link does not work: it has expired or was already used';

/** The SHA-256 hex of a link's token (only that is stored). */
export function tokenHashOf(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A link token as the pages send it: 43 base64url characters (32 random bytes). */
export function isLinkToken(token: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(token);
}

/**
 * Dashboard sign-up, log-in and sessions (cookie + CSRF token). ActorGuard resolves a
 * /dashboard/api caller through `resolve` and `requireCsrf` (SESSION_RESOLVER).
 */
@Injectable()
export class SessionsService implements SessionResolver {
  constructor(
    @Inject(SessionsRepository) private readonly repo: SessionsRepository,
    @Inject(PasswordAdapter) private readonly passwords: PasswordAdapter,
    @Inject(MailService) private readonly mail: MailService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private readonly draftMail: DraftMail = (kind, accountId, recipient) => this.mail.draft(kind, accountId, recipient);

  /** Whether a sign-up waits for its address to be confirmed (SIGNUP_CONFIRMATION). */
  get confirmationRequired(): boolean {
    return this.config.SIGNUP_CONFIRMATION === 'required';
  }

  /** SIGNUP_CONFIRMATION=off: the account and its session at once; a registered address is 400. */
  async signUp(credentials: Credentials): Promise<SignedIn> {
    const passwordHash = await this.passwords.hash(credentials.password);
    const { token, session } = this.newSession();
    const user = await this.repo.signUp(credentials.email, passwordHash, session);
    if (user === null) throw new AppError('invalid_request', 'this email is already registered');
    return { accountId: user.accountId, email: user.email, csrfToken: session.csrfToken, sessionToken: token };
  }

  /**
   * SIGNUP_CONFIRMATION=required: the same work whichever the address (the password hashed,
   * one transaction, one message queued), so the answer and its time tell nothing. A new
   * address gets the confirmation link; a registered one a "someone tried to sign up" message.
   */
  async requestSignUp(credentials: Credentials): Promise<void> {
    const passwordHash = await this.passwords.hash(credentials.password);
    const expiresAt = new Date(Date.now() + this.config.SIGNUP_CONFIRMATION_TTL_HOURS * 3_600_000);
    const messageId = await this.repo.requestSignup(credentials.email, passwordHash, expiresAt, this.draftMail);
    await this.mail.enqueue(messageId);
  }

  /** Uses a confirmation link: the account exists from now on, and can sign in. */
  async confirmSignUp(token: string): Promise<{ accountId: string; email: string }> {
    if (!isLinkToken(token)) throw new AppError('invalid_request', BAD_LINK);
    const outcome = await this.repo.confirmSignup(tokenHashOf(token), new Date());
    if (outcome === 'invalid') throw new AppError('invalid_request', BAD_LINK);
    if (outcome === 'registered') throw new AppError('invalid_request', 'this address already has an account: sign in, or reset its password');
    return outcome;
  }

  /**
   * The same answer whichever the address: a user's gets a reset link, an unknown one a "no
   * account uses this address" message; both are one transaction and one message queued.
   */
  async requestPasswordReset(email: string): Promise<void> {
    const expiresAt = new Date(Date.now() + this.config.PASSWORD_RESET_TTL_MINUTES * 60_000);
    const messageId = await this.repo.requestPasswordReset(email, expiresAt, this.draftMail);
    await this.mail.enqueue(messageId);
  }

  /**
   * Uses a reset link: the new password, every other session ended, audited; signs in. The
   * link is looked up before the password is hashed, so a made-up token costs no scrypt work.
   */
  async resetPassword(token: string, password: string, clientAddress: string | null): Promise<SignedIn> {
    if (!isLinkToken(token) || !(await this.repo.resetExists(tokenHashOf(token), new Date()))) throw new AppError('invalid_request', BAD_LINK);
    const passwordHash = await this.passwords.hash(password);
    const { token: sessionToken, session } = this.newSession();
    const done = await this.repo.resetPassword(tokenHashOf(token), new Date(), passwordHash, session, { clientAddress }, this.draftMail);
    if (done === null) throw new AppError('invalid_request', BAD_LINK);
    await this.mail.enqueue(done.noticeId);
    return { accountId: done.user.accountId, email: done.user.email, csrfToken: session.csrfToken, sessionToken };
  }

  /**
   * One password check whatever the address: the user's hash, a sign-up still waiting for
   * confirmation's, or a decoy for an unknown address. A wrong password and an unknown address
   * answer alike; the right password of an unconfirmed sign-up is told to confirm first.
   */
  async logIn(credentials: Credentials): Promise<SignedIn> {
    const { user, pending } = await this.repo.signInSubject(credentials.email, new Date());
    const hash = user?.passwordHash ?? pending?.passwordHash;
    const ok = hash === undefined ? await this.passwords.verifyDecoy(credentials.password) : await this.passwords.verify(credentials.password, hash);
    if (ok && user === null) throw new AppError('invalid_request', NOT_CONFIRMED);
    if (user === null || !ok) throw new AppError('invalid_request', WRONG_CREDENTIALS);
    const { token, session } = this.newSession();
    await this.repo.createSession(user.id, session);
    return { accountId: user.accountId, email: user.email, csrfToken: session.csrfToken, sessionToken: token };
  }

  /** The live session of the cookie, or 401 "not signed in". */
  async session(cookieHeader: string | undefined): Promise<SessionWithUser> {
    const token = readCookie(cookieHeader, SESSION_COOKIE);
    if (token === undefined || !/^[A-Za-z0-9_-]{43}$/.test(token)) throw notSignedIn();
    const session = await this.repo.findSession(sessionIdOf(token));
    if (session === null) throw notSignedIn();
    if (session.expiresAt.getTime() <= Date.now()) {
      await this.repo.deleteSession(session.id);
      throw notSignedIn();
    }
    return session;
  }

  async resolve(cookieHeader: string | undefined): Promise<{ sessionId: string; accountId: string; userId: string; email: string; csrfToken: string }> {
    const session = await this.session(cookieHeader);
    return { sessionId: session.id, accountId: session.user.accountId, userId: session.user.id, email: session.user.email, csrfToken: session.csrfToken };
  }

  /** A mutation needs x-csrf-token equal to the session's token. */
  requireCsrf(session: { csrfToken: string }, header: string | undefined): void {
    if (header === undefined || !secretsEqual(header, session.csrfToken)) {
      throw new AppError('invalid_request', 'missing or wrong x-csrf-token');
    }
  }

  async logOut(sessionId: string): Promise<void> {
    await this.repo.deleteSession(sessionId);
  }

  sessionCookie(token: string): string {
    const maxAge = this.config.SESSION_TTL_HOURS * 3600;
    return `${SESSION_COOKIE}=${token}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${this.config.COOKIE_SECURE ? '; Secure' : ''}`;
  }

  clearedCookie(): string {
    return `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict${this.config.COOKIE_SECURE ? '; Secure' : ''}`;
  }

  private newSession(): { token: string; session: NewSession } {
    const token = randomBytes(32).toString('base64url');
    return {
      token,
      session: {
        id: sessionIdOf(token),
        csrfToken: randomBytes(32).toString('base64url'),
        expiresAt: new Date(Date.now() + this.config.SESSION_TTL_HOURS * 3_600_000),
      },
    };
  }
}

function notSignedIn(): AppError {
  return new AppError('invalid_api_key', 'not signed in');
}
