import { isCluster } from './redis-client';
import type { RedisClient } from './redis-client';
import { CLUSTER_SLOTS, keySlot } from './slots';

const tags = new Map<number, string>();

/**
 * A hash tag whose slot is `slot`: the first of `s0`, `s1`, `s2`, ... that hashes there
 * (about 16,000 CRC16 checks the first time a slot is asked for; remembered after).
 */
export function slotTag(slot: number): string {
  if (!Number.isInteger(slot) || slot < 0 || slot >= CLUSTER_SLOTS) throw new RangeError(`no hash slot ${slot}`);
  const known = tags.get(slot);
  if (known !== undefined) return known;
  for (let i = 0; ; i += 1) {
    const tag = `s${i}`;
    const at = keySlot(tag);
    if (!tags.has(at)) tags.set(at, tag);
    if (at === slot) return tag;
  }
}

/**
 * One key per shard of the keyspace: `keyOf(null)` on a single Redis; on a Redis Cluster
 * `keyOf(tag)` for the first slot of every slot range `CLUSTER SLOTS` names (a master that
 * serves several ranges, after a resharding, has one key per range). Written on every shard,
 * such keys tell which shard lost its data: a master restarted empty loses the ones it held.
 */
export async function shardKeys(client: RedisClient, keyOf: (tag: string | null) => string): Promise<string[]> {
  if (!isCluster(client)) return [keyOf(null)];
  const ranges = (await client.cluster('SLOTS')) as unknown as [number, number, ...unknown[]][];
  const starts = [...new Set(ranges.map(([start]) => start))].sort((a, b) => a - b);
  if (starts.length === 0) throw new Error('the Redis Cluster serves no slot');
  return starts.map((start) => keyOf(`{${slotTag(start)}}`));
}
