import { Prisma } from '../generated/prisma/client';
import type { PrismaClient } from '../generated/prisma/client';
import type { PageMark } from '../services/history/history-page';

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

/** The account's events, newest first (keyset on created_at, id). */
export class EventsRepository {
  constructor(private readonly prisma: PrismaClient) {}

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
