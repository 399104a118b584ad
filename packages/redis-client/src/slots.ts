import { createRequire } from 'node:module';

/** cluster-key-slot (the CRC16 hash slot ioredis uses too) ships CommonJS without types. */
const keySlotOf = createRequire(__filename)('cluster-key-slot') as (key: string) => number;

/** Redis Cluster's number of hash slots. */
export const CLUSTER_SLOTS = 16384;

/** The hash slot of a key (CRC16 of its `{hash tag}` when it has one), as Redis Cluster computes it. */
export function keySlot(key: string): number {
  return keySlotOf(key);
}
