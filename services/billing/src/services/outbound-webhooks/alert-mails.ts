import { ALERT_EVENT_TYPES, isAlertEventType } from '@svc/contracts';
import type { AlertEvent } from '@svc/contracts';
import type { AlertMailQueue } from '../../adapters/mail-queue.adapter';
import type { EventsRepository } from '../../stores/events.repository';

const BATCH = 500;

/**
 * Alerts by email (docs/decisions/0054): every alert event (balance.low, key.limit.threshold,
 * auto_topup.*) is handed to account-admin's mail queue once it committed, however it was made
 * (a threshold check, a top-up, a webhook from Stripe): the events table is the outbox, and an
 * event is marked only after its job was added. account-admin records each event once, looks up
 * the owner's address and choice, and mails it or not. Webhooks are not involved: an event's
 * deliveries are written with it (EventsRepository.emit).
 */
export class AlertMails {
  constructor(
    private readonly events: Pick<EventsRepository, 'alertsToMail' | 'markMailQueued'>,
    private readonly queue: Pick<AlertMailQueue, 'add'>,
  ) {}

  /** One batch handed over; answers how many events. */
  async handOver(): Promise<number> {
    const rows = await this.events.alertsToMail(ALERT_EVENT_TYPES, BATCH);
    const alerts: AlertEvent[] = [];
    for (const row of rows) {
      if (!isAlertEventType(row.type)) continue;
      alerts.push({ id: row.id, type: row.type, account_id: row.accountId, created_at: row.createdAt.toISOString(), data: (row.data ?? {}) as AlertEvent['data'] });
    }
    await this.queue.add(alerts);
    await this.events.markMailQueued(rows.map((r) => r.id));
    return rows.length;
  }
}
