import { Inject, Injectable } from '@nestjs/common';
import { EMAIL_ALERT_DEFAULTS } from '@svc/contracts';
import type { AlertEvent, MailKind } from '@svc/contracts';
import { newId } from '@svc/ids';
import { DatabaseRepository } from '../db/database.repository';
import type { Prisma } from '../generated/prisma/client';

export type MailStatus = 'queued' | 'sent' | 'failed' | 'skipped';

/** A message to record with its cause: who gets it and why, and whether it will be sent at all. */
export interface MailDraft {
  kind: MailKind;
  accountId: string | null;
  recipient: string;
  /** `queued`, or `skipped` with why (no SMTP server is set). */
  status: 'queued' | 'skipped';
  detail: string | null;
}

export interface MailMessageRow {
  id: string;
  kind: string;
  accountId: string | null;
  recipient: string | null;
  event: AlertEvent | null;
  status: MailStatus;
  attempts: number;
}

/**
 * The transaction's write of a new message (the only INSERT of account-admin's own messages):
 * made in the same transaction as its cause (a sign-up request, a reset), so a message exists
 * exactly when its cause does. Answers the message's id.
 */
export async function insertMailMessage(tx: Prisma.TransactionClient, draft: MailDraft): Promise<string> {
  const id = newId('mailMessage');
  await tx.mailMessage.create({
    data: { id, kind: draft.kind, accountId: draft.accountId, recipient: draft.recipient, status: draft.status, detail: draft.detail },
  });
  return id;
}

const ROW = { id: true, kind: true, accountId: true, recipient: true, event: true, status: true, attempts: true } as const;

/** The record of every message (mail_messages) and what an alert's mail depends on. */
@Injectable()
export class MailMessagesRepository {
  constructor(@Inject(DatabaseRepository) private readonly db: DatabaseRepository) {}

  async load(id: string): Promise<MailMessageRow | null> {
    const row = await this.db.client.mailMessage.findUnique({ where: { id }, select: ROW });
    return row === null ? null : { ...row, status: row.status as MailStatus, event: row.event as unknown as AlertEvent | null };
  }

  /**
   * The message of an alert, made once per event: the owner's address and choice are read
   * when it is recorded; a second call for the same event answers the first one's row.
   */
  async recordAlert(event: AlertEvent, draft: (owner: { email: string } | null, email: boolean) => MailDraft): Promise<MailMessageRow> {
    return this.db.client.$transaction(async (tx) => {
      const existing = await tx.mailMessage.findUnique({ where: { eventId: event.id }, select: ROW });
      if (existing !== null) return { ...existing, status: existing.status as MailStatus, event: existing.event as unknown as AlertEvent | null };
      const owner = await tx.user.findFirst({ where: { accountId: event.account_id }, orderBy: { createdAt: 'asc' }, select: { email: true } });
      const setting = await tx.notificationSetting.findUnique({ where: { accountId_eventType: { accountId: event.account_id, eventType: event.type } }, select: { email: true } });
      const d = draft(owner, setting?.email ?? EMAIL_ALERT_DEFAULTS[event.type]);
      const id = newId('mailMessage');
      // Two workers racing on one event: the unique event_id keeps one row; the loser reads it.
      const inserted = await tx.$executeRaw`
        INSERT INTO mail_messages (id, kind, account_id, recipient, event_id, event, status, detail)
        VALUES (${id}, 'alert', ${event.account_id}, ${owner?.email ?? null}, ${event.id}, CAST(${JSON.stringify(event)} AS jsonb), ${d.status}, ${d.detail})
        ON CONFLICT (event_id) DO NOTHING`;
      const row = await tx.mailMessage.findUniqueOrThrow({ where: inserted === 1 ? { id } : { eventId: event.id }, select: ROW });
      return { ...row, status: row.status as MailStatus, event: row.event as unknown as AlertEvent | null };
    });
  }

  /** The outcome of an attempt: sent; or failed for good; or still queued for the next attempt. Only a queued message changes. */
  async markSent(id: string, attempts: number, smtp: { messageId: string; response: string }): Promise<void> {
    await this.db.client.mailMessage.updateMany({
      where: { id, status: 'queued' },
      data: { status: 'sent', attempts, smtpMessageId: smtp.messageId, smtpResponse: smtp.response, detail: null, sentAt: new Date(), updatedAt: new Date() },
    });
  }

  async markEnded(id: string, status: 'failed' | 'skipped', attempts: number, detail: string): Promise<void> {
    await this.db.client.mailMessage.updateMany({ where: { id, status: 'queued' }, data: { status, attempts, detail, updatedAt: new Date() } });
  }

  async markAttempt(id: string, attempts: number, detail: string): Promise<void> {
    await this.db.client.mailMessage.updateMany({ where: { id, status: 'queued' }, data: { attempts, detail, updatedAt: new Date() } });
  }

  /** Queued messages last put on the queue before `before`, oldest first: the dispatcher checks that their job still exists. */
  async queuedBefore(before: Date, limit: number): Promise<{ id: string; eventId: string | null }[]> {
    return this.db.client.mailMessage.findMany({ where: { status: 'queued', queuedAt: { lt: before } }, orderBy: { queuedAt: 'asc' }, take: limit, select: { id: true, eventId: true } });
  }

  async markQueued(ids: readonly string[], at: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.db.client.mailMessage.updateMany({ where: { id: { in: [...ids] }, status: 'queued' }, data: { queuedAt: at } });
  }

  /** Records of messages that ended (sent, failed, skipped) before `before`, at most `batch`. */
  async deleteEndedBefore(before: Date, batch: number): Promise<number> {
    return this.db.client.$executeRaw`
      DELETE FROM mail_messages WHERE id IN (
        SELECT id FROM mail_messages WHERE created_at < ${before} AND status <> 'queued' LIMIT ${batch})`;
  }
}
