import { periodOf, redisKeys } from '@svc/contracts';
import type { KeyRecord, Period } from '@svc/contracts';

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
