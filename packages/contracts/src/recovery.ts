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
  /**
   * The epoch of one shard (docs/decisions/0030): `epoch` itself on a single Redis
   * (`hashTag` null); on a Redis Cluster one key per slot range, under a hash tag of the
   * range's first slot (`@svc/redis-client` shardKeys), so every master holds the epochs of
   * its ranges and a master that comes back empty loses exactly those.
   */
  shardEpoch: (hashTag: string | null): string => (hashTag === null ? 'svc:money:epoch' : `svc:money:epoch:${hashTag}`),
  /** Accounts a gateway or the outbox found cold: the ledger worker hydrates them. */
  hydrationWanted: 'svc:money:hydrate',
  /** Request ids the ledger worker made durable (or dead-lettered) during one minute (`bucket` = Redis ms / 60,000). */
  settleConfirmed: (bucket: number): string => `svc:settle:confirmed:${bucket}`,
} as const;

/** How long a confirmation bucket lives (the gateways check the current and previous minute). */
export const SETTLE_CONFIRM_TTL_SECONDS = 600;
/** Length of one confirmation bucket. */
export const SETTLE_CONFIRM_BUCKET_MS = 60_000;


/**
 * The shards whose data was lost between two readings of the epochs (key to value): a key
 * read both times with another value (it was missing and written again). A key read only
 * now is a shard seen for the first time (a start, or a slot range that a resharding
 * created), not a loss.
 */
function lostShards(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] {
  const lost: string[] = [];
  for (const [key, value] of after) {
    const seen = before.get(key);
    if (seen !== undefined && seen !== value) lost.push(key);
  }
  return lost;
}

/**
 * The epoch of every shard a process has seen (docs/decisions/0030), for the gateway's
 * retainer and the ledger worker's hydration loop. `observe` takes a new reading and, when
 * shards were lost since the last one, runs `onLoss` with their keys. A lost shard's new
 * epoch is remembered only once `onLoss` resolved: when it fails (a re-send or a schedule
 * refused while the cluster is still down in part), the next reading finds the same loss
 * and runs it again.
 */
export class ShardEpochs {
  private readonly seen = new Map<string, string>();

  /** `onLoss`'s result, or undefined when no shard was lost. */
  async observe<T>(now: ReadonlyMap<string, string>, onLoss: (lost: readonly string[]) => Promise<T>): Promise<T | undefined> {
    const lost = lostShards(this.seen, now);
    for (const [key, value] of now) if (!lost.includes(key)) this.seen.set(key, value);
    if (lost.length === 0) return undefined;
    const result = await onLoss(lost);
    for (const [key, value] of now) this.seen.set(key, value);
    return result;
  }
}

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
