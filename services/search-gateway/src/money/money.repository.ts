import { recoveryKeys, redisKeys, SETTLEMENT_DIRTY_SET } from '@svc/contracts';
import { describeError } from '@svc/errors';
import type { RedisClient, RedisTarget } from '@svc/redis-client';
import type { Logger } from 'pino';
import { MERGED_SADD, MERGED_ZREM, RedisBatch, replyValues } from '../redis/redis-batch';
import type { BatchPipeline } from '../redis/redis-batch';
import type { AdmissionRequest, AdmissionVerdict, FanoutAdmissionVerdict, LeaseRequest, MoneyOp, OutgoingSettlement, ReserveRequest, ReserveVerdict, Settlement } from './money.ops';
import type { MoneyScope } from './money.scope';
import {
  encodeAdmitArgs, encodeIdempotencyReleaseArgs, encodeIdempotencyStoreArgs, encodeLeaseArgs, encodeLeaseExtendArgs, encodeReleaseArgs,
  encodeReserveArgs, encodeSettleArgs, MONEY_SCRIPTS,
} from './money.scripts';
import { SettlementResender } from './settlement-resender';
import type { SettlementChannel } from './settlement-resender';
import { SettlementRetainer } from './settlement-retainer';
import type { RetainerOptions } from './settlement-retainer';

/** Tries of a settlement while the connection is down (at least), before the search answers 500. */
const SETTLE_TRIES = 3;
/** Between two tries while the connection is down: 25 ms, doubling up to this. */
const SETTLE_TRY_MAX_GAP_MS = 400;
/** No arguments: the fixed part of the merged ZREM and SADD (one array for every call). */
const NONE: readonly string[] = [];

/** The verdicts that carry nothing of their own: one object each, whatever the search. */
const VERDICT_OK: ReserveVerdict = { kind: 'ok' };
const VERDICT_LIMIT: ReserveVerdict = { kind: 'limit' };
const VERDICT_BALANCE: ReserveVerdict = { kind: 'balance' };
const VERDICT_COLD: ReserveVerdict = { kind: 'cold' };
const ADMISSION_COLD: AdmissionVerdict = { kind: 'cold' };
const ADMISSION_TOO_MANY: AdmissionVerdict = { kind: 'too_many' };

/**
 * Every Redis operation of a search's money and capacity, as pipelines: a search whose key
 * is cached waits for one round trip, before the provider call (rate limit, leases,
 * reservation); after the call its settlement (settle + dirty mark + lease releases) is
 * written to the socket before the reply and answered in the background. What each round
 * trip carries is typed: the search's leftover MoneyOps, each encoded by its script's
 * encoder (money.scripts.ts), then the round trip's own call. The background re-send of
 * settlements is the SettlementResender's.
 */
export interface MoneyRepositoryOptions {
  /**
   * Where its warnings go (the batch connection's errors, settlements not handed over,
   * retention); the re-sender logs there and the retainer in a child of it. Absent: silent.
   */
  readonly log?: Logger;
  /** The retainer's bounds and loop intervals (default DEFAULT_RETAINER_OPTIONS). */
  readonly retainer?: RetainerOptions;
  /** Unix ms, for the settled-marker buckets (tests fix it; default Date.now). */
  readonly clock?: () => number;
  /** The background re-send of settlements (default: one of its own on `clock`). */
  readonly resender?: SettlementResender;
  /**
   * How long a settlement keeps being tried while its connection is down (a master failing
   * over) before the search answers 500; default 0: SETTLE_TRIES tries at once (the gateway
   * passes SETTLE_OUTAGE_WAIT_MS).
   */
  readonly settleOutageWaitMs?: number;
}

export class MoneyRepository {
  private readonly batch: RedisBatch;
  private readonly clock: () => number;
  private readonly settleOutageWaitMs: number;
  private readonly log: Logger | undefined;
  /** Settlement records kept until the ledger worker confirms them (recovery from a Redis that lost its data). */
  readonly retainer: SettlementRetainer;
  /** Checks settlements' answers in the background and sends again those Redis did not take. */
  readonly resender: SettlementResender;

