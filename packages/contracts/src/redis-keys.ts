/**
 * Redis key names, in one place. Everything of one account sits under the hash tag
 * `{a:<account id>}` so that multi-key scripts run unchanged on Redis Cluster. A key record
 * is read alone by its hash, before the account is known, so it has no account tag; a
 * provider's leases are shared by every account, so they have a provider tag.
 */
export const redisKeys = {
  /** JSON KeyRecord, or a short-lived miss marker, written only by account-admin. */
  keyRecord: (keyHash: string): string => `svc:keyrec:${keyHash}`,
  /** Prefix of every per-account key. */
  accountTag: (accountId: string): string => `{a:${accountId}}`,
  /**
   * Integer micro-USD a key has been charged (settled) in the `reset` period starting at
   * `periodStartMs` (UTC ms). Every key's day, week and month counters move with every
   * settlement whatever its own reset, so a change of period keeps the period's spend.
   */
  keyPeriodUsage: (accountId: string, keyId: string, reset: 'daily' | 'weekly' | 'monthly', periodStartMs: number): string =>
    `{a:${accountId}}:kuse:${keyId}:${reset.charAt(0)}:${periodStartMs}`,
  /** Integer micro-USD a key has been charged in all time. */
  keyTotalUsage: (accountId: string, keyId: string): string => `{a:${accountId}}:kuse:${keyId}:all`,
  /** Integer micro-USD the key's open searches hold (reserved, not settled): counted against its limit in every period. */
  keyHold: (accountId: string, keyId: string): string => `{a:${accountId}}:khold:${keyId}`,
  /** Spendable balance in integer micro-USD: durable balance less reservations and unsettled charges. */
  accountBalance: (accountId: string): string => `{a:${accountId}}:bal`,
  /** Micro-USD currently held by open reservations (searches in their provider call). */
  accountReserved: (accountId: string): string => `{a:${accountId}}:reserved`,
  /** Marker that a ledger entry (grant, purchase, refund) has been applied to the spendable balance. */
  appliedEntry: (accountId: string, entryId: string): string => `{a:${accountId}}:applied:${entryId}`,
  /**
   * Set of the request ids an account settled in the bucket starting at `bucketStartMs`
   * (UTC ms): what makes a settlement sent twice count once. A bucket expires a while
   * after its end, so the keyspace grows with accounts, not with searches.
   */
  settledMarkers: (accountId: string, bucketStartMs: number): string => `{a:${accountId}}:settled:${bucketStartMs}`,
  /** Stream of SettlementRecords to be written to the ledger. */
  settlementStream: (accountId: string): string => `{a:${accountId}}:settle`,
  /** Stored outcome of a search sent with an Idempotency-Key (digest of the key). */
  idempotency: (accountId: string, keyId: string, idempotencyKeyDigest: string): string =>
    `{a:${accountId}}:idem:${keyId}:${idempotencyKeyDigest}`,
  /** Sorted set of a provider's in-flight call leases (member: lease id, score: expiry ms). */
  providerLeases: (provider: string): string => `svc:prov:{p:${provider}}:leases`,
  /** A key's rate-limit state: GCRA theoretical arrival time in Redis-clock microseconds. */
  keyRate: (accountId: string, keyId: string): string => `{a:${accountId}}:rate:${keyId}`,
  /** Sorted set of an account's searches in flight (member: request id, score: expiry ms, Redis clock). */
  accountInFlight: (accountId: string): string => `{a:${accountId}}:inflight`,
} as const;
