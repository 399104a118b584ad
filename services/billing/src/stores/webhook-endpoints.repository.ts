import { randomBytes } from 'node:crypto';
import { WEBHOOK_SECRET_OVERLAP_MS } from '@svc/contracts';
import { newId } from '@svc/ids';
import { Prisma } from '../generated/prisma/client';
import type { PrismaClient } from '../generated/prisma/client';
import type { Tx } from '../db/transactions';
import type { PageMark } from '../common/pages';

export interface EndpointRow {
  id: string;
  accountId: string;
  url: string;
  events: string[];
  enabled: boolean;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  failingSince: Date | null;
  disabledReason: string | null;
  createdAt: Date;
  updatedAt: Date;
  mark: PageMark;
}

interface RawEndpoint {
  id: string;
  account_id: string;
  url: string;
  events: string[];
  enabled: boolean;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
  at_us: bigint;
}

export interface DeliveryRow {
  id: string;
  eventId: string;
  eventType: string;
  status: string;
  attempts: number;
  createdAt: Date;
  lastAttemptAt: Date | null;
  mark: PageMark;
  history: { attemptedAt: Date; statusCode: number | null; error: string | null; durationMs: number; responseHead: string | null }[];
}

const COLUMNS = Prisma.sql`id, account_id, url, events, enabled, secret, previous_secret, previous_secret_expires_at, failing_since, disabled_reason,
  created_at, updated_at, (extract(epoch FROM created_at) * 1000000)::bigint AS at_us`;

function fromRaw(r: RawEndpoint): EndpointRow {
  return {
    id: r.id, accountId: r.account_id, url: r.url, events: r.events, enabled: r.enabled, secret: r.secret, previousSecret: r.previous_secret,
    previousSecretExpiresAt: r.previous_secret_expires_at, failingSince: r.failing_since, disabledReason: r.disabled_reason,
    createdAt: r.created_at, updatedAt: r.updated_at, mark: { atMicros: r.at_us, id: r.id },
  };
}