  /** `target`: where the batch connections go (the same Redis or Redis Cluster as `redis`). */
  constructor(private readonly redis: RedisClient, target: RedisTarget, options: MoneyRepositoryOptions = {}) {
    const { log } = options;
    this.log = log;
    this.clock = options.clock ?? Date.now;
    const batch = new RedisBatch(target, (error) => log?.warn({ err: error.message }, 'redis batch connection error'));
    this.settleOutageWaitMs = options.settleOutageWaitMs ?? 0;
    this.batch = batch;
    this.retainer = new SettlementRetainer(redis, options.retainer);
    this.resender = options.resender ?? new SettlementResender(this.clock);
    if (log !== undefined) {
      this.resender.useLogger(log);
      this.retainer.useLogger(log.child({ component: 'settlement-retention' }));
    }
    const channel: SettlementChannel = {
      resend: (outgoing) => this.settlePipeline(outgoing).send().replies,
      landed: (outgoing) => this.retainer.retain(outgoing.settlement.record),
    };
    this.resender.attach(channel);
    for (const script of MONEY_SCRIPTS) batch.defineScript(script.name, script);
  }

  /**
   * A search's first admission: leftover ops, the provider lease, then the admission script
   * (rate, account lease, claim, reservation): one round trip. On a refusal the provider
   * lease may have been taken; the caller gives it back.
   */
  async admitFirst(scope: MoneyScope, ops: readonly MoneyOp[], lease: LeaseRequest | null, reserve: ReserveRequest, admission: AdmissionRequest): Promise<{ leased: boolean; admission: AdmissionVerdict }> {
    this.retainer.start();
    const pipeline = this.batch.pipeline();
    this.queueOps(pipeline, scope, ops);
    // No lease: an attempt answered from the result cache calls no provider (leased stays true).
    if (lease !== null) pipeline.call(encodeLeaseArgs(lease));
    pipeline.call(encodeAdmitArgs({ scope, limits: admission, reserve }));
    const results = await execAll(pipeline);
    const leased = lease === null || results[results.length - 2] === 1;
    return { leased, admission: toAdmission(results[results.length - 1]) };
  }

  /**
   * A fan-out's admission (docs/api.md, "Fan-out"): every called model's provider lease, then one
   * admission script call for the request (its rate token, its account in-flight lease and its
   * claim once) with every model's reservation, decided in order: one round trip. `leases[i]`
   * and `reserves[i]` are model i's (a null lease: none asked); `leased[i]` whether it was
   * taken (true when none was asked). On a refusal the leases may have been taken; the caller
   * gives them back.
   */
  async admitFanout(scope: MoneyScope, leases: readonly (LeaseRequest | null)[], reserves: readonly ReserveRequest[], admission: AdmissionRequest): Promise<{ leased: boolean[]; admission: FanoutAdmissionVerdict }> {
    const [first, ...further] = reserves;
    if (first === undefined) throw new Error('a fan-out admission without a reservation');
    this.retainer.start();
    const pipeline = this.batch.pipeline();
    const at: number[] = [];
    for (const lease of leases) {
      at.push(lease === null ? -1 : pipeline.length);
      if (lease !== null) pipeline.call(encodeLeaseArgs(lease));
    }
    pipeline.call(encodeAdmitArgs({ scope, limits: admission, reserve: first, further }));
    const results = await execAll(pipeline);
    const leased = at.map((index) => index < 0 || results[index] === 1);
    return { leased, admission: toFanoutAdmission(results[results.length - 1], reserves.length) };
  }

  /** Asks the ledger worker to rebuild a cold account's spendable side from the ledger. */
  async requestHydration(accountId: string): Promise<void> {
    await execAll(this.batch.pipeline().add('sadd', recoveryKeys.hydrationWanted, accountId));
  }

