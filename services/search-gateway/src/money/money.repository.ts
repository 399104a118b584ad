import { periodOf, recoveryKeys, redisKeys, SETTLEMENT_DIRTY_SET, SETTLEMENT_FIELD } from '@svc/contracts';
import type { KeyRecord, Period, Provider, SettlementRecord } from '@svc/contracts';
import type { Micros } from '@svc/money';
import type { RedisClient, RedisTarget } from '@svc/redis-client';
import type { Logger } from 'pino';
import { MERGED_SADD, MERGED_ZREM, pickElement, RedisBatch } from '../redis/redis-batch';
import type { BatchPipeline, MergedCommand, Reply } from '../redis/redis-batch';
import { SettlementRetainer } from './settlement-retainer';
import type { RetainerOptions } from './settlement-retainer';
import { ADMIT_LUA, IDEMPOTENCY_RELEASE_LUA, IDEMPOTENCY_STORE_LUA, LEASE_EXTEND_LUA, LEASE_LUA, RELEASE_LUA, RESERVE_LUA, SETTLE_LUA } from './money.scripts';


/** Idempotent outcomes live this long (docs/api.md 10.7: 24 hours). */
export const OUTCOME_TTL_MS = 24 * 3_600_000;
/**
 * Settled markers (what makes a settlement sent twice count once) are request ids in one set
 * per account and bucket of this length, by the settlement's first send; docs/decisions/0004.
 */
export const SETTLED_BUCKET_MS = 5 * 60_000;
/** A settlement is sent again for at most this long after its first send; then it is logged as lost to Redis. */
export const SETTLE_RESEND_WINDOW_MS = 20 * 60_000;
/** A marker bucket lives this long past its end: longer than any re-send of a settlement first sent in it. */
const SETTLED_BUCKET_GRACE_MS = SETTLE_RESEND_WINDOW_MS + 5 * 60_000;
/** Tries of a settlement while the connection is down, before the search answers 500. */
const SETTLE_TRIES = 3;
/** A background settlement Redis refused is sent again after this, doubling up to the max. */
const SETTLE_RETRY_BASE_MS = 100;
const SETTLE_RETRY_MAX_MS = 5_000;

/**
 * Provider leases of every search in one flush, one script call per provider: the reply
 * holds one 1 (taken) or 0 (at capacity) per lease id, in order.
 */
const MERGED_LEASE: MergedCommand = { command: 'svcLease', stage: 'tail', order: 1, dynamicKeys: false, unique: false, pick: pickElement };
/** First admissions of the searches of one account in one flush: one ADMIT_LUA call. */
const MERGED_ADMIT: MergedCommand = { command: 'svcAdmit', stage: 'tail', order: 1, dynamicKeys: true, unique: false, pick: pickElement };
/** Settlements of one account in one flush: one SETTLE_LUA call (before the dirty mark, order 9). */
const MERGED_SETTLE: MergedCommand = { command: 'svcSettle', stage: 'tail', order: 1, dynamicKeys: true, unique: false, pick: pickElement };
/** A period counter outlives its period by this much, so the period's usage stays readable. */
const PERIOD_COUNTER_GRACE_MS = 7 * 86_400_000;

interface CurrentPeriods {
  readonly daily: Period;
  readonly weekly: Period;
  readonly monthly: Period;
  readonly expireAtMs: readonly [number, number, number];
}

let periodsCache: CurrentPeriods | null = null;

/** The current day, week and month (UTC), computed once per day rather than per search. */
function currentPeriods(nowMs: number): CurrentPeriods {
  const cached = periodsCache;
  if (cached !== null && nowMs >= cached.daily.startMs && nowMs < cached.daily.endMs) return cached;
  const daily = periodOf('daily', nowMs);
  const weekly = periodOf('weekly', nowMs);
  const monthly = periodOf('monthly', nowMs);
  const fresh: CurrentPeriods = {
    daily, weekly, monthly,
    expireAtMs: [daily.endMs + PERIOD_COUNTER_GRACE_MS, weekly.endMs + PERIOD_COUNTER_GRACE_MS, monthly.endMs + PERIOD_COUNTER_GRACE_MS],
  };
  periodsCache = fresh;
  return fresh;
}

