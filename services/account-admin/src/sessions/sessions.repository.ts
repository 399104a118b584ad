import { Inject, Injectable } from '@nestjs/common';
import { newId } from '@svc/ids';
import { DatabaseRepository, isUniqueViolation } from '../db/database.repository';

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

/** Users and sessions of the dashboard. */
@Injectable()
export class SessionsRepository {
  constructor(@Inject(DatabaseRepository) private readonly db: DatabaseRepository) {}

  /** Account, user and first session in one transaction; null when the email is taken. */
  async signUp(email: string, passwordHash: string, session: NewSession): Promise<UserRow | null> {
    try {
      return await this.db.client.$transaction(async (tx) => {
        const account = await tx.account.create({ data: { id: newId('account'), email } });
        const user = await tx.user.create({
          data: { id: newId('user'), accountId: account.id, email, passwordHash },
          select: { id: true, accountId: true, email: true, passwordHash: true },
        });
        await tx.session.create({ data: { ...session, userId: user.id } });
        return user;
      });
    } catch (error) {
      if (isUniqueViolation(error)) return null;
      throw error;
    }
  }

  async findUserByEmail(email: string): Promise<UserRow | null> {
    return this.db.client.user.findUnique({
      where: { email },
      select: { id: true, accountId: true, email: true, passwordHash: true },
    });
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

  /** Sets a user's password hash and ends every session of that user; false when no such user. */
  async resetPassword(email: string, passwordHash: string): Promise<boolean> {
    return this.db.client.$transaction(async (tx) => {
      const user = await tx.user.findUnique({ where: { email }, select: { id: true } });
      if (user === null) return false;
      await tx.user.update({ where: { id: user.id }, data: { passwordHash } });
      await tx.session.deleteMany({ where: { userId: user.id } });
      return true;
    });
  }
}
