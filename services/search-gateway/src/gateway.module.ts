import { Module } from '@nestjs/common';
import type { DynamicModule } from '@nestjs/common';
import { Counter, createRegistry, HttpMetrics } from '@svc/metrics';
import type { Registry } from '@svc/metrics';
import { DrainState } from '@svc/http-edge';
import type { Logger } from 'pino';
import { AuthChain } from './auth/auth-chain';
import { KeyCache } from './auth/key-cache';
import { KeyChangesSubscriber } from './auth/key-changes.subscriber';
import { GrpcKeyOwner } from './auth/key-lookup.grpc';
import { RedisKeyRecordStore } from './auth/key-record.store';
import { keyStateBound } from './auth/key-state-bound';
import { ProviderKeyCache } from './byok/provider-key-cache';
import { GrpcProviderKeySource } from './byok/provider-key-source.grpc';
import { CACHE_LEAD_MARGIN_MS, createResultCache } from './cache/cache.module-setup';
import { CatalogService } from './catalog/catalog.service';
import type { GatewayConfig } from './config';
import { ForwardService } from './forward/forward.routes';
import { UpstreamClient } from './forward/upstream.client';
import { GatewayLifecycle } from './gateway.lifecycle';
import { GatewayHttp } from './http/gateway.http';
import { McpEndpoint } from './mcp/mcp.endpoint';
import { MoneyRepository } from './money/money.repository';
import { SettlementResender } from './money/settlement-resender';
import { ProviderRegistry } from './providers';
import { ProviderHealth, catalogHealth, providerHealthMetrics } from './provider-health';
import { MainRedisClient } from './redis/main-redis.client';
import { SearchLifecycle, SearchMetrics, SearchService } from './search';

export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');
export const GATEWAY_LOGGER = Symbol('GATEWAY_LOGGER');
/** The process's Prometheus registry (served on METRICS_PORT by main.ts). */
export const GATEWAY_METRICS = Symbol('GATEWAY_METRICS');
const ACCOUNT_ADMIN_UPSTREAM = Symbol('ACCOUNT_ADMIN_UPSTREAM');
const BILLING_UPSTREAM = Symbol('BILLING_UPSTREAM');
const KEY_CHANGES = Symbol('KEY_CHANGES');
/** The result cache (null with CACHE_ENABLED=false) and its own Redis connection when CACHE_REDIS_URL is set. */
const RESULT_CACHE = Symbol('RESULT_CACHE');
type ResultCacheSetup = Awaited<ReturnType<typeof createResultCache>>;