  /** The account's balance key exists (it is not cold). */
  async isWarm(accountId: string): Promise<boolean> {
    const [exists] = await execAll(this.batch.pipeline().add('exists', redisKeys.accountBalance(accountId)));
    return exists === 1;
  }

  /** Gives back the search's account lease alone (the exits that make no other round trip). */
  async releaseAccount(scope: MoneyScope): Promise<void> {
    await execAll(this.batch.pipeline().add('zrem', scope.inFlightKey, scope.requestId));
  }

  /**
   * A later attempt: leftover ops, the extension of the account lease (when `extendLeaseMs`
   * is given), the provider lease and the reservation: one round trip.
   */
  async admit(scope: MoneyScope, ops: readonly MoneyOp[], lease: LeaseRequest | null, reserve: ReserveRequest, extendLeaseMs?: number): Promise<{ leased: boolean; verdict: ReserveVerdict }> {
    const pipeline = this.batch.pipeline();
    this.queueOps(pipeline, scope, ops);
    if (extendLeaseMs !== undefined) pipeline.call(encodeLeaseExtendArgs({ inFlightKey: scope.inFlightKey, requestId: scope.requestId, ttlMs: extendLeaseMs }));
    if (lease !== null) pipeline.call(encodeLeaseArgs(lease));
    pipeline.call(encodeReserveArgs({ scope, reserve }));
    const results = await execAll(pipeline);
    const leased = lease === null || results[results.length - 2] === 1;
    return { leased, verdict: toVerdict(results[results.length - 1]) };
  }

  /**
   * The provider lease of an attempt admitted without one (docs/decisions/0042: a follower whose
   * leader failed calls the provider itself): leftover ops, the extension of the account lease,
   * the lease; one round trip. False when the provider is at capacity.
   */
  async lease(scope: MoneyScope, ops: readonly MoneyOp[], lease: LeaseRequest, extendLeaseMs: number): Promise<boolean> {
    const pipeline = this.batch.pipeline();
    this.queueOps(pipeline, scope, ops);
    pipeline.call(encodeLeaseExtendArgs({ inFlightKey: scope.inFlightKey, requestId: scope.requestId, ttlMs: extendLeaseMs }));
    pipeline.call(encodeLeaseArgs(lease));
    const results = await execAll(pipeline);
    return results[results.length - 1] === 1;
  }

  /**
   * Sends ops now, without waiting for Redis's answer (a provider lease an attempt holds but
   * does not need, given back before the attempt waits). A failure is logged; a lease not
   * given back expires on its own.
   */
  giveBack(scope: MoneyScope, ops: readonly MoneyOp[]): void {
    const pipeline = this.batch.pipeline();
    this.queueOps(pipeline, scope, ops);
    if (pipeline.length === 0) return;
    execAll(pipeline).catch((error: unknown) => this.log?.warn({ request_id: scope.requestId, err: describeError(error) }, 'ops given back early failed; a lease expires on its own'));
  }

  /**
   * The last round trip of a search that called no provider: leftover ops and, when one is
   * due, the idempotent outcome. Returns the value stored by another request when that one
   * owns the idempotency key.
   */
  async finish(scope: MoneyScope, ops: readonly MoneyOp[], unsettledOutcome: string | null): Promise<{ foreignOutcome: string | null }> {
    const pipeline = this.batch.pipeline();
    this.queueOps(pipeline, scope, ops);
    let idemIndex = -1;
    if (unsettledOutcome !== null && scope.idempotencyKey !== null) {
      idemIndex = pipeline.length;
      pipeline.call(encodeIdempotencyStoreArgs({ key: scope.idempotencyKey, requestId: scope.requestId, outcome: unsettledOutcome }));
    }
    if (pipeline.length === 0) return { foreignOutcome: null };
    const results = await execAll(pipeline);
    const stored = idemIndex >= 0 ? results[idemIndex] : null;
    return { foreignOutcome: typeof stored === 'string' ? stored : null };
  }