/** The Redis keys and limit of one search, all under the account's hash tag. */
export interface MoneyScope {
  readonly accountId: string;
  readonly keyId: string;
  readonly requestId: string;
  readonly balanceKey: string;
  readonly reservedKey: string;
  /** The counter the key limit is checked against (period or all-time usage); the all-time one when no limit. */
  readonly limitKey: string;
  readonly totalKey: string;
  /** What the key's open searches hold (counted against its limit with the counter). */
  readonly holdKey: string;
  /** The key's day, week and month counters and when each expires (Unix ms); every settlement moves all three. */
  readonly periodKeys: readonly [string, string, string];
  readonly periodExpireAtMs: readonly [number, number, number];
  /** -1 when the key has no credit limit. */
  readonly limitMicros: number;
  readonly reservationKey: string;
  /** Null without an Idempotency-Key. */
  readonly idempotencyKey: string | null;
  /** How long the reservation hash may live (longer than any search). */
  readonly reservationTtlMs: number;
  /** The key's rate-limit state. */
  readonly rateKey: string;
  /** The account's in-flight leases (member: the request id). */
  readonly inFlightKey: string;
}

/**
 * The scope of a search by `record`. The key's period is fixed when the search starts, so
 * every attempt of one search counts in the same period.
 */
export function moneyScope(record: KeyRecord, requestId: string, idempotencyDigest: string | null, nowMs: number, reservationTtlMs: number): MoneyScope {
  const { accountId, id: keyId } = record;
  const totalKey = redisKeys.keyTotalUsage(accountId, keyId);
  const periods = currentPeriods(nowMs);
  const periodKeys: [string, string, string] = [
    redisKeys.keyPeriodUsage(accountId, keyId, 'daily', periods.daily.startMs),
    redisKeys.keyPeriodUsage(accountId, keyId, 'weekly', periods.weekly.startMs),
    redisKeys.keyPeriodUsage(accountId, keyId, 'monthly', periods.monthly.startMs),
  ];
  let limitKey = totalKey;
  if (record.limitMicros !== null && record.limitReset !== null) {
    limitKey = periodKeys[record.limitReset === 'daily' ? 0 : record.limitReset === 'weekly' ? 1 : 2];
  }
  const tag = redisKeys.accountTag(accountId);
  return {
    accountId,
    keyId,
    requestId,
    balanceKey: redisKeys.accountBalance(accountId),
    reservedKey: redisKeys.accountReserved(accountId),
    limitKey,
    totalKey,
    holdKey: redisKeys.keyHold(accountId, keyId),
    periodKeys,
    periodExpireAtMs: periods.expireAtMs,
    limitMicros: record.limitMicros ?? -1,
    reservationKey: `${tag}:rsv:${requestId}`,
    idempotencyKey: idempotencyDigest === null ? null : redisKeys.idempotency(accountId, keyId, idempotencyDigest),
    reservationTtlMs,
    rateKey: redisKeys.keyRate(accountId, keyId),
    inFlightKey: redisKeys.accountInFlight(accountId),
  };
}

/** Work left over from an earlier attempt, sent at the head of the next round trip. */
export type PendingOp =
  | { readonly kind: 'release'; readonly index: number; readonly keepMicros: Micros }
  | { readonly kind: 'unlease'; readonly provider: Provider; readonly leaseId: string }
  /** Gives back the search's account in-flight lease (member: the request id). */
  | { readonly kind: 'unleaseAccount' }
  /** Gives back this request's Idempotency-Key claim (an outcome not worth keeping). */
  | { readonly kind: 'releaseClaim' };

export interface LeaseRequest {
  readonly provider: Provider;
  readonly leaseId: string;
  readonly cap: number;
  readonly lifetimeMs: number;
}

export interface ReserveRequest {
  readonly index: number;
  readonly amountMicros: Micros;
  /** The idempotency claim, on the search's first reservation. */
  readonly claim?: { readonly value: string; readonly ttlMs: number };
}

/** 'cold': the account's spendable side is not rebuilt yet since Redis lost its data (nothing written). */
export type ReserveVerdict = { kind: 'ok' } | { kind: 'limit' } | { kind: 'balance' } | { kind: 'cold' } | { kind: 'dup'; stored: string };

/** The limits checked by a search's first admission (spec section 8). */
export interface AdmissionRequest {
  readonly ratePerSecond: number;
  readonly burst: number;
  readonly accountCap: number;
  readonly leaseTtlMs: number;
}