/** The gateway's object graph; every class is plain and built by a factory here. */
@Module({})
export class GatewayModule {
  static forRoot(config: GatewayConfig, log: Logger, registry: Registry = createRegistry('search-gateway')): DynamicModule {
    return {
      module: GatewayModule,
      providers: [
        { provide: GATEWAY_CONFIG, useValue: config },
        { provide: GATEWAY_LOGGER, useValue: log },
        { provide: MainRedisClient, useFactory: () => new MainRedisClient({ url: config.REDIS_URL, cluster: config.REDIS_CLUSTER }, log) },
        { provide: GATEWAY_METRICS, useValue: registry },
        { provide: DrainState, useValue: new DrainState() },
        {
          provide: RESULT_CACHE,
          useFactory: (money: MoneyRepository) => {
            const setup = createResultCache(config, money.sharedBatch, registry, log);
            // Nest calls this at shutdown: the cache's own connection (if any) closes with the process.
            return { setup, onApplicationShutdown: () => setup?.own?.close() };
          },
          inject: [MoneyRepository],
        },
        {
          provide: KeyCache,
          useFactory: () => {
            const cache = new KeyCache({ ttlMs: config.KEY_CACHE_TTL_MS, maxEntries: config.KEY_CACHE_MAX_ENTRIES });
            keyCacheMetrics(registry, cache);
            return cache;
          },
        },
        { provide: GrpcKeyOwner, useFactory: () => new GrpcKeyOwner(config.ACCOUNT_ADMIN_GRPC_URL) },
        {
          provide: AuthChain,
          useFactory: (cache: KeyCache, redis: MainRedisClient, owner: GrpcKeyOwner) => {
            const bound = keyStateBound(config);
            return new AuthChain({ cache, store: new RedisKeyRecordStore(redis.client, bound), owner, log, bound, trustedProxies: config.TRUSTED_PROXIES });
          },
          inject: [KeyCache, MainRedisClient, GrpcKeyOwner],
        },
        { provide: GrpcProviderKeySource, useFactory: () => new GrpcProviderKeySource(config.ACCOUNT_ADMIN_GRPC_URL) },
        {
          provide: ProviderKeyCache,
          useFactory: (source: GrpcProviderKeySource) =>
            new ProviderKeyCache(source, config.kekRing, {
              ttlMs: config.KEY_CACHE_TTL_MS,
              staleMaxMs: config.KEY_PROPAGATION_MAX_MS,
              maxEntries: config.KEY_CACHE_MAX_ENTRIES,
            }, log.child({ component: 'provider-keys' })),
          inject: [GrpcProviderKeySource],
        },
        {
          provide: KEY_CHANGES,
          useFactory: (auth: AuthChain, providerKeys: ProviderKeyCache) =>
            (config.KEY_CHANGES_SUBSCRIBE
              ? new KeyChangesSubscriber({ url: config.REDIS_URL, cluster: config.REDIS_CLUSTER }, auth, log, providerKeys.enabled ? providerKeys : null)
              : null),
          inject: [AuthChain, ProviderKeyCache],
        },
        { provide: ACCOUNT_ADMIN_UPSTREAM, useFactory: () => new UpstreamClient(config.ACCOUNT_ADMIN_HTTP_URL) },
        { provide: BILLING_UPSTREAM, useFactory: () => new UpstreamClient(config.BILLING_HTTP_URL) },
        {
          provide: ForwardService,
          useFactory: (auth: AuthChain, accountAdmin: UpstreamClient, billing: UpstreamClient, providerKeys: ProviderKeyCache) =>
            new ForwardService(auth, { 'account-admin': accountAdmin, billing }, config.INTERNAL_TOKEN, log, providerKeys),
          inject: [AuthChain, ACCOUNT_ADMIN_UPSTREAM, BILLING_UPSTREAM, ProviderKeyCache],
        },
        {
          provide: CatalogService,
          useFactory: (health: ProviderHealth) => {
            const configured = { brave: config.BRAVE_API_KEY !== undefined, exa: config.EXA_API_KEY !== undefined, tavily: config.TAVILY_API_KEY !== undefined };
            return new CatalogService(configured, { enabled: config.BYOK_ENABLED, feePercent: config.BYOK_FEE_PERCENT }, catalogHealth(health, configured), config.CACHE_ENABLED ? config.CACHE_PRICE_PERCENT : null);
          },
          inject: [ProviderHealth],
        },
        {
          // Provider health and the breaker (docs/decisions/0027): its loops start here and stop with the process.
          provide: ProviderHealth,
          useFactory: (providers: ProviderRegistry, redis: MainRedisClient) => {
            const health = new ProviderHealth(redis.client, providers, {
              breakerEnabled: config.PROVIDER_BREAKER_ENABLED,
              windowMs: config.PROVIDER_BREAKER_WINDOW_MS,
              minCalls: config.PROVIDER_BREAKER_MIN_CALLS,
              failurePercent: config.PROVIDER_BREAKER_FAILURE_PERCENT,
              timeoutStreak: config.PROVIDER_BREAKER_TIMEOUT_STREAK,
              cooldownMs: config.PROVIDER_BREAKER_COOLDOWN_MS,
              flushMs: config.PROVIDER_HEALTH_FLUSH_MS,
              refreshMs: config.PROVIDER_HEALTH_REFRESH_MS,
              probeQuery: config.PROVIDER_PROBE_QUERY,
              probeTimeoutMs: config.PROVIDER_TIMEOUT_MS,
              degradedFailurePercent: config.PROVIDER_DEGRADED_FAILURE_PERCENT,
              degradedMinCalls: config.PROVIDER_DEGRADED_MIN_CALLS,
            }, log.child({ component: 'provider-health' }));
            providerHealthMetrics(registry, health);
            health.start();
            return health;
          },
          inject: [ProviderRegistry, MainRedisClient],
        },
        { provide: SearchMetrics, useFactory: () => new SearchMetrics(registry) },
        {
          provide: ProviderRegistry,
          // Every provider call is timed (the metrics observe each adapter through a TimedProvider).
          useFactory: (metrics: SearchMetrics) =>
            new ProviderRegistry({
              brave: { baseUrl: config.BRAVE_BASE_URL, ...(config.BRAVE_API_KEY === undefined ? {} : { apiKey: config.BRAVE_API_KEY }) },
              exa: { baseUrl: config.EXA_BASE_URL, ...(config.EXA_API_KEY === undefined ? {} : { apiKey: config.EXA_API_KEY }) },
              tavily: { baseUrl: config.TAVILY_BASE_URL, ...(config.TAVILY_API_KEY === undefined ? {} : { apiKey: config.TAVILY_API_KEY }) },
            }, metrics),
          inject: [SearchMetrics],
        },
        {
          // The search's money in Redis: its own batch connections, its logger. The background
          // re-send of settlements is its own object, given to the repository.
          provide: MoneyRepository,
          useFactory: (redis: MainRedisClient) =>
            new MoneyRepository(redis.client, redis.target, { log: log.child({ component: 'money' }), resender: new SettlementResender(), settleOutageWaitMs: config.SETTLE_OUTAGE_WAIT_MS }),
          inject: [MainRedisClient],
        },
        {
          provide: SearchService,
          useFactory: (providers: ProviderRegistry, money: MoneyRepository, metrics: SearchMetrics, providerKeys: ProviderKeyCache, health: ProviderHealth, cache: { setup: ResultCacheSetup }) =>
            new SearchService(
              providers,
              money,
              {
                providerTimeoutMs: config.PROVIDER_TIMEOUT_MS,
                maxInFlight: { brave: config.PROVIDER_MAX_IN_FLIGHT_BRAVE, exa: config.PROVIDER_MAX_IN_FLIGHT_EXA, tavily: config.PROVIDER_MAX_IN_FLIGHT_TAVILY },
                leaseMarginMs: CACHE_LEAD_MARGIN_MS,
                maxDurationMs: config.SEARCH_MAX_DURATION_MS,
                idempotencyPollMs: 25,
                admission: {
                  ratePerSecond: config.RATE_LIMIT_PER_SECOND,
                  burst: config.RATE_LIMIT_BURST,
                  accountCap: config.ACCOUNT_MAX_IN_FLIGHT,
                  leaseTtlMs: config.ACCOUNT_LEASE_TTL_MS,
                },
                byokFeePercent: config.BYOK_FEE_PERCENT,
                fanoutWaitMs: config.FANOUT_WAIT_MS,
                fanoutRrfK: config.FANOUT_RRF_K,
              },
              metrics,
              log,
              providerKeys.enabled ? providerKeys : null,
              health,
              cache.setup?.cache,
            ),
          inject: [ProviderRegistry, MoneyRepository, SearchMetrics, ProviderKeyCache, ProviderHealth, RESULT_CACHE],
        },
        { provide: SearchLifecycle, useFactory: (providers: ProviderRegistry) => new SearchLifecycle(providers), inject: [ProviderRegistry] },
        {
          provide: McpEndpoint,
          useFactory: (auth: AuthChain, search: SearchService, catalog: CatalogService, billing: UpstreamClient) =>
            new McpEndpoint({ auth, search, catalog, billing, internalToken: config.INTERNAL_TOKEN, log, publicBaseUrl: config.PUBLIC_BASE_URL }),
          inject: [AuthChain, SearchService, CatalogService, BILLING_UPSTREAM],
        },
        {
          provide: GatewayHttp,
          useFactory: (
            catalog: CatalogService, forward: ForwardService, redis: MainRedisClient, auth: AuthChain, search: SearchService,
            metrics: SearchMetrics, drain: DrainState, mcp: McpEndpoint,
          ) =>
            new GatewayHttp(catalog, forward, redis, log, {
              auth,
              service: search,
              rateLimit: { limit: config.RATE_LIMIT_PER_SECOND },
              metrics,
            }, new HttpMetrics(registry), drain, mcp, config.HTTP_MAX_BODY_DEPTH),
          inject: [CatalogService, ForwardService, MainRedisClient, AuthChain, SearchService, SearchMetrics, DrainState, McpEndpoint],
        },
        {
          provide: GatewayLifecycle,
          useFactory: (redis: MainRedisClient, subscriber: KeyChangesSubscriber | null, owner: GrpcKeyOwner, accountAdmin: UpstreamClient, billing: UpstreamClient, search: SearchService, providerKeySource: GrpcProviderKeySource) =>
            new GatewayLifecycle(redis, subscriber, { close: () => { owner.close(); providerKeySource.close(); } }, [accountAdmin, billing], log, search),
          inject: [MainRedisClient, KEY_CHANGES, GrpcKeyOwner, ACCOUNT_ADMIN_UPSTREAM, BILLING_UPSTREAM, SearchService, GrpcProviderKeySource],
        },
      ],
      exports: [AuthChain, GatewayHttp, SearchMetrics, GATEWAY_METRICS, DrainState],
    };
  }
}

/** gateway_key_cache_total{result}: hits, misses and fills, read from the cache's counters at scrape. */
function keyCacheMetrics(registry: Registry, cache: KeyCache): void {
  let seen = { ...cache.stats };
  const counter: Counter<'result'> = new Counter({
    name: 'gateway_key_cache_total',
    help: 'Key cache lookups answered (hit), not answered (miss), and entries stored (fill)',
    labelNames: ['result'],
    registers: [registry],
    collect: () => {
      const now = { ...cache.stats };
      counter.labels('hit').inc(now.hits - seen.hits);
      counter.labels('miss').inc(now.misses - seen.misses);
      counter.labels('fill').inc(now.fills - seen.fills);
      seen = now;
    },
  });
  for (const result of ['hit', 'miss', 'fill']) counter.labels(result).inc(0);
}
