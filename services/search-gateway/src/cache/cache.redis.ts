import type { RedisBatch } from '../redis/redis-batch';
import type { RespArg } from '../redis/resp-connection';
import { CACHE_SCRIPTS } from './cache.scripts';
import type { CacheScriptName } from './cache.scripts';

/** The plain commands the result cache sends (on one key each). */
export type CacheCommand = 'get' | 'set';

/** What the result cache needs of Redis: a plain command on one key, or one of its scripts. */
export interface CacheRedis {
  /** Resolves with the command's reply; rejects when Redis does not answer or answers an error. */
  command(name: CacheCommand, args: readonly RespArg[]): Promise<unknown>;
  /** One of the cache's scripts, run with its KEYS and ARGV; rejects as `command`. */
  run(name: CacheScriptName, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
}

/**
 * The cache's commands on a RedisBatch: the gateway's batch connection (the one every search's
 * admission and settlement go through, when the cache shares REDIS_URL), or a batch of its own
 * on CACHE_REDIS_URL. Lookups and stores of concurrent searches join one write per event-loop
 * turn, with the money's commands when the connection is shared, instead of one socket write
 * per call on a command connection: on this machine a socket write costs the gateway more
 * than the rest of a cache hit (docs/decisions/0023, "The cache's connection").
 */
export function batchCacheRedis(batch: RedisBatch): CacheRedis {
  for (const [name, lua] of Object.entries(CACHE_SCRIPTS) as [CacheScriptName, string][]) batch.defineScript(name, { lua });
  const send = (name: string, args: readonly RespArg[]): Promise<unknown> => batch.pipeline().add(name, ...args).exec().then(onlyReply);
  return {
    command: (name, args) => send(name, args),
    run: (name, keys, args) => send(name, [keys.length, ...keys, ...args]),
  };
}

/** A one-command pipeline's reply; its error thrown. */
function onlyReply(replies: readonly [Error | null, unknown][]): unknown {
  const [reply] = replies;
  if (reply === undefined) throw new Error('no reply from the cache redis');
  const [error, value] = reply;
  if (error !== null) throw error;
  return value;
}
