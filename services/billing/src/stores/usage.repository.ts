import type { Micros } from '@svc/money';
import { Prisma } from '../generated/prisma/client';
import type { PrismaClient } from '../generated/prisma/client';

export interface UsageFilter {
  accountId: string;
  /** Inclusive start and exclusive end of the period. */
  start: Date;
  end: Date;
  keyId: string | null;
}

export interface UsageRow {
  group: string;
  searches: number;
  failedAttempts: number;
  costMicros: Micros;
  /** The part of costMicros that BYOK attempts were charged (the fee). */
  byokFeeMicros: Micros;
  /** Searches answered from the result cache (`hit` or `joined`). */
  cacheHits: number;
  /** What those answers saved against the provider's price of the same answers. */
  cacheSavedMicros: Micros;
}

interface RawRow {
  grp: string;
  searches: bigint;
  failed: bigint;
  cost: bigint;
  byok: bigint;
  hits: bigint;
  saved: bigint;
}

function rowOf(raw: RawRow): UsageRow {
  return {
    group: raw.grp, searches: Number(raw.searches), failedAttempts: Number(raw.failed), costMicros: Number(raw.cost), byokFeeMicros: Number(raw.byok),
    cacheHits: Number(raw.hits), cacheSavedMicros: Number(raw.saved),
  };
}

/**
 * Usage read from what the ledger worker wrote: settlements (one per search; its charge is
 * the search_charge entry's amount) and usage_events (one per attempt). The period is on
 * settled_at; every figure comes from the same rows, so the totals equal the ledger's.
 */
export class UsageRepository {
  constructor(private readonly prisma: PrismaClient) {}

  private settled(filter: UsageFilter): Prisma.Sql {
    const byKey = filter.keyId === null ? Prisma.empty : Prisma.sql`AND key_id = ${filter.keyId}`;
    return Prisma.sql`
      SELECT request_id, key_id, charged_micros, settled_at, request_kind FROM settlements
      WHERE account_id = ${filter.accountId} AND settled_at >= ${filter.start} AND settled_at < ${filter.end} ${byKey}`;
  }

  /** Per UTC day, per key or per kind of request (search, extract): requests, their failed attempts, and their charges. */
  async bySearch(filter: UsageFilter, grouping: 'day' | 'key' | 'kind'): Promise<UsageRow[]> {
    const group = grouping === 'day' ? Prisma.sql`to_char(s.settled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')` : grouping === 'key' ? Prisma.sql`s.key_id` : Prisma.sql`s.request_kind`;
    const rows = await this.prisma.$queryRaw<RawRow[]>`
      WITH s AS (${this.settled(filter)}),
      f AS (
        SELECT u.request_id, count(*) FILTER (WHERE u.status = 'error') AS failed,
          coalesce(sum(u.charged_micros) FILTER (WHERE u.source = 'byok'), 0) AS byok,
          count(*) FILTER (WHERE u.cache IN ('hit', 'joined')) AS hits, coalesce(sum(u.saved_micros), 0) AS saved
        FROM usage_events u JOIN s ON s.request_id = u.request_id GROUP BY u.request_id)
      SELECT ${group} AS grp, count(*) AS searches, coalesce(sum(f.failed), 0)::bigint AS failed,
        coalesce(sum(s.charged_micros), 0)::bigint AS cost, coalesce(sum(f.byok), 0)::bigint AS byok,
        coalesce(sum(f.hits), 0)::bigint AS hits, coalesce(sum(f.saved), 0)::bigint AS saved
      FROM s LEFT JOIN f ON f.request_id = s.request_id
      GROUP BY 1 ORDER BY 1`;
    return rows.map(rowOf);
  }

  /**
   * Per model: a search counts once, for the model of its final attempt (the one that
   * answered, else the last one tried); failed attempts and charges are per attempt.
   */
  async byModel(filter: UsageFilter): Promise<UsageRow[]> {
    const rows = await this.prisma.$queryRaw<RawRow[]>`
      WITH s AS (${this.settled(filter)}),
      u AS (SELECT u.request_id, u.attempt_index, u.model, u.status, u.source, u.charged_micros, u.cache, u.saved_micros FROM usage_events u JOIN s ON s.request_id = u.request_id),
      fin AS (
        SELECT DISTINCT ON (request_id) request_id, model FROM u
        ORDER BY request_id, (status = 'success') DESC, (status <> 'skipped') DESC, attempt_index DESC),
      per_model AS (
        SELECT model, count(*) FILTER (WHERE status = 'error') AS failed, coalesce(sum(charged_micros), 0)::bigint AS cost,
          coalesce(sum(charged_micros) FILTER (WHERE source = 'byok'), 0)::bigint AS byok,
          count(*) FILTER (WHERE cache IN ('hit', 'joined')) AS hits, coalesce(sum(saved_micros), 0)::bigint AS saved FROM u GROUP BY model),
      searches AS (SELECT model, count(*) AS n FROM fin GROUP BY model)
      SELECT p.model AS grp, coalesce(n.n, 0)::bigint AS searches, p.failed, p.cost, p.byok, p.hits, p.saved
      FROM per_model p LEFT JOIN searches n ON n.model = p.model
      ORDER BY 1`;
    return rows.map(rowOf);
  }

  /** The period's searches and charges, as the ledger has them. */
  async total(filter: UsageFilter): Promise<{ searches: number; costMicros: Micros; byokFeeMicros: Micros; cacheHits: number; cacheSavedMicros: Micros }> {
    const rows = await this.prisma.$queryRaw<{ searches: bigint; cost: bigint; byok: bigint; hits: bigint; saved: bigint }[]>`
      WITH s AS (${this.settled(filter)}),
      u AS (SELECT u.source, u.charged_micros, u.cache, u.saved_micros FROM usage_events u JOIN s ON s.request_id = u.request_id)
      SELECT count(*) AS searches, coalesce(sum(charged_micros), 0)::bigint AS cost,
        (SELECT coalesce(sum(charged_micros), 0) FROM u WHERE source = 'byok')::bigint AS byok,
        (SELECT count(*) FROM u WHERE cache IN ('hit', 'joined'))::bigint AS hits,
        (SELECT coalesce(sum(saved_micros), 0) FROM u)::bigint AS saved
      FROM s`;
    const row = rows[0];
    return {
      searches: Number(row?.searches ?? 0n), costMicros: Number(row?.cost ?? 0n), byokFeeMicros: Number(row?.byok ?? 0n),
      cacheHits: Number(row?.hits ?? 0n), cacheSavedMicros: Number(row?.saved ?? 0n),
    };
  }
}
