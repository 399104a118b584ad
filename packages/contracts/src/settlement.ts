import type { Provider } from './catalog';
import type { SearchFilters } from './filters';

/**
 * The hand-off from the gateway to billing. The gateway's settle script (one atomic Redis
 * script, run before the reply) moves the spendable balance and appends one record per search
 * to the account's settlement stream (redisKeys.settlementStream, field SETTLEMENT_FIELD), and
 * in the same pipelined round trip adds the account to SETTLEMENT_DIRTY_SET. Billing's ledger
 * worker drains dirty accounts' streams in batches into PostgreSQL, idempotent on
 * (request_id, attempt index), and a periodic sweep of every stream catches an account whose
 * dirty mark was lost. A search that answered is therefore always billed, even if the
 * gateway dies right after replying.
 */
export interface SettledAttempt {
  /** Position in the search's attempt list, from 0. */
  index: number;
  model: string;
  provider: Provider;
  source: 'platform' | 'byok';
  status: 'success' | 'error' | 'skipped';
  /** Short reason for error and skipped attempts; null on success. */
  error: string | null;
  /** What was held against the balance before the call (0 when skipped). */
  reservedMicros: number;
  /** What the account pays for this attempt: the price on success, the base price on a timeout, else 0. */
  chargedMicros: number;
  timedOut: boolean;
  /** Results returned (success only, else 0). */
  results: number;
  /**
   * How the result cache took part (success only; absent from records written before the
   * cache, and on error and skipped attempts): `hit` (a stored answer), `joined` (the answer
   * of an identical search in flight), `miss` (the provider answered), `off` (not looked up).
   */
  cache?: CacheStatus;
  /** What a `hit` or `joined` attempt saved against the price of the same answer from the provider (else 0 or absent). */
  savedMicros?: number;
}

/** How the result cache took part in a search's answer (docs/api.md, the result cache). */
export const CACHE_STATUSES = ['hit', 'miss', 'joined', 'off'] as const;
export type CacheStatus = (typeof CACHE_STATUSES)[number];

export interface SettlementRecord {
  v: 1;
  requestId: string;
  accountId: string;
  keyId: string;
  /** Unix ms when the gateway settled. */
  settledAtMs: number;
  attempts: SettledAttempt[];
  /** Sum of the attempts' chargedMicros. */
  chargedMicros: number;
  /** The search's W3C traceparent when the gateway traces (the ledger worker's write joins that trace). */
  traceparent?: string;
  /**
   * The filters the search was made with, in canonical form (canonicalFilters); absent when
   * it had none, and on records of gateways older than filters. Shown in the dashboard's
   * activity; never part of the money (docs/decisions/0022, "What a search's record keeps").
   */
  filters?: SearchFilters;
  /**
   * What the request was: absent for a search (every record written before extracts, and
   * every search since: a search's record is the same bytes as before), `extract` for
   * POST /v1/extract (docs/decisions/0058). Billing keeps it with the settlement, its usage
   * events and its charge entries.
   */
  kind?: 'extract';
}

/** The kinds a gateway's settlement record can be: a search or an extract. */
export const RECORD_KINDS = ['search', 'extract'] as const;

/**
 * What a settled request was: a search (POST /v1/search, MCP web_search), an extract
 * (POST /v1/extract, MCP web_fetch), or a research run (POST /v1/research, MCP deep_research:
 * settled by billing's research worker, never by a gateway's record; docs/decisions/0062).
 */
export const REQUEST_KINDS = [...RECORD_KINDS, 'research'] as const;
export type RequestKind = (typeof REQUEST_KINDS)[number];

/** The kind of a settlement record: a record without one is a search. */
export function recordKind(record: Pick<SettlementRecord, 'kind'>): (typeof RECORD_KINDS)[number] {
  return record.kind ?? 'search';
}

/**
 * A search's reservation hash ({a:X}:rsv:<request id>) lives for the search's running bound
 * plus this grace, renewed on every attempt (the gateway sets it; billing's reconciliation reads
 * `grace - PTTL` as how long a search has overrun its bound: its gateway is gone or stuck).
 */
export const RESERVATION_TTL_GRACE_MS = 3_600_000;

/** Stream entry field that holds the JSON SettlementRecord. */
export const SETTLEMENT_FIELD = 'r';

/** Account ids whose settlement stream has entries to drain. Not account-tagged: written in its own command. */
export const SETTLEMENT_DIRTY_SET = 'svc:settle:dirty';

/**
 * Account ids whose settlement stream a ledger worker took from SETTLEMENT_DIRTY_SET and has
 * not yet found empty (docs/decisions/0036): with the dirty set, every stream the gateways
 * marked, so the backlog and the sweep find them without a SCAN of the keyspace. Its hash tag
 * is the dirty set's whole name, so both share one hash slot and a pop moves accounts from
 * one to the other in one script on Redis Cluster too.
 */
export const SETTLEMENT_STREAMS_SET = `{${SETTLEMENT_DIRTY_SET}}:streams`;

/** The BullMQ queue of the ledger worker, and its job names and payloads. */
export const LEDGER_QUEUE = 'ledger';

/** The ledger worker's reconciliation queue (its own, so the ledger queue's job names stay a closed list). */
export const RECONCILE_QUEUE = 'billing-reconcile';

/**
 * The key prefix of every BullMQ queue (`prefix` of Queue and Worker). BullMQ's scripts use
 * several keys of one queue at once; on Redis Cluster they must share a hash slot, which the
 * hash tag `{ledger}` makes so (without it: CROSSSLOT). The same prefix on a single Redis,
 * so both topologies store the queues under the same names.
 */
export const QUEUE_PREFIX = '{ledger}';

export const LEDGER_JOBS = {
  /** Repeating: drain the dirty accounts' settlement streams. */
  drain: 'drain',
  /** Repeating: scan every settlement stream for entries whose dirty mark was lost. */
  sweep: 'sweep',
} as const;

export type LedgerJobName = (typeof LEDGER_JOBS)[keyof typeof LEDGER_JOBS];

/** Payloads of the ledger jobs (both carry nothing: the work is in the streams). */
export type LedgerJobPayload = Record<string, never>;

export function isSettlementRecord(value: unknown): value is SettlementRecord {
  if (typeof value !== 'object' || value === null) return false;
  const r = value as Record<string, unknown>;
  return r.v === 1 && typeof r.requestId === 'string' && typeof r.accountId === 'string'
    && typeof r.keyId === 'string' && typeof r.settledAtMs === 'number' && Array.isArray(r.attempts)
    && typeof r.chargedMicros === 'number';
}
