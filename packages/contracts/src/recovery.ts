/**
 * Redis names of the recovery from a Redis that came back empty (docs/architecture.md,
 * "When Redis fails"). The epoch and the sets are global. An account is cold (not rebuilt since Redis lost its data) exactly
 * when its balance key `{a:X}:bal` is missing: nothing but a loss of Redis data deletes it.
 */
export const recoveryKeys = {
  /**
   * `<redis ms>:<random>`, SET NX by the first process (gateway or billing worker) that finds it
   * missing. A change or disappearance means Redis lost its data.
   */
  epoch: 'svc:money:epoch',
  /** Accounts a gateway or the outbox found cold: the ledger worker hydrates them. */
  hydrationWanted: 'svc:money:hydrate',
  /** Request ids the ledger worker made durable (or dead-lettered) during one minute (`bucket` = Redis ms / 60,000). */
  settleConfirmed: (bucket: number): string => `svc:settle:confirmed:${bucket}`,
} as const;

/** How long a confirmation bucket lives (the gateways check the current and previous minute). */
export const SETTLE_CONFIRM_TTL_SECONDS = 600;
/** Length of one confirmation bucket. */
export const SETTLE_CONFIRM_BUCKET_MS = 60_000;


/** The creation time (Redis ms) in an epoch value, or null when it is not one. */
export function epochCreatedMs(value: string): number | null {
  const head = value.split(':')[0] ?? '';
  const ms = Number(head);
  return /^\d+$/.test(head) && Number.isSafeInteger(ms) ? ms : null;
}

/**
 * Reads the epoch, creating it (Redis clock) when missing. KEYS[1] the epoch key,
 * ARGV[1] a random token. Returns {epoch value, Redis now ms}.
 */
export const ENSURE_EPOCH_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local value = redis.call('GET', KEYS[1])
if not value then
  value = string.format('%d', now) .. ':' .. ARGV[1]
  redis.call('SET', KEYS[1], value)
end
return {value, now}
`;