  /**
   * Settles a search that called a provider: leftover ops (refunds, provider lease releases
   * merged with other searches'), the settle script (charge, usage, the record appended to
   * the account's stream, the idempotent outcome, and the account in-flight lease given back
   * when `settlement.releaseAccountLease`) and the dirty mark (merged), in one pipeline.
   *
   * Resolves once the pipeline is in the kernel's socket buffer to Redis, without waiting
   * for Redis's answer: the caller answers the client then, so a search with a cached key
   * makes one awaited round trip (its admission), and a gateway killed right after its reply
   * has already handed the settlement to the kernel. The answer is checked in the
   * background by the resender (SettlementResender).
   *
   * When the connection is not up the pipeline cannot be written; then this waits for the
   * answer and tries again (the same commands: the settle script is keyed by the request id,
   * so one that ran before its connection died counts once), at least SETTLE_TRIES times and
   * for up to `settleOutageWaitMs` (25 ms apart, doubling up to 400 ms): a master killed
   * mid-search is replaced by its replica within that, and the next try goes to it
   * (docs/decisions/0030). It rejects if none landed (the caller answers 500 and the
   * reservation is released by reconciliation: nothing is charged).
   */
  async settle(scope: MoneyScope, ops: readonly MoneyOp[], settlement: Settlement): Promise<void> {
    const outgoing: OutgoingSettlement = { scope, ops, settlement, recordJson: JSON.stringify(settlement.record), firstSentAtMs: this.clock() };
    let deadline = 0;
    for (let attempt = 1; ; attempt++) {
      const sent = this.settlePipeline(outgoing).send();
      if (await sent.written) {
        this.resender.watch(outgoing, sent.replies);
        return;
      }
      try {
        replyValues(await sent.replies);
        this.retainer.retain(settlement.record);
        return;
      } catch (error) {
        if (attempt === 1) deadline = performance.now() + this.settleOutageWaitMs;
        const gap = Math.min(SETTLE_TRY_MAX_GAP_MS, 25 * 2 ** (attempt - 1));
        if (attempt >= SETTLE_TRIES && performance.now() + gap > deadline) throw error;
        if (this.settleOutageWaitMs > 0) await new Promise((resolve) => setTimeout(resolve, gap));
      }
    }
  }

  /** The state of the batch connection the money pipelines go out on ('ready': written at once). */
  /**
   * The batch connection itself, which the result cache shares when it has no Redis of its
   * own (its lookups and stores join the searches' flushes). Closed by close().
   */
  get sharedBatch(): RedisBatch {
    return this.batch;
  }

  get batchStatus(): RedisBatch['status'] {
    return this.batch.status;
  }

  /** Settlements sent whose answer has not come yet, or that are waiting to be sent again. */
  get settling(): number {
    return this.resender.unanswered;
  }

  /**
   * Too many settlements held in memory (unconfirmed by the worker, or unanswered by Redis):
   * the search path then admits nothing until they drain, since a record this gateway
   * could not send again would be a lost charge.
   */
  get saturated(): boolean {
    return this.retainer.full || this.resender.unanswered >= this.retainer.capacity;
  }

  /** Waits (at most `timeoutMs`) for every background settlement to be answered; false if some were not. */
  drainSettlements(timeoutMs: number): Promise<boolean> {
    return this.resender.drain(timeoutMs);
  }

  /**
   * Stops the background work (re-sends and the retainer's loops); called after the drain,
   * before the connection closes. A settlement still waiting to be re-sent is logged with
   * its record: it is the one thing an operator must replay by hand.
   */
  close(): void {
    this.resender.close();
    this.retainer.stop();
    this.batch.close();
  }

  /** The stored idempotent outcome (or claim), if any. */
  async readIdempotency(key: string): Promise<string | null> {
    return this.redis.get(key);
  }

