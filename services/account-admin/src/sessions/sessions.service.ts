import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '@svc/errors';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import { secretsEqual } from '@svc/http-edge';
import type { SessionResolver } from '../http/actor';
import type { Credentials } from './sessions.dto';
import { SessionsRepository } from './sessions.repository';
import type { NewSession, SessionWithUser } from './sessions.repository';
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

/**
 * Dashboard sign-up, log-in and sessions (cookie + CSRF token). ActorGuard resolves a
 * /dashboard/api caller through `resolve` and `requireCsrf` (SESSION_RESOLVER).
 */
@Injectable()
export class SessionsService implements SessionResolver {
  constructor(
    @Inject(SessionsRepository) private readonly repo: SessionsRepository,
    @Inject(PasswordAdapter) private readonly passwords: PasswordAdapter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async signUp(credentials: Credentials): Promise<SignedIn> {
    const passwordHash = await this.passwords.hash(credentials.password);
    const { token, session } = this.newSession();
    const user = await this.repo.signUp(credentials.email, passwordHash, session);
    if (user === null) throw new AppError('invalid_request', 'this email is already registered');
    return { accountId: user.accountId, email: user.email, csrfToken: session.csrfToken, sessionToken: token };
  }

  async logIn(credentials: Credentials): Promise<SignedIn> {
    const user = await this.repo.findUserByEmail(credentials.email);
    const ok = user === null
      ? await this.passwords.verifyDecoy(credentials.password)
      : await this.passwords.verify(credentials.password, user.passwordHash);
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