/**
 * The answer of a first admission: refused by the key's rate (nothing written), refused by
 * the account's in-flight cap (nothing written), or admitted with a reserve verdict and the
 * requests left in the key's burst.
 */
export type AdmissionVerdict =
  | { readonly kind: 'cold' }
  | { readonly kind: 'rate_limited'; readonly retryAfterMs: number }
  | { readonly kind: 'too_many' }
  | { readonly kind: 'admitted'; readonly remaining: number; readonly verdict: ReserveVerdict };

/** A settlement on its way to Redis: sent once, and again (same bytes) after a failure. */
interface OutgoingSettlement {
  readonly scope: MoneyScope;
  readonly pending: readonly PendingOp[];
  readonly settlement: Settlement;
  readonly recordJson: string;
  readonly firstSentAtMs: number;
}

export interface Settlement {
  readonly record: SettlementRecord;
  /** The outcome to keep under the Idempotency-Key, or null. */
  readonly outcome: string | null;
}

/**
 * Every Redis operation of a search's money and capacity, as pipelines: a search whose key
 * is cached waits for one round trip, before the provider call (rate limit, leases,
 * reservation); after the call its settlement (settle + dirty mark + lease releases) is
 * written to the socket before the reply and answered in the background.
 */
export class MoneyRepository {
  private readonly batch: RedisBatch;
  private log: Logger | null = null;
  /** Background settlements not answered yet (including those waiting to be re-sent). */
  private unanswered = 0;
  /** Settlements waiting to be sent again, by their timer. */
  private readonly resends = new Map<NodeJS.Timeout, OutgoingSettlement>();
  private closed = false;
  /** Settlement records kept until the ledger worker confirms them (recovery from a Redis that lost its data). */
  readonly retainer: SettlementRetainer;

  /** `clock`: Unix ms, for the settled-marker buckets (tests fix it). */
  /** `target`: where the batch connections go (the same Redis or Redis Cluster as `redis`). */
  constructor(private readonly redis: RedisClient, target: RedisTarget, retainerOptions?: RetainerOptions, private readonly clock: () => number = Date.now) {
    // The logger arrives later (useLogger); the closure reads it when an error comes.
    const batch = new RedisBatch(target, (error) => this.log?.warn({ err: error.message }, 'redis batch connection error'));
    this.batch = batch;
    this.retainer = new SettlementRetainer(redis, retainerOptions);
    batch.defineScript('svcLease', { numberOfKeys: 1, lua: LEASE_LUA });
    batch.defineScript('svcReserve', { numberOfKeys: 6, lua: RESERVE_LUA });
    batch.defineScript('svcRelease', { numberOfKeys: 4, lua: RELEASE_LUA });
    batch.defineScript('svcSettle', { lua: SETTLE_LUA });
    batch.defineScript('svcIdemStore', { numberOfKeys: 1, lua: IDEMPOTENCY_STORE_LUA });
    batch.defineScript('svcIdemRelease', { numberOfKeys: 1, lua: IDEMPOTENCY_RELEASE_LUA });
    batch.defineScript('svcAdmit', { lua: ADMIT_LUA });
    batch.defineScript('svcLeaseExtend', { numberOfKeys: 1, lua: LEASE_EXTEND_LUA });
  }

