import type { ResearchAttemptStatus, ResearchProvider, ResearchStatus } from '@svc/contracts';
import type { Micros } from '@svc/money';
import { toMicros } from '../db/account-lock';
import type { Tx } from '../db/transactions';
import { Prisma } from '../generated/prisma/client';
import type { PrismaClient } from '../generated/prisma/client';
import type { PageMark } from '../common/pages';

/** One attempt of a run as stored (research_runs.attempts, a JSON array in fallback order). */
export interface StoredAttempt {
  model: string;
  provider: ResearchProvider;
  status: ResearchAttemptStatus;
  /** Why it was skipped or failed, or how it was cancelled; null otherwise. */
  error: string | null;
  /** The most it may be charged (set when it is started). */
  ceilingMicros: Micros | null;
  /** A metered model's budget sent to the provider, provider micro-USD. */
  providerBudgetMicros: Micros | null;
  providerRunId: string | null;
  /** What the provider charged for it (its report), provider micro-USD. */
  providerCostMicros: Micros | null;
  /** What the run is charged for it: min(its ceiling, the report at our rate). */
  chargedMicros: Micros | null;
  /** The report at our rate before the ceiling (a capped attempt has more here than charged). */
  atRateMicros: Micros | null;
  /** Tries to start it the provider refused for a passing reason (429, 5xx, unreachable). */
  startTries: number;
  /** Polls made while it ran. */
  polls: number;
  startedAt: string | null;
  endedAt: string | null;
}

export interface ResearchOutput {
  text: string | null;
  structured: unknown;
}

export interface ResearchSource {
  url: string;
  title: string | null;
}

export interface ResearchRunRow {
  id: string;
  accountId: string;
  keyId: string;
  input: string;
  models: string[];
  outputSchema: unknown;
  metadata: Record<string, string> | null;
  maxCostMicros: Micros;
  heldMicros: Micros;
  status: ResearchStatus;
  attempts: StoredAttempt[];
  currentAttempt: number | null;
  output: ResearchOutput | null;
  sources: ResearchSource[] | null;
  costMicros: Micros | null;
  providerCostMicros: Micros | null;
  error: string | null;
  idempotencyKey: string | null;
  requestDigest: string | null;
  cancelRequestedAt: Date | null;
  startedAt: Date | null;
  completedAt: Date | null;
  settledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  mark: PageMark;
}

export interface NewResearchRun {
  id: string;
  accountId: string;
  keyId: string;
  input: string;
  models: readonly string[];
  outputSchema: unknown;
  metadata: Record<string, string> | null;
  maxCostMicros: Micros;
  heldMicros: Micros;
  attempts: readonly StoredAttempt[];
  currentAttempt: number | null;
  idempotencyKey: string | null;
  requestDigest: string | null;
}

/** What a step of the worker changes on a run it holds. */
export interface RunChange {
  status?: ResearchStatus;
  attempts?: readonly StoredAttempt[];
  currentAttempt?: number | null;
  startedAt?: Date;
}

/** What settling a run writes on it (in the settlement's transaction). */
export interface RunSettlement {
  status: Extract<ResearchStatus, 'completed' | 'failed' | 'cancelled'>;
  attempts: readonly StoredAttempt[];
  output: ResearchOutput | null;
  sources: readonly ResearchSource[];
  costMicros: Micros;
  providerCostMicros: Micros;
  error: string | null;
  settledAt: Date;
}

interface RawRun {
  id: string;
  account_id: string;
  key_id: string;
  input: string;
  models: string[];
  output_schema: unknown;
  metadata: unknown;
  max_cost_micros: bigint;
  held_micros: bigint;
  status: string;
  attempts: unknown;
  current_attempt: number | null;
  output: unknown;
  sources: unknown;
  cost_micros: bigint | null;
  provider_cost_micros: bigint | null;
  error: string | null;
  idempotency_key: string | null;
  request_digest: string | null;
  cancel_requested_at: Date | null;
  started_at: Date | null;
  completed_at: Date | null;
  settled_at: Date | null;
  created_at: Date;
  updated_at: Date;
  at_us: bigint;
}

const COLUMNS = Prisma.sql`id, account_id, key_id, input, models, output_schema, metadata, max_cost_micros, held_micros, status, attempts,
  current_attempt, output, sources, cost_micros, provider_cost_micros, error, idempotency_key, request_digest, cancel_requested_at,
  started_at, completed_at, settled_at, created_at, updated_at, (extract(epoch FROM created_at) * 1000000)::bigint AS at_us`;

const optionalMicros = (value: bigint | null): Micros | null => (value === null ? null : toMicros(value));

