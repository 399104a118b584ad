import type { Registry } from '@svc/metrics';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config';
import { RedisCommandClient } from '../redis/main-redis.client';
import { CacheMetrics } from './cache.metrics';
import { ResultCache } from './result-cache';

/** How long a provider lease outlives its call (SearchSettings.leaseMarginMs): the lead lock lives as long. */
export const CACHE_LOCK_MARGIN_MS = 5_000;

/**
 * The gateway's result cache, or null with CACHE_ENABLED=false. On CACHE_REDIS_URL it has a
 * connection of its own (`own`, closed at shutdown), else it shares the gateway's main
 * Redis client (REDIS_URL).
 */
export async function createResultCache(config: GatewayConfig, shared: RedisCommandClient, registry: Registry, log: Logger): Promise<{ cache: ResultCache; own: RedisCommandClient | null } | null> {
  if (!config.CACHE_ENABLED) return null;
  let own: RedisCommandClient | null = null;
  if (config.CACHE_REDIS_URL !== undefined) {
    own = new RedisCommandClient({ url: config.CACHE_REDIS_URL, cluster: config.CACHE_REDIS_CLUSTER }, log.child({ component: 'cache-redis' }));
    await own.connect();
  }
  const defaultTtlMs = config.CACHE_TTL_S * 1000;
  const ttls = config.CACHE_TTL_BY_MODEL;
  const cache = new ResultCache((own ?? shared).client, {
    pricePercent: config.CACHE_PRICE_PERCENT,
    ttlMs: (modelId) => {
      const seconds = ttls.get(modelId);
      return seconds === undefined ? defaultTtlMs : seconds * 1000;
    },
    maxEntryBytes: config.CACHE_MAX_ENTRY_BYTES,
    pollMs: config.CACHE_JOIN_POLL_MS,
  }, log.child({ component: 'cache' }), new CacheMetrics(registry));
  cache.useLockLifetime(config.PROVIDER_TIMEOUT_MS + CACHE_LOCK_MARGIN_MS);
  return { cache, own };
}
