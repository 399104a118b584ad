import type { RedisBatch } from '../redis/redis-batch';
import { CACHE_SCRIPTS } from './cache.scripts';
import type { CacheScriptName } from './cache.scripts';

/** What the result cache needs of Redis: one of its scripts, run with its KEYS and ARGV. */
export interface CacheRedis {
  /** Resolves with the script's reply; rejects when Redis does not answer or answers an error. */
  run(name: CacheScriptName, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
}

/**
 * The cache's scripts on a RedisBatch: the gateway's batch connection (the one every search's
 * admission and settlement go through, when the cache shares REDIS_URL), or a batch of its own
 * on CACHE_REDIS_URL. Lookups and stores of concurrent searches join one write per event-loop
 * turn, with the money's commands when the connection is shared, instead of one socket write
 * per call on a command connection: on this machine a socket write costs the gateway more
 * than the rest of a cache hit (docs/decisions/0023, "The cache's connection").
 */
export function batchCacheRedis(batch: RedisBatch): CacheRedis {
  for (const [name, lua] of Object.entries(CACHE_SCRIPTS) as [CacheScriptName, string][]) batch.defineScript(name, { lua });
  return {
    async run(name, keys, args) {
      const [reply] = await batch.pipeline().add(name, keys.length, ...keys, ...args).exec();
      if (reply === undefined) throw new Error(`no reply to ${name}`);
      const [error, value] = reply;
      if (error !== null) throw error;
      return value;
    },
  };
}