function fromRaw(r: RawRun): ResearchRunRow {
  return {
    id: r.id, accountId: r.account_id, keyId: r.key_id, input: r.input, models: r.models, outputSchema: r.output_schema,
    metadata: (r.metadata ?? null) as Record<string, string> | null,
    maxCostMicros: toMicros(r.max_cost_micros), heldMicros: toMicros(r.held_micros), status: r.status as ResearchStatus,
    attempts: r.attempts as StoredAttempt[], currentAttempt: r.current_attempt,
    output: (r.output ?? null) as ResearchOutput | null, sources: (r.sources ?? null) as ResearchSource[] | null,
    costMicros: optionalMicros(r.cost_micros), providerCostMicros: optionalMicros(r.provider_cost_micros), error: r.error,
    idempotencyKey: r.idempotency_key, requestDigest: r.request_digest, cancelRequestedAt: r.cancel_requested_at,
    startedAt: r.started_at, completedAt: r.completed_at, settledAt: r.settled_at, createdAt: r.created_at, updatedAt: r.updated_at,
    mark: { atMicros: r.at_us, id: r.id },
  };
}

const json = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

/** research_runs: every statement on the table (the hold and release entries are the ledger-append port's). */
export class ResearchRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** Inserts a new run in `tx` (the transaction that writes its hold). */
  async insert(tx: Tx, run: NewResearchRun): Promise<ResearchRunRow> {
    const rows = await tx.$queryRaw<RawRun[]>`
      INSERT INTO research_runs (id, account_id, key_id, input, models, output_schema, metadata, max_cost_micros, held_micros, status,
        attempts, current_attempt, idempotency_key, request_digest, created_at, updated_at)
      VALUES (${run.id}, ${run.accountId}, ${run.keyId}, ${run.input}, ${[...run.models]}::text[], ${json(run.outputSchema)}::jsonb,
        ${json(run.metadata)}::jsonb, ${BigInt(run.maxCostMicros)}, ${BigInt(run.heldMicros)}, 'queued', ${JSON.stringify(run.attempts)}::jsonb,
        ${run.currentAttempt}, ${run.idempotencyKey}, ${run.requestDigest}, clock_timestamp(), clock_timestamp())
      RETURNING ${COLUMNS}`;
    const row = rows[0];
    if (row === undefined) throw new Error('research run insert returned no row');
    return fromRaw(row);
  }

  async get(accountId: string, id: string): Promise<ResearchRunRow | null> {
    const rows = await this.prisma.$queryRaw<RawRun[]>`SELECT ${COLUMNS} FROM research_runs WHERE account_id = ${accountId} AND id = ${id}`;
    const row = rows[0];
    return row === undefined ? null : fromRaw(row);
  }

  /** A run by id alone (the worker's jobs carry only the id). */
  async byId(id: string): Promise<ResearchRunRow | null> {
    const rows = await this.prisma.$queryRaw<RawRun[]>`SELECT ${COLUMNS} FROM research_runs WHERE id = ${id}`;
    const row = rows[0];
    return row === undefined ? null : fromRaw(row);
  }

  /** The run a key made with this Idempotency-Key, if any. */
  async byIdempotencyKey(accountId: string, keyId: string, idempotencyKey: string): Promise<ResearchRunRow | null> {
    const rows = await this.prisma.$queryRaw<RawRun[]>`
      SELECT ${COLUMNS} FROM research_runs WHERE account_id = ${accountId} AND key_id = ${keyId} AND idempotency_key = ${idempotencyKey}`;
    const row = rows[0];
    return row === undefined ? null : fromRaw(row);
  }

  /** Newest first, keyset pages on (created_at, id); `status` filters. */
  async list(accountId: string, limit: number, after: PageMark | null, status: ResearchStatus | null): Promise<ResearchRunRow[]> {
    const before = after === null ? Prisma.empty : Prisma.sql`AND (created_at, id) < (timestamptz 'epoch' + ${after.atMicros} * interval '1 microsecond', ${after.id})`;
    const ofStatus = status === null ? Prisma.empty : Prisma.sql`AND status = ${status}`;
    const rows = await this.prisma.$queryRaw<RawRun[]>`
      SELECT ${COLUMNS} FROM research_runs WHERE account_id = ${accountId} ${ofStatus} ${before}
      ORDER BY created_at DESC, id DESC LIMIT ${limit}`;
    return rows.map(fromRaw);
  }

  /** The run locked in `tx` (SELECT ... FOR UPDATE): its steps and its settlement never overlap. */
  async lock(tx: Tx, id: string): Promise<ResearchRunRow | null> {
    const rows = await tx.$queryRaw<RawRun[]>`SELECT ${COLUMNS} FROM research_runs WHERE id = ${id} FOR UPDATE`;
    const row = rows[0];
    return row === undefined ? null : fromRaw(row);
  }

  /** A step's change to a run that is not settled; false when it was settled meanwhile. */
  async update(tx: Tx, id: string, change: RunChange): Promise<boolean> {
    const sets: Prisma.Sql[] = [Prisma.sql`updated_at = clock_timestamp()`];
    if (change.status !== undefined) sets.push(Prisma.sql`status = ${change.status}`);
    if (change.attempts !== undefined) sets.push(Prisma.sql`attempts = ${JSON.stringify(change.attempts)}::jsonb`);
    if (change.currentAttempt !== undefined) sets.push(Prisma.sql`current_attempt = ${change.currentAttempt}`);
    if (change.startedAt !== undefined) sets.push(Prisma.sql`started_at = coalesce(started_at, ${change.startedAt})`);
    const count = await tx.$executeRaw`UPDATE research_runs SET ${Prisma.join(sets, ', ')} WHERE id = ${id} AND settled_at IS NULL`;
    return count === 1;
  }

  /** Writes a run's end (in the transaction of its settlement) and answers the settled run. */
  async settle(tx: Tx, id: string, settlement: RunSettlement): Promise<ResearchRunRow> {
    const rows = await tx.$queryRaw<RawRun[]>`
      UPDATE research_runs SET status = ${settlement.status}, attempts = ${JSON.stringify(settlement.attempts)}::jsonb, current_attempt = NULL,
        output = ${json(settlement.output)}::jsonb, sources = ${JSON.stringify(settlement.sources)}::jsonb, cost_micros = ${BigInt(settlement.costMicros)},
        provider_cost_micros = ${BigInt(settlement.providerCostMicros)}, error = ${settlement.error}, completed_at = ${settlement.settledAt},
        settled_at = ${settlement.settledAt}, updated_at = clock_timestamp()
      WHERE id = ${id} AND settled_at IS NULL
      RETURNING ${COLUMNS}`;
    const row = rows[0];
    if (row === undefined) throw new Error(`research run ${id} was settled before (its row lock was held)`);
    return fromRaw(row);
  }

  /** Records a cancel request (the first one counts); false when the run is settled or not the account's. */
  async requestCancel(accountId: string, id: string): Promise<boolean> {
    const count = await this.prisma.$executeRaw`
      UPDATE research_runs SET cancel_requested_at = coalesce(cancel_requested_at, clock_timestamp()), updated_at = clock_timestamp()
      WHERE account_id = ${accountId} AND id = ${id} AND settled_at IS NULL`;
    return count === 1;
  }

  /** Runs not settled yet, oldest first, with the provider of their current attempt (the worker's sweep). */
  async open(limit: number): Promise<{ id: string; provider: ResearchProvider | null }[]> {
    const rows = await this.prisma.$queryRaw<{ id: string; attempts: unknown; current_attempt: number | null }[]>`
      SELECT id, attempts, current_attempt FROM research_runs WHERE settled_at IS NULL ORDER BY created_at LIMIT ${limit}`;
    return rows.map((r) => {
      const attempts = r.attempts as StoredAttempt[];
      const current = r.current_attempt === null ? undefined : attempts[r.current_attempt];
      return { id: r.id, provider: current?.provider ?? attempts.find((a) => a.status !== 'skipped')?.provider ?? null };
    });
  }

  /** How many runs are not settled yet. */
  async countOpen(): Promise<number> {
    const rows = await this.prisma.$queryRaw<{ c: bigint }[]>`SELECT count(*) AS c FROM research_runs WHERE settled_at IS NULL`;
    return Number(rows[0]?.c ?? 0n);
  }

  /** What the outbox needs to apply a run's release to Redis (the run id is the entry's key). */
  async releaseFacts(id: string): Promise<{ keyId: string; heldMicros: Micros; costMicros: Micros; settledAt: Date } | null> {
    const rows = await this.prisma.$queryRaw<{ key_id: string; held_micros: bigint; cost_micros: bigint | null; settled_at: Date | null }[]>`
      SELECT key_id, held_micros, cost_micros, settled_at FROM research_runs WHERE id = ${id}`;
    const row = rows[0];
    if (row === undefined || row.cost_micros === null || row.settled_at === null) return null;
    return { keyId: row.key_id, heldMicros: toMicros(row.held_micros), costMicros: toMicros(row.cost_micros), settledAt: row.settled_at };
  }
}