  /** A settlement's commands (the same for its first send and every re-send). */
  private settlePipeline(outgoing: OutgoingSettlement): BatchPipeline {
    const pipeline = this.batch.pipeline();
    this.queueOps(pipeline, outgoing.scope, outgoing.ops);
    pipeline.call(encodeSettleArgs(outgoing));
    pipeline.merge(MERGED_SADD, [SETTLEMENT_DIRTY_SET], NONE, [outgoing.scope.accountId]);
    return pipeline;
  }

  /** Each op is one command, encoded by its own encoder, in the order the search queued them. */
  private queueOps(pipeline: BatchPipeline, scope: MoneyScope, ops: readonly MoneyOp[]): void {
    for (const op of ops) {
      switch (op.kind) {
        case 'release':
          pipeline.call(encodeReleaseArgs({ scope, index: op.index, keepMicros: op.keepMicros }));
          break;
        case 'unlease':
          pipeline.merge(MERGED_ZREM, [redisKeys.providerLeases(op.provider)], NONE, [op.leaseId]);
          break;
        case 'unleaseAccount':
          pipeline.add('zrem', scope.inFlightKey, scope.requestId);
          break;
        case 'releaseClaim':
          if (scope.idempotencyKey !== null) pipeline.call(encodeIdempotencyReleaseArgs({ key: scope.idempotencyKey, requestId: scope.requestId }));
          break;
      }
    }
  }
}

async function execAll(pipeline: BatchPipeline): Promise<unknown[]> {
  return replyValues(await pipeline.exec());
}

function toVerdict(value: unknown): ReserveVerdict {
  if (!Array.isArray(value)) throw new Error('unexpected reserve reply');
  const [kind, stored] = value as unknown[];
  switch (kind) {
    case 'ok':
      return VERDICT_OK;
    case 'limit':
      return VERDICT_LIMIT;
    case 'balance':
      return VERDICT_BALANCE;
    case 'cold':
      return VERDICT_COLD;
    case 'dup':
      if (typeof stored === 'string') return { kind: 'dup', stored };
  }
  throw new Error('unexpected reserve reply');
}

/** A fan-out admission's answer: the first admission's, with one reserve verdict per reservation. */
function toFanoutAdmission(value: unknown, reservations: number): FanoutAdmissionVerdict {
  const admission = toAdmission(value);
  if (admission.kind !== 'admitted') return admission;
  const { verdict } = admission;
  if (verdict.kind === 'dup') return { kind: 'admitted', remaining: admission.remaining, verdicts: [verdict] };
  const further = (value as unknown[]).slice(2);
  if (further.length !== reservations - 1) throw new Error('unexpected admit reply');
  return { kind: 'admitted', remaining: admission.remaining, verdicts: [verdict, ...further.map((kind) => toVerdict([kind]))] };
}

function toAdmission(value: unknown): AdmissionVerdict {
  if (!Array.isArray(value)) throw new Error('unexpected admit reply');
  const [kind, second, third] = value as unknown[];
  if (kind === 'cold') return ADMISSION_COLD;
  if (kind === 'rate' && typeof second === 'number') return { kind: 'rate_limited', retryAfterMs: second };
  if (kind === 'busy') return ADMISSION_TOO_MANY;
  if (typeof second !== 'number') throw new Error('unexpected admit reply');
  if (kind === 'dup' && typeof third === 'string') return { kind: 'admitted', remaining: second, verdict: { kind: 'dup', stored: third } };
  if (kind === 'ok') return { kind: 'admitted', remaining: second, verdict: VERDICT_OK };
  if (kind === 'limit') return { kind: 'admitted', remaining: second, verdict: VERDICT_LIMIT };
  if (kind === 'balance') return { kind: 'admitted', remaining: second, verdict: VERDICT_BALANCE };
  throw new Error('unexpected admit reply');
}
