import { Inject, Injectable } from '@nestjs/common';
import type { AccountMailKind, AuditActor } from '@svc/contracts';
import { newId } from '@svc/ids';
import { appendAudit } from '../audit/audit.repository';
import { DatabaseRepository, isUniqueViolation } from '../db/database.repository';
import type { Prisma } from '../generated/prisma/client';
import { insertMailMessage } from '../mail/mail-messages.repository';
import type { MailDraft } from '../mail/mail-messages.repository';

export interface UserRow {
  id: string;
  accountId: string;
  email: string;
  passwordHash: string;
}

export interface NewSession {
  /** SHA-256 hex of the cookie token. */
  id: string;
  csrfToken: string;
  expiresAt: Date;
}

export interface SessionWithUser {
  id: string;
  csrfToken: string;
  expiresAt: Date;
  user: { id: string; accountId: string; email: string };
}

/** Makes a message's record: its kind, the account it concerns (null: none yet) and the address it goes to. */
export type DraftMail = (kind: AccountMailKind, accountId: string | null, recipient: string) => MailDraft;

/** What a sign-in attempt is checked against: the user of the address, or its sign-up still waiting for confirmation. */
export interface SignInSubject {
  user: UserRow | null;
  pending: { passwordHash: string } | null;
}

/** A password reset that went through: the user, the new session's id, the sessions ended, the notice's message. */
export interface PasswordResetDone {
  user: { id: string; accountId: string; email: string };
  endedSessions: number;
  noticeId: string;
}

const USER = { id: true, accountId: true, email: true, passwordHash: true } as const;

/** Users, sessions, sign-up requests and password resets of the dashboard. */
@Injectable()
export class SessionsRepository {
  constructor(@Inject(DatabaseRepository) private readonly db: DatabaseRepository) {}

  /** Account, user and first session in one transaction; null when the email is taken (SIGNUP_CONFIRMATION=off). */
  async signUp(email: string, passwordHash: string, session: NewSession): Promise<UserRow | null> {
    try {
      return await this.db.client.$transaction(async (tx) => {
        const user = await createAccountAndUser(tx, email, passwordHash);
        await tx.session.create({ data: { ...session, userId: user.id } });
        return user;
      });
    } catch (error) {
      if (isUniqueViolation(error)) return null;
      throw error;
    }
  }

  /**
   * A sign-up with confirmation, in one transaction whichever the address: a registered one
   * gets the "someone tried to sign up" message; a new one gets (or replaces) its sign-up request
   * and the confirmation message, whose link is made when it is sent. Answers the message's id.
   */
  async requestSignup(email: string, passwordHash: string, expiresAt: Date, draft: DraftMail): Promise<string> {
    return this.db.client.$transaction(async (tx) => {
      const user = await tx.user.findUnique({ where: { email }, select: { accountId: true } });
      if (user !== null) return insertMailMessage(tx, draft('signup.registered', user.accountId, email));
      const messageId = await insertMailMessage(tx, draft('signup.confirm', null, email));
      await tx.signupRequest.upsert({
        where: { email },
        create: { email, passwordHash, messageId, expiresAt },
        update: { passwordHash, messageId, tokenHash: null, expiresAt, createdAt: new Date() },
      });
      return messageId;
    });
  }

  /** The user of the address and its unexpired sign-up request, read together (every sign-in reads both). */
  async signInSubject(email: string, now: Date): Promise<SignInSubject> {
    const [user, pending] = await Promise.all([
      this.db.client.user.findUnique({ where: { email }, select: USER }),
      this.db.client.signupRequest.findFirst({ where: { email, expiresAt: { gt: now } }, select: { passwordHash: true } }),
    ]);
    return { user, pending };
  }

  /**
   * Uses a confirmation link (single use: the request is deleted): makes the account and its
   * user. `invalid`: no unexpired request has this token; `registered`: the address got an
   * account meanwhile (the request is used up all the same).
   */
  async confirmSignup(tokenHash: string, now: Date): Promise<{ accountId: string; email: string } | 'invalid' | 'registered'> {
    return this.db.client.$transaction(async (tx) => {
      const used = await tx.$queryRaw<{ email: string; password_hash: string }[]>`
        DELETE FROM signup_requests WHERE token_hash = ${tokenHash} AND expires_at > ${now} RETURNING email, password_hash`;
      const request = used[0];
      if (request === undefined) return 'invalid';
      const taken = await tx.user.findUnique({ where: { email: request.email }, select: { id: true } });
      if (taken !== null) return 'registered';
      const user = await createAccountAndUser(tx, request.email, request.password_hash);
      return { accountId: user.accountId, email: user.email };
    });
  }

  /**
   * A password-reset request, in one transaction whichever the address: a user's gets a reset
   * (its link made when the message is sent) and the link message; an address without a user
   * gets the "no account uses this address" message. Answers the message's id.
   */
  async requestPasswordReset(email: string, expiresAt: Date, draft: DraftMail): Promise<string> {
    return this.db.client.$transaction(async (tx) => {
      const user = await tx.user.findUnique({ where: { email }, select: { id: true, accountId: true } });
      if (user === null) return insertMailMessage(tx, draft('password_reset.unknown', null, email));
      const messageId = await insertMailMessage(tx, draft('password_reset.link', user.accountId, email));
      await tx.passwordReset.create({ data: { messageId, userId: user.id, expiresAt } });
      return messageId;
    });
  }

