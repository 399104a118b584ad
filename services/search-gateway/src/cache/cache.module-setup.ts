import type { Registry } from '@svc/metrics';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config';
import { RedisBatch } from '../redis/redis-batch';
import { batchCacheRedis } from './cache.redis';
import { CacheMetrics } from './cache.metrics';
import { ResultCache } from './result-cache';

/** How long a provider lease outlives its call (SearchSettings.leaseMarginMs): a lead lives as long. */
export const CACHE_LEAD_MARGIN_MS = 5_000;

/**
 * The gateway's result cache, or null with CACHE_ENABLED=false. On CACHE_REDIS_URL it has a
 * batch connection of its own (`own`, closed at shutdown), else it shares the batch
 * connection of the searches' money (REDIS_URL).
 */
export function createResultCache(config: GatewayConfig, shared: RedisBatch, registry: Registry, log: Logger): { cache: ResultCache; own: RedisBatch | null } | null {
  if (!config.CACHE_ENABLED) return null;
  let own: RedisBatch | null = null;
  if (config.CACHE_REDIS_URL !== undefined) {
    const cacheLog = log.child({ component: 'cache-redis' });
    own = new RedisBatch({ url: config.CACHE_REDIS_URL, cluster: config.CACHE_REDIS_CLUSTER }, (error) => cacheLog.warn({ err: error.message }, 'cache redis connection error'));
  }
  const defaultTtlMs = config.CACHE_TTL_S * 1000;
  const ttls = config.CACHE_TTL_BY_MODEL;
  const cache = new ResultCache(batchCacheRedis(own ?? shared), {
    pricePercent: config.CACHE_PRICE_PERCENT,
    ttlMs: (modelId) => {
      const seconds = ttls.get(modelId);
      return seconds === undefined ? defaultTtlMs : seconds * 1000;
    },
    maxEntryBytes: config.CACHE_MAX_ENTRY_BYTES,
    pollMs: config.CACHE_JOIN_POLL_MS,
    localTtlMs: config.CACHE_LOCAL_TTL_MS,
    localMaxBytes: config.CACHE_LOCAL_MAX_BYTES,
  }, log.child({ component: 'cache' }), new CacheMetrics(registry));
  cache.useLeadLifetime(config.PROVIDER_TIMEOUT_MS + CACHE_LEAD_MARGIN_MS);
  return { cache, own };
}