  /**
   * A search's first admission: pending ops, the provider lease, then the admission script
   * (rate, account lease, claim, reservation): one round trip. On a refusal the provider
   * lease may have been taken; the caller gives it back.
   */
  async admitFirst(scope: MoneyScope, pending: readonly PendingOp[], lease: LeaseRequest, reserve: ReserveRequest, admission: AdmissionRequest): Promise<{ leased: boolean; admission: AdmissionVerdict }> {
    this.retainer.start();
    const pipeline = this.batch.pipeline();
    this.queuePending(pipeline, scope, pending);
    pipeline.merge(MERGED_LEASE, [redisKeys.providerLeases(lease.provider)], [lease.cap, lease.lifetimeMs], [lease.leaseId]);
    const claim = reserve.claim;
    pipeline.merge(MERGED_ADMIT,
      [scope.balanceKey, scope.reservedKey, scope.inFlightKey],
      [admission.ratePerSecond, admission.burst, admission.accountCap, admission.leaseTtlMs],
      [reserve.amountMicros, scope.limitMicros, reserve.index, scope.reservationTtlMs, 0,
        claim === undefined ? '0' : '1', claim?.value ?? '', claim?.ttlMs ?? 0, scope.requestId],
      [scope.limitKey, scope.reservationKey, scope.idempotencyKey ?? scope.reservationKey, scope.rateKey, scope.holdKey],
    );
    const results = await execAll(pipeline);
    const leased = results[results.length - 2] === 1;
    return { leased, admission: toAdmission(results[results.length - 1]) };
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
   * A later attempt: pending ops, the extension of the account lease (when `extendLeaseMs`
   * is given), the provider lease and the reservation: one round trip.
   */
  async admit(scope: MoneyScope, pending: readonly PendingOp[], lease: LeaseRequest, reserve: ReserveRequest, extendLeaseMs?: number): Promise<{ leased: boolean; verdict: ReserveVerdict }> {
    const pipeline = this.batch.pipeline();
    this.queuePending(pipeline, scope, pending);
    if (extendLeaseMs !== undefined) pipeline.add('svcLeaseExtend', scope.inFlightKey, scope.requestId, extendLeaseMs);
    pipeline.merge(MERGED_LEASE, [redisKeys.providerLeases(lease.provider)], [lease.cap, lease.lifetimeMs], [lease.leaseId]);
    const claim = reserve.claim;
    pipeline.add('svcReserve', 
      scope.balanceKey, scope.reservedKey, scope.limitKey, scope.reservationKey, scope.idempotencyKey ?? scope.reservationKey, scope.holdKey,
      reserve.amountMicros, scope.limitMicros, reserve.index, scope.reservationTtlMs, 0,
      claim === undefined ? '0' : '1', claim?.value ?? '', claim?.ttlMs ?? 0,
    );
    const results = await execAll(pipeline);
    const leased = results[results.length - 2] === 1;
    return { leased, verdict: toVerdict(results[results.length - 1]) };
  }

  /**
   * The last round trip of a search that called no provider: pending ops and, when one is
   * due, the idempotent outcome. Returns the value stored by another request when that one
   * owns the idempotency key.
   */
  async finish(scope: MoneyScope, pending: readonly PendingOp[], unsettledOutcome: string | null): Promise<{ foreignOutcome: string | null }> {
    const pipeline = this.batch.pipeline();
    this.queuePending(pipeline, scope, pending);
    let idemIndex = -1;
    if (unsettledOutcome !== null && scope.idempotencyKey !== null) {
      idemIndex = pipeline.length;
      pipeline.add('svcIdemStore', scope.idempotencyKey, scope.requestId, unsettledOutcome, OUTCOME_TTL_MS);
    }
    if (pipeline.length === 0) return { foreignOutcome: null };
    const results = await execAll(pipeline);
    const stored = idemIndex >= 0 ? results[idemIndex] : null;
    return { foreignOutcome: typeof stored === 'string' ? stored : null };
  }

  /**
   * Settles a search that called a provider: pending ops (refunds, provider lease releases
   * merged with other searches'), the settle script (charge, usage, the record appended to
   * the account's stream, the idempotent outcome, the account in-flight lease given back)
   * and the dirty mark (merged), in one pipeline.
   *
   * Resolves once the pipeline is in the kernel's socket buffer to Redis, without waiting
   * for Redis's answer: the caller answers the client then, so a search with a cached key
   * makes one awaited round trip (its admission), and a gateway killed right after its reply
   * has already handed the settlement to the kernel. The answer is checked in the
   * background; a settlement Redis refused or never answered is sent again (the script is
   * keyed by the request id and every op is idempotent) for SETTLE_RESEND_WINDOW_MS, while
   * the settled marker still dedupes it.
   *
   * When the connection is not up the pipeline cannot be written; then this waits for the
   * answer, tries up to SETTLE_TRIES times, and rejects if none landed (the caller answers
   * 500 and the reservation is released by reconciliation: nothing is charged).
   */
  async settle(scope: MoneyScope, pending: readonly PendingOp[], settlement: Settlement): Promise<void> {
    const outgoing: OutgoingSettlement = { scope, pending, settlement, recordJson: JSON.stringify(settlement.record), firstSentAtMs: this.clock() };
    for (let attempt = 1; ; attempt++) {
      const sent = this.settlePipeline(outgoing).send();
      if (await sent.written) {
        this.watchSettlement(sent.replies, outgoing, 1);
        return;
      }
      try {
        checkAll(await sent.replies);
        this.retainer.retain(settlement.record);
        return;
      } catch (error) {
        if (attempt >= SETTLE_TRIES) throw error;
      }
    }
  }

  /** The state of the batch connection the money pipelines go out on ('ready': written at once). */
  get batchStatus(): RedisBatch['status'] {
    return this.batch.status;
  }

  /** Settlements sent whose answer has not come yet, or that are waiting to be sent again. */
  get settling(): number {
    return this.unanswered;
  }

  /**
   * Too many settlements held in memory (unconfirmed by the worker, or unanswered by Redis):
   * the search path then admits nothing until they drain, since a record this gateway
   * could not send again would be a lost charge.
   */
  get saturated(): boolean {
    return this.retainer.full || this.unanswered >= this.retainer.capacity;
  }

  /** Waits (at most `timeoutMs`) for every background settlement to be answered; false if some were not. */
  async drainSettlements(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.unanswered > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    return this.unanswered === 0;
  }

  /**
   * Stops the background work (re-sends and the retainer's loops); called after the drain,
   * before the connection closes. A settlement still waiting to be re-sent is logged with
   * its record: it is the one thing an operator must replay by hand.
   */
  close(): void {
    this.closed = true;
    for (const [timer, outgoing] of this.resends) {
      clearTimeout(timer);
      this.lost(outgoing, 'the gateway stopped before redis took it');
    }
    this.resends.clear();
    this.retainer.stop();
    this.batch.close();
  }

  useLogger(log: Logger): void {
    this.log = log;
    this.retainer.useLogger(log.child({ component: 'settlement-retention' }));
  }

  private settlePipeline(outgoing: OutgoingSettlement): BatchPipeline {
    const { scope, settlement } = outgoing;
    const pipeline = this.batch.pipeline();
    // The account lease goes back inside the settle script (same hash slot): one command less.
    let accountLease = false;
    for (const op of outgoing.pending) {
      if (op.kind === 'unleaseAccount') accountLease = true;
      else this.queueOne(pipeline, scope, op);
    }
    const outcome = settlement.outcome;
    // The bucket of the first send: a re-send checks the same set.
    const bucketStartMs = outgoing.firstSentAtMs - (outgoing.firstSentAtMs % SETTLED_BUCKET_MS);
    pipeline.merge(MERGED_SETTLE,
      [scope.balanceKey, scope.reservedKey, redisKeys.settlementStream(scope.accountId), scope.inFlightKey],
      [OUTCOME_TTL_MS, SETTLEMENT_FIELD],
      [settlement.record.chargedMicros, '0', outgoing.recordJson, bucketStartMs + SETTLED_BUCKET_MS + SETTLED_BUCKET_GRACE_MS,
        outcome !== null && scope.idempotencyKey !== null ? '1' : '0', outcome ?? '', scope.requestId, accountLease ? '1' : '0',
        scope.periodExpireAtMs[0], scope.periodExpireAtMs[1], scope.periodExpireAtMs[2]],
      [scope.holdKey, scope.totalKey, scope.reservationKey, redisKeys.settledMarkers(scope.accountId, bucketStartMs), scope.idempotencyKey ?? scope.reservationKey,
        scope.periodKeys[0], scope.periodKeys[1], scope.periodKeys[2]],
    );
    pipeline.merge(MERGED_SADD, [SETTLEMENT_DIRTY_SET], [], [scope.accountId]);
    return pipeline;
  }

  /** Checks a settlement's answer in the background; sends it again after a failure, within the re-send window. */
  private watchSettlement(replies: Promise<Reply[]>, outgoing: OutgoingSettlement, attempt: number): void {
    this.unanswered += 1;
    replies.then(checkAll).then(
      () => {
        this.unanswered -= 1;
        // Kept until the worker confirms it durable: re-sent if Redis loses it before the drain.
        this.retainer.retain(outgoing.settlement.record);
      },
      (error: unknown) => {
        this.unanswered -= 1;
        const { scope } = outgoing;
        const delayMs = Math.min(SETTLE_RETRY_MAX_MS, SETTLE_RETRY_BASE_MS * 2 ** Math.min(attempt - 1, 10));
        if (this.closed || this.clock() + delayMs - outgoing.firstSentAtMs > SETTLE_RESEND_WINDOW_MS) {
          this.lost(outgoing, error instanceof Error ? error.message : String(error));
          return;
        }
        this.log?.error({ request_id: scope.requestId, account_id: scope.accountId, attempt, err: error instanceof Error ? error.message : String(error) }, 'settlement not confirmed by redis; sending it again');
        // Counted as unanswered while it waits, so the drain at shutdown waits for it too.
        this.unanswered += 1;
        const timer = setTimeout(() => {
          this.resends.delete(timer);
          this.unanswered -= 1;
          const sent = this.settlePipeline(outgoing).send();
          this.watchSettlement(sent.replies, outgoing, attempt + 1);
        }, delayMs);
        // Never what keeps the process alive: shutdown drains, then close() reports what is left.
        timer.unref();
        this.resends.set(timer, outgoing);
      },
    );
  }

  /** A settlement Redis never took: the record is logged whole (ids and amounts, nothing secret) for a manual replay. */
  private lost(outgoing: OutgoingSettlement, reason: string): void {
    const { scope, settlement } = outgoing;
    this.log?.error(
      { request_id: scope.requestId, account_id: scope.accountId, charged_micros: settlement.record.chargedMicros, record: outgoing.recordJson, err: reason },
      'settlement lost: redis never took it; replay the record into the account\'s settlement stream',
    );
  }

  /** The stored idempotent outcome (or claim), if any. */
  async readIdempotency(key: string): Promise<string | null> {
    return this.redis.get(key);
  }

  private queuePending(pipeline: BatchPipeline, scope: MoneyScope, pending: readonly PendingOp[]): void {
    for (const op of pending) this.queueOne(pipeline, scope, op);
  }

  private queueOne(pipeline: BatchPipeline, scope: MoneyScope, op: PendingOp): void {
    switch (op.kind) {
      case 'release':
        pipeline.add('svcRelease', scope.balanceKey, scope.reservedKey, scope.holdKey, scope.reservationKey, op.index, op.keepMicros, '0');
        break;
      case 'unlease':
        pipeline.merge(MERGED_ZREM, [redisKeys.providerLeases(op.provider)], [], [op.leaseId]);
        break;
      case 'unleaseAccount':
        pipeline.add('zrem', scope.inFlightKey, scope.requestId);
        break;
      case 'releaseClaim':
        if (scope.idempotencyKey !== null) pipeline.add('svcIdemRelease', scope.idempotencyKey, scope.requestId);
        break;
    }
  }
}

async function execAll(pipeline: BatchPipeline): Promise<unknown[]> {
  return checkAll(await pipeline.exec());
}

/** The values of a pipeline's replies; throws the first command error. */
function checkAll(results: Reply[]): unknown[] {
  return results.map(([error, value]) => {
    if (error !== null) throw error;
    return value;
  });
}

function toVerdict(value: unknown): ReserveVerdict {
  if (!Array.isArray(value)) throw new Error('unexpected reserve reply');
  const [kind, stored] = value as unknown[];
  if (kind === 'ok' || kind === 'limit' || kind === 'balance' || kind === 'cold') return { kind };
  if (kind === 'dup' && typeof stored === 'string') return { kind: 'dup', stored };
  throw new Error('unexpected reserve reply');
}

function toAdmission(value: unknown): AdmissionVerdict {
  if (!Array.isArray(value)) throw new Error('unexpected admit reply');
  const [kind, second, third] = value as unknown[];
  if (kind === 'cold') return { kind: 'cold' };
  if (kind === 'rate' && typeof second === 'number') return { kind: 'rate_limited', retryAfterMs: second };
  if (kind === 'busy') return { kind: 'too_many' };
  if (typeof second !== 'number') throw new Error('unexpected admit reply');
  if (kind === 'dup' && typeof third === 'string') return { kind: 'admitted', remaining: second, verdict: { kind: 'dup', stored: third } };
  if (kind === 'ok' || kind === 'limit' || kind === 'balance') return { kind: 'admitted', remaining: second, verdict: { kind } };
  throw new Error('unexpected admit reply');
}