  /**
   * Uses a reset link: in one transaction the new password, every session and every reset of
   * the user ended, the new session, the audit entry and the "password changed" message. Null
   * when no unexpired reset has this token (unknown, expired or used: single use).
   */
  async resetPassword(tokenHash: string, now: Date, passwordHash: string, session: NewSession, actor: Omit<AuditActor, 'id' | 'kind'>, draft: DraftMail): Promise<PasswordResetDone | null> {
    return this.db.client.$transaction(async (tx) => {
      const found = await tx.$queryRaw<{ user_id: string }[]>`
        SELECT user_id FROM password_resets WHERE token_hash = ${tokenHash} AND expires_at > ${now} FOR UPDATE`;
      const userId = found[0]?.user_id;
      if (userId === undefined) return null;
      const user = await tx.user.update({ where: { id: userId }, data: { passwordHash }, select: { id: true, accountId: true, email: true } });
      const ended = await tx.session.deleteMany({ where: { userId } });
      await tx.passwordReset.deleteMany({ where: { userId } });
      await tx.session.create({ data: { ...session, userId } });
      await appendAudit(tx, {
        accountId: user.accountId,
        actor: { kind: 'session', id: userId, clientAddress: actor.clientAddress },
        action: 'user.password_reset',
        targetId: userId,
        changes: passwordResetChanges('reset link', ended.count),
      });
      const noticeId = await insertMailMessage(tx, draft('password_reset.done', user.accountId, user.email));
      return { user, endedSessions: ended.count, noticeId };
    });
  }

  /** Whether an unexpired reset has this token (the reset itself checks again under a lock). */
  async resetExists(tokenHash: string, now: Date): Promise<boolean> {
    return (await this.db.client.passwordReset.count({ where: { tokenHash, expiresAt: { gt: now } } })) === 1;
  }

  /** Gives the sign-up request of a confirmation message its token; false when the message no longer has one (replaced or used). */
  async setSignupToken(messageId: string, tokenHash: string, expiresAt: Date): Promise<boolean> {
    const updated = await this.db.client.signupRequest.updateMany({ where: { messageId }, data: { tokenHash, expiresAt } });
    return updated.count === 1;
  }

  /** Gives the reset of a link message its token; false when the reset is gone (used, or ended by another one's use). */
  async setResetToken(messageId: string, tokenHash: string, expiresAt: Date): Promise<boolean> {
    const updated = await this.db.client.passwordReset.updateMany({ where: { messageId }, data: { tokenHash, expiresAt } });
    return updated.count === 1;
  }

  /** Deletes expired sign-up requests and resets; answers how many. */
  async deleteExpiredLinks(now: Date): Promise<number> {
    const [requests, resets] = await this.db.client.$transaction([
      this.db.client.signupRequest.deleteMany({ where: { expiresAt: { lt: now } } }),
      this.db.client.passwordReset.deleteMany({ where: { expiresAt: { lt: now } } }),
    ]);
    return requests.count + resets.count;
  }

  async findUserByEmail(email: string): Promise<UserRow | null> {
    return this.db.client.user.findUnique({ where: { email }, select: USER });
  }

  async createSession(userId: string, session: NewSession): Promise<void> {
    await this.db.client.session.create({ data: { ...session, userId } });
  }

  async findSession(id: string): Promise<SessionWithUser | null> {
    return this.db.client.session.findUnique({
      where: { id },
      select: { id: true, csrfToken: true, expiresAt: true, user: { select: { id: true, accountId: true, email: true } } },
    });
  }

  async deleteSession(id: string): Promise<void> {
    await this.db.client.session.deleteMany({ where: { id } });
  }

  /**
   * An operator's command sets a user's password: ends every session and every reset of the
   * user, audited with the operator as the actor. `created`: no user had the address and
   * `createIfMissing` made one (a confirmed account); `missing`: none, and none made.
   */
  async setPassword(email: string, passwordHash: string, createIfMissing: boolean): Promise<'reset' | 'created' | 'missing'> {
    return this.db.client.$transaction(async (tx) => {
      const user = await tx.user.findUnique({ where: { email }, select: { id: true, accountId: true } });
      if (user === null) {
        if (!createIfMissing) return 'missing';
        await createAccountAndUser(tx, email, passwordHash);
        await tx.signupRequest.deleteMany({ where: { email } });
        return 'created';
      }
      await tx.user.update({ where: { id: user.id }, data: { passwordHash } });
      const ended = await tx.session.deleteMany({ where: { userId: user.id } });
      await tx.passwordReset.deleteMany({ where: { userId: user.id } });
      await appendAudit(tx, {
        accountId: user.accountId,
        actor: { kind: 'operator', id: 'operator', clientAddress: null },
        action: 'user.password_reset',
        targetId: user.id,
        changes: passwordResetChanges('operator command', ended.count),
      });
      return 'reset';
    });
  }
}

async function createAccountAndUser(tx: Prisma.TransactionClient, email: string, passwordHash: string): Promise<UserRow> {
  const account = await tx.account.create({ data: { id: newId('account'), email } });
  return tx.user.create({ data: { id: newId('user'), accountId: account.id, email, passwordHash }, select: USER });
}

/** A password reset's entry: never the password or its hash; how it was reset and the sessions it ended. */
function passwordResetChanges(how: string, endedSessions: number): Record<string, { before: string | number; after: string | number }> {
  return {
    password: { before: 'previous password', after: `new password (${how})` },
    other_sessions: { before: endedSessions, after: 0 },
  };
}
