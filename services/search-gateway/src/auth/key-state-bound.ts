/**
 * The hard bound on how old a key state the gateway may act on (docs/architecture.md, the
 * propagation bound). Every state carries a stamp: account-admin's `writtenAtMs` for a Redis value (its clock taken
 * before it read Postgres), or the moment this gateway sent LookupKey for a gRPC answer.
 * A state is used at the latest until stamp + propagationMaxMs - clockSkewMs (gateway
 * clock), so with clocks within clockSkewMs of each other no decision rests on a state
 * older than propagationMaxMs, whatever happened to pub/sub.
 */
export interface KeyStateBound {
  /** KEY_PROPAGATION_MAX_MS. */
  propagationMaxMs: number;
  /** KEY_CACHE_TTL_MS: the in-process lifetime of an entry. */
  cacheTtlMs: number;
  /** KEY_CLOCK_SKEW_MS: the most the gateway's and account-admin's clocks may differ. */
  clockSkewMs: number;
}

export const DEFAULT_KEY_CLOCK_SKEW_MS = 1000;

export function keyStateBound(config: { KEY_PROPAGATION_MAX_MS: number; KEY_CACHE_TTL_MS: number; KEY_CLOCK_SKEW_MS?: number }): KeyStateBound {
  return {
    propagationMaxMs: config.KEY_PROPAGATION_MAX_MS,
    cacheTtlMs: config.KEY_CACHE_TTL_MS,
    clockSkewMs: config.KEY_CLOCK_SKEW_MS ?? DEFAULT_KEY_CLOCK_SKEW_MS,
  };
}

/** The last gateway-clock instant a state stamped at `stampMs` may be used. */
export function usableUntilMs(bound: KeyStateBound, stampMs: number): number {
  return stampMs + bound.propagationMaxMs - bound.clockSkewMs;
}

/**
 * The oldest a Redis value may be (now - writtenAtMs) and still be taken:
 * P - T - S, so a value taken still gets its full in-process lifetime T. When T + S leaves
 * too little room (T close to P), the lifetime an accepted value can get is cut to
 * (P - S) / 2 instead, so Redis stays useful; the cache entry's expiry enforces the bound.
 */
export function maxRedisAgeMs(bound: KeyStateBound): number {
  const usable = bound.propagationMaxMs - bound.clockSkewMs;
  if (usable <= 0) return -1;
  return usable - Math.min(bound.cacheTtlMs, Math.floor(usable / 2));
}
