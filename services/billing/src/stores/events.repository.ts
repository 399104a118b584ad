import type { WebhookEventType } from '@svc/contracts';
import { newId } from '@svc/ids';
import type { Tx } from '../db/transactions';
import { Prisma } from '../generated/prisma/client';
import type { PrismaClient } from '../generated/prisma/client';
import type { PageMark } from '../common/pages';

export interface NewEvent {
  accountId: string;
  type: WebhookEventType;
  data: Record<string, unknown>;
}

export interface EventRow {
  id: string;
  accountId: string;
  type: string;
  data: unknown;
  createdAt: Date;
  mark: PageMark;
}

interface RawEvent {
  id: string;
  account_id: string;
  type: string;
  data: unknown;
  created_at: Date;
  at_us: bigint;
}

const fromRaw = (r: RawEvent): EventRow => ({ id: r.id, accountId: r.account_id, type: r.type, data: r.data, createdAt: r.created_at, mark: { atMicros: r.at_us, id: r.id } });

/** The account's events: written in the transaction of what caused them, read newest first (keyset on created_at, id). */
export class EventsRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /**
   * Writes an event and one pending delivery per enabled endpoint of the account subscribed to
   * its type, in the caller's transaction: the event exists exactly when what caused it
   * committed, and its deliveries with it (a transactional outbox: the worker's dispatch
   * queues them). Returns the event's id.
   */
  async emit(tx: Tx, event: NewEvent): Promise<string> {
    const id = newId('event');
    await tx.$executeRaw`
      INSERT INTO events (id, account_id, type, data, created_at)
      VALUES (${id}, ${event.accountId}, ${event.type}, ${JSON.stringify(event.data)}::jsonb, clock_timestamp())`;
    const endpoints = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM webhook_endpoints WHERE account_id = ${event.accountId} AND enabled AND ${event.type} = ANY(events)`;
    for (const endpoint of endpoints) {
      await tx.$executeRaw`
        INSERT INTO webhook_deliveries (id, event_id, endpoint_id, account_id, status)
        VALUES (${newId('webhookDelivery')}, ${id}, ${endpoint.id}, ${event.accountId}, 'pending')`;
    }
    return id;
  }

  /**
   * Alert events not handed to account-admin's mail queue yet, oldest first (the partial index
   * `events_mail_unqueued_idx` of the migration 20261208100000_alert_mail, whose type list is
   * ALERT_EVENT_TYPES: a test compares them).
   */
  async alertsToMail(types: readonly string[], limit: number): Promise<EventRow[]> {
    const rows = await this.prisma.$queryRaw<RawEvent[]>`
      SELECT id, account_id, type, data, created_at, (extract(epoch FROM created_at) * 1000000)::bigint AS at_us FROM events
      WHERE mail_queued_at IS NULL AND type IN (${Prisma.join([...types])})
      ORDER BY created_at LIMIT ${limit}`;
    return rows.map(fromRaw);
  }

  /** Marks alerts handed over (their jobs are on the mail queue). */
  async markMailQueued(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.prisma.$executeRaw`UPDATE events SET mail_queued_at = clock_timestamp() WHERE id IN (${Prisma.join([...ids])}) AND mail_queued_at IS NULL`;
  }

  async list(accountId: string, limit: number, after: PageMark | null, type: string | null): Promise<EventRow[]> {
    const before = after === null ? Prisma.empty : Prisma.sql`AND (created_at, id) < (timestamptz 'epoch' + ${after.atMicros} * interval '1 microsecond', ${after.id})`;
    const ofType = type === null ? Prisma.empty : Prisma.sql`AND type = ${type}`;
    const rows = await this.prisma.$queryRaw<RawEvent[]>`
      SELECT id, account_id, type, data, created_at, (extract(epoch FROM created_at) * 1000000)::bigint AS at_us FROM events
      WHERE account_id = ${accountId} ${ofType} ${before}
      ORDER BY created_at DESC, id DESC LIMIT ${limit}`;
    return rows.map(fromRaw);
  }

  async get(accountId: string, id: string): Promise<EventRow | null> {
    const rows = await this.prisma.$queryRaw<RawEvent[]>`
      SELECT id, account_id, type, data, created_at, (extract(epoch FROM created_at) * 1000000)::bigint AS at_us FROM events
      WHERE account_id = ${accountId} AND id = ${id}`;
    const row = rows[0];
    return row === undefined ? null : fromRaw(row);
  }
}
