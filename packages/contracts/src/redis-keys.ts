/**
 * Redis key names, in one place. Everything of one account sits under the hash tag
 * `{a:<account id>}` so that multi-key scripts run unchanged on Redis Cluster. A key record
 * is read alone by its hash, before the account is known, so it has no account tag.
 */
export const redisKeys = {
  /** JSON KeyRecord, or a short-lived miss marker, written only by account-admin. */
  keyRecord: (keyHash: string): string => `svc:keyrec:${keyHash}`,
  /** Prefix of every per-account key. */
  accountTag: (accountId: string): string => `{a:${accountId}}`,
  /** Integer micro-USD a key has spent in the period starting at `periodStartMs` (UTC ms). */
  keyPeriodUsage: (accountId: string, keyId: string, periodStartMs: number): string =>
    `{a:${accountId}}:kuse:${keyId}:${periodStartMs}`,
  /** Integer micro-USD a key has spent in all time. */
  keyTotalUsage: (accountId: string, keyId: string): string => `{a:${accountId}}:kuse:${keyId}:all`,
} as const;
