import type { RequestKind, SearchFilters } from '@svc/contracts';
import type { Micros } from '@svc/money';
import type { PageMark } from '../common/pages';
import { Prisma } from '../generated/prisma/client';
import type { PrismaClient } from '../generated/prisma/client';

export interface AttemptRow {
  requestId: string;
  attemptIndex: number;
  model: string;
  provider: string;
  source: string;
  status: string;
  error: string | null;
  chargedMicros: Micros;
  timedOut: boolean;
  results: number;
  /** The result cache's part in an answered attempt (hit, joined, miss, off); null otherwise and before the cache. */
  cache: string | null;
  savedMicros: Micros;
}

export interface SearchRow {
  requestId: string;
  keyId: string;
  /** The search's filters as recorded (canonical), or null without filters. */
  filters: SearchFilters | null;
  /** search or extract (docs/decisions/0058). */
  kind: RequestKind;
  chargedMicros: Micros;
  settledAt: Date;
  /** settled_at exactly, for the next page's cursor. */
  mark: PageMark;
  attempts: AttemptRow[];
}

export interface PurchaseRow {
  id: string;
  status: string;
  creditMicros: Micros;
  refundedMicros: Micros;
  disputedMicros: Micros;
  createdAt: Date;
  paidAt: Date | null;
  mark: PageMark;
}

interface RawSearch {
  request_id: string;
  key_id: string;
  filters: SearchFilters | null;
  request_kind: string;
  charged_micros: bigint;
  settled_at: Date;
  at_us: bigint;
}

interface RawAttempt {
  request_id: string;
  attempt_index: number;
  model: string;
  provider: string;
  source: string;
  status: string;
  error: string | null;
  charged_micros: bigint;
  timed_out: boolean;
  results: number;
  cache: string | null;
  saved_micros: bigint;
}

interface RawPurchase {
  id: string;
  status: string;
  credit_micros: bigint;
  refunded_micros: bigint;
  disputed_micros: bigint;
  created_at: Date;
  paid_at: Date | null;
  at_us: bigint;
}

export interface DailyModelRow {
  day: string;
  model: string;
  attempts: number;
  costMicros: Micros;
}

/** An account's settled searches (with their attempts) and its checkout sessions, newest first. */
export class HistoryRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** At most `limit` searches settled before `after` (keyset on settled_at, request_id). */
  async searches(accountId: string, limit: number, after: PageMark | null): Promise<SearchRow[]> {
    const before = after === null ? Prisma.empty : Prisma.sql`AND (settled_at, request_id) < (timestamptz 'epoch' + ${after.atMicros} * interval '1 microsecond', ${after.id})`;
    const searches = await this.prisma.$queryRaw<RawSearch[]>`
      SELECT request_id, key_id, charged_micros, settled_at, filters, request_kind,
        (extract(epoch FROM settled_at) * 1000000)::bigint AS at_us FROM settlements
      WHERE account_id = ${accountId} ${before}
      ORDER BY settled_at DESC, request_id DESC LIMIT ${limit}`;
    if (searches.length === 0) return [];
    const attempts = await this.prisma.$queryRaw<RawAttempt[]>`
      SELECT request_id, attempt_index, model, provider, source, status, error, charged_micros, timed_out, results, cache, saved_micros
      FROM usage_events WHERE request_id IN (${Prisma.join(searches.map((s) => s.request_id))})
      ORDER BY request_id, attempt_index`;
    const byRequest = new Map<string, AttemptRow[]>();
    for (const a of attempts) {
      const list = byRequest.get(a.request_id) ?? [];
      list.push({
        requestId: a.request_id, attemptIndex: a.attempt_index, model: a.model, provider: a.provider, source: a.source,
        status: a.status, error: a.error, chargedMicros: Number(a.charged_micros), timedOut: a.timed_out, results: a.results,
        cache: a.cache, savedMicros: Number(a.saved_micros),
      });
      byRequest.set(a.request_id, list);
    }
    return searches.map((s) => ({
      requestId: s.request_id, keyId: s.key_id, filters: s.filters, kind: s.request_kind === 'extract' || s.request_kind === 'research' ? s.request_kind : 'search', chargedMicros: Number(s.charged_micros), settledAt: s.settled_at, mark: { atMicros: s.at_us, id: s.request_id },
      attempts: byRequest.get(s.request_id) ?? [],
    }));
  }

  /** Charges per UTC day and model (per attempt, as GET /v1/usage by model counts them) in [start, end). */
  async dailyByModel(accountId: string, start: Date, end: Date): Promise<DailyModelRow[]> {
    const rows = await this.prisma.$queryRaw<{ day: string; model: string; attempts: bigint; cost: bigint }[]>`
      SELECT to_char(s.settled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, u.model,
        count(*) FILTER (WHERE u.status <> 'skipped') AS attempts, coalesce(sum(u.charged_micros), 0)::bigint AS cost
      FROM settlements s JOIN usage_events u ON u.request_id = s.request_id
      WHERE s.account_id = ${accountId} AND s.settled_at >= ${start} AND s.settled_at < ${end}
      GROUP BY 1, 2 ORDER BY 1, 2`;
    return rows.map((r) => ({ day: r.day, model: r.model, attempts: Number(r.attempts), costMicros: Number(r.cost) }));
  }

  /** At most `limit` checkout sessions created before `after` (keyset on created_at, id). */
  async purchases(accountId: string, limit: number, after: PageMark | null): Promise<PurchaseRow[]> {
    const before = after === null ? Prisma.empty : Prisma.sql`AND (created_at, id) < (timestamptz 'epoch' + ${after.atMicros} * interval '1 microsecond', ${after.id})`;
    const rows = await this.prisma.$queryRaw<RawPurchase[]>`
      SELECT id, status, credit_micros, refunded_micros, disputed_micros, created_at, paid_at,
        (extract(epoch FROM created_at) * 1000000)::bigint AS at_us FROM checkout_sessions
      WHERE account_id = ${accountId} ${before}
      ORDER BY created_at DESC, id DESC LIMIT ${limit}`;
    return rows.map((r) => ({
      id: r.id, status: r.status, creditMicros: Number(r.credit_micros), refundedMicros: Number(r.refunded_micros),
      disputedMicros: Number(r.disputed_micros), createdAt: r.created_at, paidAt: r.paid_at, mark: { atMicros: r.at_us, id: r.id },
    }));
  }
}
