import { Inject, Injectable } from '@nestjs/common';
import type { AlertEventType, AuditActor } from '@svc/contracts';
import { appendAudit } from '../audit/audit.repository';
import { DatabaseRepository } from '../db/database.repository';

/** The owner's choices of mail per alert event type (notification_settings; absent: the default). */
@Injectable()
export class NotificationsRepository {
  constructor(@Inject(DatabaseRepository) private readonly db: DatabaseRepository) {}

  /** The account's stored choices, by event type. */
  async choices(accountId: string): Promise<Map<string, boolean>> {
    const rows = await this.db.client.notificationSetting.findMany({ where: { accountId }, select: { eventType: true, email: true } });
    return new Map(rows.map((r) => [r.eventType, r.email]));
  }

  /**
   * Stores a choice and its audit entry in one transaction when it changes what the account
   * gets (`before`: the stored choice or the default); an unchanged choice writes nothing.
   */
  async setEmail(accountId: string, eventType: AlertEventType, email: boolean, byDefault: boolean, actor: AuditActor): Promise<void> {
    await this.db.client.$transaction(async (tx) => {
      const current = await tx.$queryRaw<{ email: boolean }[]>`
        SELECT email FROM notification_settings WHERE account_id = ${accountId} AND event_type = ${eventType} FOR UPDATE`;
      const before = current[0]?.email ?? byDefault;
      const now = new Date();
      await tx.notificationSetting.upsert({
        where: { accountId_eventType: { accountId, eventType } },
        create: { accountId, eventType, email, updatedAt: now },
        update: { email, updatedAt: now },
      });
      if (before === email) return;
      await appendAudit(tx, { accountId, actor, action: 'notification_settings.update', targetId: eventType, changes: { email: { before, after: email } } });
    });
  }
}