/** A new signing secret: `whsec_` and 32 random bytes, base64url. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** webhook_endpoints and their deliveries, always scoped to one account. */
export class EndpointsRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** Inserts an endpoint unless the account already has `max` (null then), in `tx`. Serialised per account by an advisory lock. */
  async create(tx: Tx, accountId: string, input: { url: string; events: string[]; enabled: boolean }, max: number): Promise<EndpointRow | null> {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('webhook_endpoints'), hashtext(${accountId}))`;
    const count = await tx.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM webhook_endpoints WHERE account_id = ${accountId}`;
    if (Number(count[0]?.n ?? 0) >= max) return null;
    const rows = await tx.$queryRaw<RawEndpoint[]>`
      INSERT INTO webhook_endpoints (id, account_id, url, events, enabled, secret, created_at, updated_at)
      VALUES (${newId('webhookEndpoint')}, ${accountId}, ${input.url}, ${input.events}::text[], ${input.enabled}, ${newSecret()}, clock_timestamp(), clock_timestamp())
      RETURNING ${COLUMNS}`;
    const row = rows[0];
    if (row === undefined) throw new Error('insert returned no row');
    return fromRaw(row);
  }

  /** The endpoint, locked for a change in `tx`; null when the account has no such endpoint. */
  async lockOne(tx: Tx, accountId: string, id: string): Promise<EndpointRow | null> {
    const rows = await tx.$queryRaw<RawEndpoint[]>`SELECT ${COLUMNS} FROM webhook_endpoints WHERE account_id = ${accountId} AND id = ${id} FOR UPDATE`;
    const row = rows[0];
    return row === undefined ? null : fromRaw(row);
  }

  async list(accountId: string, limit: number, after: PageMark | null): Promise<EndpointRow[]> {
    const before = after === null ? Prisma.empty : Prisma.sql`AND (created_at, id) < (timestamptz 'epoch' + ${after.atMicros} * interval '1 microsecond', ${after.id})`;
    const rows = await this.prisma.$queryRaw<RawEndpoint[]>`
      SELECT ${COLUMNS} FROM webhook_endpoints WHERE account_id = ${accountId} ${before} ORDER BY created_at DESC, id DESC LIMIT ${limit}`;
    return rows.map(fromRaw);
  }

  async get(accountId: string, id: string): Promise<EndpointRow | null> {
    const rows = await this.prisma.$queryRaw<RawEndpoint[]>`SELECT ${COLUMNS} FROM webhook_endpoints WHERE account_id = ${accountId} AND id = ${id}`;
    const row = rows[0];
    return row === undefined ? null : fromRaw(row);
  }

  async update(tx: Tx, accountId: string, id: string, change: { url?: string; events?: string[]; enabled?: boolean }): Promise<EndpointRow | null> {
    const sets: Prisma.Sql[] = [Prisma.sql`updated_at = clock_timestamp()`];
    if (change.url !== undefined) sets.push(Prisma.sql`url = ${change.url}`);
    if (change.events !== undefined) sets.push(Prisma.sql`events = ${change.events}::text[]`);
    if (change.enabled !== undefined) {
      sets.push(Prisma.sql`enabled = ${change.enabled}`);
      // The owner's say replaces billing's: enabling forgets the failure, disabling is the owner's.
      sets.push(Prisma.sql`disabled_reason = NULL`, Prisma.sql`failing_since = NULL`);
    }
    const rows = await tx.$queryRaw<RawEndpoint[]>`
      UPDATE webhook_endpoints SET ${Prisma.join(sets, ', ')} WHERE account_id = ${accountId} AND id = ${id} RETURNING ${COLUMNS}`;
    const row = rows[0];
    return row === undefined ? null : fromRaw(row);
  }

  /** Deletes the endpoint in `tx`; its pending deliveries are cancelled (the worker skips them). */
  async delete(tx: Tx, accountId: string, id: string): Promise<boolean> {
    const deleted = await tx.$executeRaw`DELETE FROM webhook_endpoints WHERE account_id = ${accountId} AND id = ${id}`;
    if (deleted > 0) await tx.$executeRaw`UPDATE webhook_deliveries SET status = 'cancelled' WHERE endpoint_id = ${id} AND status = 'pending'`;
    return deleted > 0;
  }

  /** A new secret, in `tx`; the current one becomes the previous, valid WEBHOOK_SECRET_OVERLAP_MS more. */
  async rotate(tx: Tx, accountId: string, id: string): Promise<EndpointRow | null> {
    const rows = await tx.$queryRaw<RawEndpoint[]>`
      UPDATE webhook_endpoints SET previous_secret = secret, secret = ${newSecret()},
        previous_secret_expires_at = clock_timestamp() + ${WEBHOOK_SECRET_OVERLAP_MS} * interval '1 millisecond', updated_at = clock_timestamp()
      WHERE account_id = ${accountId} AND id = ${id} RETURNING ${COLUMNS}`;
    const row = rows[0];
    return row === undefined ? null : fromRaw(row);
  }

  async deliveries(accountId: string, endpointId: string, limit: number, after: PageMark | null): Promise<DeliveryRow[]> {
    const before = after === null ? Prisma.empty : Prisma.sql`AND (d.created_at, d.id) < (timestamptz 'epoch' + ${after.atMicros} * interval '1 microsecond', ${after.id})`;
    const rows = await this.prisma.$queryRaw<{ id: string; event_id: string; type: string; status: string; attempts: number; created_at: Date; last_attempt_at: Date | null; at_us: bigint }[]>`
      SELECT d.id, d.event_id, e.type, d.status, d.attempts, d.created_at, d.last_attempt_at, (extract(epoch FROM d.created_at) * 1000000)::bigint AS at_us
      FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
      WHERE d.account_id = ${accountId} AND d.endpoint_id = ${endpointId} ${before}
      ORDER BY d.created_at DESC, d.id DESC LIMIT ${limit}`;
    if (rows.length === 0) return [];
    const attempts = await this.prisma.$queryRaw<{ delivery_id: string; attempted_at: Date; status_code: number | null; error: string | null; duration_ms: number; response_head: string | null }[]>`
      SELECT delivery_id, attempted_at, status_code, error, duration_ms, response_head FROM webhook_attempts
      WHERE delivery_id = ANY(${rows.map((r) => r.id)}::text[]) ORDER BY attempted_at, id`;
    return rows.map((r) => ({
      id: r.id, eventId: r.event_id, eventType: r.type, status: r.status, attempts: r.attempts, createdAt: r.created_at, lastAttemptAt: r.last_attempt_at,
      mark: { atMicros: r.at_us, id: r.id },
      history: attempts.filter((a) => a.delivery_id === r.id).map((a) => ({
        attemptedAt: a.attempted_at, statusCode: a.status_code, error: a.error, durationMs: a.duration_ms, responseHead: a.response_head,
      })),
    }));
  }

  /**
   * A manual redeliver: the delivery is pending again with a fresh retry window, in a new
   * generation (so its BullMQ job id is new), and the dispatcher enqueues it.
   */
  async redeliver(accountId: string, endpointId: string, deliveryId: string): Promise<boolean> {
    const changed = await this.prisma.$executeRaw`
      UPDATE webhook_deliveries SET status = 'pending', queued_at = NULL, first_attempt_at = NULL, generation = generation + 1
      WHERE account_id = ${accountId} AND endpoint_id = ${endpointId} AND id = ${deliveryId}
        AND EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = ${endpointId} AND account_id = ${accountId})`;
    return changed > 0;
  }
}
