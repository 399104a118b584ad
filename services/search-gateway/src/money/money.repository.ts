import { periodOf, recoveryKeys, redisKeys, SETTLEMENT_DIRTY_SET, SETTLEMENT_FIELD } from '@svc/contracts';
import type { KeyRecord, Provider, SettlementRecord } from '@svc/contracts';
import type { Micros } from '@svc/money';
import type Redis from 'ioredis';
import { RedisBatch } from '../redis/redis-batch';
import type { BatchPipeline } from '../redis/redis-batch';
import { SettlementRetainer } from './settlement-retainer';
import type { RetainerOptions } from './settlement-retainer';
import { ADMIT_LUA, IDEMPOTENCY_RELEASE_LUA, IDEMPOTENCY_STORE_LUA, LEASE_EXTEND_LUA, LEASE_LUA, RELEASE_LUA, RESERVE_LUA, SETTLE_LUA } from './money.scripts';


/** Settled markers and idempotent outcomes live this long (CONTRACT.md: 24 hours). */
export const OUTCOME_TTL_MS = 24 * 3_600_000;
/** A period counter outlives its period by this much, so the period's usage stays readable. */
const PERIOD_COUNTER_GRACE_MS = 7 * 86_400_000;

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
  /** -1 when the key has no credit limit. */
  readonly limitMicros: number;
  readonly limitExpireAtMs: number;
  readonly reservationKey: string;
  readonly settledKey: string;
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
  let limitKey = totalKey;
  let limitExpireAtMs = 0;
  if (record.limitMicros !== null && record.limitReset !== null) {
    const period = periodOf(record.limitReset, nowMs);
    limitKey = redisKeys.keyPeriodUsage(accountId, keyId, period.startMs);
    limitExpireAtMs = period.endMs + PERIOD_COUNTER_GRACE_MS;
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
    limitMicros: record.limitMicros ?? -1,
    limitExpireAtMs,
    reservationKey: `${tag}:rsv:${requestId}`,
    settledKey: `${tag}:settled:${requestId}`,
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

export interface Settlement {
  readonly record: SettlementRecord;
  /** The outcome to keep under the Idempotency-Key, or null. */
  readonly outcome: string | null;
}

/**
 * Every Redis operation of a search's money and capacity, as pipelines: a search whose key
 * is cached makes one round trip before the provider call (lease + reserve) and one after
 * (settle + dirty mark + lease release).
 */
export class MoneyRepository {
  private readonly batch: RedisBatch;
  /** Settlement records kept until the ledger worker confirms them (recovery from a Redis that lost its data). */
  readonly retainer: SettlementRetainer;

  constructor(private readonly redis: Redis, retainerOptions?: RetainerOptions) {
    this.batch = new RedisBatch(redis);
    this.retainer = new SettlementRetainer(redis, retainerOptions);
    redis.defineCommand('svcLease', { numberOfKeys: 1, lua: LEASE_LUA });
    redis.defineCommand('svcReserve', { numberOfKeys: 5, lua: RESERVE_LUA });
    redis.defineCommand('svcRelease', { numberOfKeys: 4, lua: RELEASE_LUA });
    redis.defineCommand('svcSettle', { numberOfKeys: 8, lua: SETTLE_LUA });
    redis.defineCommand('svcIdemStore', { numberOfKeys: 1, lua: IDEMPOTENCY_STORE_LUA });
    redis.defineCommand('svcIdemRelease', { numberOfKeys: 1, lua: IDEMPOTENCY_RELEASE_LUA });
    redis.defineCommand('svcAdmit', { numberOfKeys: 7, lua: ADMIT_LUA });
    redis.defineCommand('svcLeaseExtend', { numberOfKeys: 1, lua: LEASE_EXTEND_LUA });
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
    pipeline.add('svcLease', redisKeys.providerLeases(lease.provider), lease.leaseId, lease.cap, lease.lifetimeMs);
    const claim = reserve.claim;
    pipeline.add('svcAdmit', 
      scope.balanceKey, scope.reservedKey, scope.limitKey, scope.reservationKey, scope.idempotencyKey ?? scope.reservationKey,
      scope.rateKey, scope.inFlightKey,
      reserve.amountMicros, scope.limitMicros, reserve.index, scope.reservationTtlMs, scope.limitExpireAtMs,
      claim === undefined ? '0' : '1', claim?.value ?? '', claim?.ttlMs ?? 0,
      admission.ratePerSecond, admission.burst, scope.requestId, admission.accountCap, admission.leaseTtlMs,
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
    pipeline.add('svcLease', redisKeys.providerLeases(lease.provider), lease.leaseId, lease.cap, lease.lifetimeMs);
    const claim = reserve.claim;
    pipeline.add('svcReserve', 
      scope.balanceKey, scope.reservedKey, scope.limitKey, scope.reservationKey, scope.idempotencyKey ?? scope.reservationKey,
      reserve.amountMicros, scope.limitMicros, reserve.index, scope.reservationTtlMs, scope.limitExpireAtMs,
      claim === undefined ? '0' : '1', claim?.value ?? '', claim?.ttlMs ?? 0,
    );
    const results = await execAll(pipeline);
    const leased = results[results.length - 2] === 1;
    return { leased, verdict: toVerdict(results[results.length - 1]) };
  }

  /**
   * The last round trip of a search: pending ops, then either the settlement (with the
   * dirty mark) or, when no provider was called, the idempotent outcome if one is due.
   * Returns the value stored by another request when that one owns the idempotency key.
   */
  async finish(scope: MoneyScope, pending: readonly PendingOp[], settlement: Settlement | null, unsettledOutcome: string | null): Promise<{ foreignOutcome: string | null }> {
    const pipeline = this.batch.pipeline();
    this.queuePending(pipeline, scope, pending);
    let idemIndex = -1;
    if (settlement !== null) {
      const outcome = settlement.outcome;
      pipeline.add('svcSettle', 
        scope.balanceKey, scope.reservedKey, scope.limitKey, scope.totalKey, scope.reservationKey,
        redisKeys.settlementStream(scope.accountId), scope.settledKey, scope.idempotencyKey ?? scope.settledKey,
        settlement.record.chargedMicros, scope.limitMicros >= 0 ? '1' : '0', JSON.stringify(settlement.record), OUTCOME_TTL_MS,
        outcome !== null && scope.idempotencyKey !== null ? '1' : '0', outcome ?? '', OUTCOME_TTL_MS, SETTLEMENT_FIELD,
      );
      pipeline.add('sadd', SETTLEMENT_DIRTY_SET, scope.accountId);
    } else if (unsettledOutcome !== null && scope.idempotencyKey !== null) {
      idemIndex = pipeline.length;
      pipeline.add('svcIdemStore', scope.idempotencyKey, scope.requestId, unsettledOutcome, OUTCOME_TTL_MS);
    }
    if (pipeline.length === 0) return { foreignOutcome: null };
    const results = await execAll(pipeline);
    // Kept until the worker confirms it durable: re-sent if Redis loses it before the drain.
    if (settlement !== null) this.retainer.retain(settlement.record);
    const stored = idemIndex >= 0 ? results[idemIndex] : null;
    return { foreignOutcome: typeof stored === 'string' ? stored : null };
  }

  /** The stored idempotent outcome (or claim), if any. */
  async readIdempotency(key: string): Promise<string | null> {
    return this.redis.get(key);
  }

  private queuePending(pipeline: BatchPipeline, scope: MoneyScope, pending: readonly PendingOp[]): void {
    for (const op of pending) {
      switch (op.kind) {
        case 'release':
          pipeline.add('svcRelease', scope.balanceKey, scope.reservedKey, scope.limitKey, scope.reservationKey, op.index, op.keepMicros, scope.limitMicros >= 0 ? '1' : '0');
          break;
        case 'unlease':
          pipeline.add('zrem', redisKeys.providerLeases(op.provider), op.leaseId);
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
}

async function execAll(pipeline: BatchPipeline): Promise<unknown[]> {
  const results = await pipeline.exec();
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
