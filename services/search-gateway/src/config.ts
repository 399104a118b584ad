import { bool, ConfigError, int, oneOf, parseEnv, readSetting, secret, str, url, redisUrls } from '@svc/config';
import type { EnvOf } from '@svc/config';
import { DEFAULT_CACHE_PRICE_PERCENT, isModelId } from '@svc/contracts';
import { parseTrustedProxies } from '@svc/http-edge';
import type { AddressList } from '@svc/http-edge';
import { serviceKekRing } from '@svc/keys';
import type { KekRing } from '@svc/keys';

/** The gateway's environment, read once at start. */
export const gatewayEnvSchema = {
  PORT: int({ default: 8080, min: 0, max: 65535 }),
  /** Prometheus text at GET /metrics on this port (never the public one). */
  METRICS_PORT: int({ default: 9464, min: 0, max: 65535 }),
  HOST: str({ default: '0.0.0.0' }),
  /** One Redis, or with REDIS_CLUSTER=true a comma-separated list of seed nodes of a Redis Cluster (any node will do). */
  REDIS_URL: redisUrls({ default: 'redis://127.0.0.1:6379' }),
  REDIS_CLUSTER: bool({ default: false }),
  ACCOUNT_ADMIN_GRPC_URL: str({ default: '127.0.0.1:50051' }),
  ACCOUNT_ADMIN_HTTP_URL: url({ default: 'http://127.0.0.1:3001', protocols: ['http', 'https'] }),
  BILLING_HTTP_URL: url({ default: 'http://127.0.0.1:3002', protocols: ['http', 'https'] }),
  /** The platform's public base URL, without a path: the connector resource (`/mcp/oauth`) and its OAuth issuer live under it (docs/decisions/0029). */
  PUBLIC_BASE_URL: url({ default: 'http://localhost:8080', protocols: ['http', 'https'] }),
  INTERNAL_TOKEN: secret({ minLength: 16 }),
  /**
   * The load balancers and proxies in front of the gateway, as comma-separated IPv4/IPv6 CIDRs
   * (docs/operations.md, "Client addresses and TRUSTED_PROXIES"). Empty: X-Forwarded-For is
   * ignored and the client's address is the socket's.
   */
  TRUSTED_PROXIES: str({ default: '' }),
  /** The whole request (headers and body) must arrive within this, else 408 and the connection closes. */
  HTTP_REQUEST_TIMEOUT_MS: int({ default: 30_000, min: 100, max: 600_000 }),
  /** The deepest nesting of objects and arrays a JSON body may have; deeper is 400 before any parse. */
  HTTP_MAX_BODY_DEPTH: int({ default: 32, min: 1, max: 1_000 }),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
  KEY_CACHE_TTL_MS: int({ default: 5000, min: 0, max: 3_600_000 }),
  KEY_CACHE_MAX_ENTRIES: int({ default: 100_000, min: 1, max: 10_000_000 }),
  KEY_PROPAGATION_MAX_MS: int({ default: 15_000, min: 0, max: 3_600_000 }),
  /** The most the gateway's and account-admin's clocks may differ (part of the propagation bound). */
  KEY_CLOCK_SKEW_MS: int({ default: 1_000, min: 0, max: 3_600_000 }),
  KEY_CHANGES_SUBSCRIBE: bool({ default: true }),
  RATE_LIMIT_PER_SECOND: int({ default: 20, min: 1, max: 1_000_000 }),
  RATE_LIMIT_BURST: int({ default: 40, min: 1, max: 1_000_000 }),
  ACCOUNT_MAX_IN_FLIGHT: int({ default: 50, min: 1, max: 1_000_000 }),
  /** How long an account in-flight lease lives unless its search ends or moves on; 0: PROVIDER_TIMEOUT_MS + 5000. */
  ACCOUNT_LEASE_TTL_MS: int({ default: 0, min: 0, max: 3_600_000 }),
  BYOK_ENABLED: bool({ default: true }),
  BYOK_FEE_PERCENT: int({ default: 5, min: 0, max: 100 }),
  /** Key-encryption key of provider keys (base64, 32 bytes) and its id; required with BYOK_ENABLED. */
  PROVIDER_KEY_KEK: secret({ optional: true }),
  PROVIDER_KEY_KEK_ID: str({ optional: true }),
  /** During a KEK rotation: `<previous id>:<base64 key>`. */
  PROVIDER_KEY_KEK_PREVIOUS: secret({ optional: true }),
  BRAVE_API_KEY: secret({ optional: true }),
  EXA_API_KEY: secret({ optional: true }),
  TAVILY_API_KEY: secret({ optional: true }),
  BRAVE_BASE_URL: url({ default: 'https://api.search.brave.com/res/v1', protocols: ['http', 'https'] }),
  EXA_BASE_URL: url({ default: 'https://api.exa.ai', protocols: ['http', 'https'] }),
  TAVILY_BASE_URL: url({ default: 'https://api.tavily.com', protocols: ['http', 'https'] }),
  PROVIDER_TIMEOUT_MS: int({ default: 15_000, min: 1, max: 600_000 }),
  /**
   * The longest a search may run in all (every fallback attempt together): no attempt starts
   * after it, and the last one's timeout is cut to what is left. The pods' grace period is
   * set above it, so a rollout never cuts a search short.
   */
  SEARCH_MAX_DURATION_MS: int({ default: 45_000, min: 1, max: 3_600_000 }),
  /** After SIGTERM: how long the gateway keeps serving (unready, connection: close) before it stops accepting. */
  SHUTDOWN_DELAY_MS: int({ default: 5_000, min: 0, max: 600_000 }),
  /**
   * How long a search's settlement keeps being tried while its Redis connection is down (a
   * master failing over to its replica) before the search answers 500; the reply waits
   * meanwhile. Above the cluster's failover time (about cluster-node-timeout plus a second):
   * docs/decisions/0030.
   */
  SETTLE_OUTAGE_WAIT_MS: int({ default: 10_000, min: 0, max: 60_000 }),
  /**
   * Provider health and the breaker (docs/decisions/0027). The breaker judges the platform's
   * key of each provider over a rolling window shared by every gateway; off, the outcomes are
   * still counted (GET /v1/status, metrics) but no provider is ever skipped.
   */
  PROVIDER_BREAKER_ENABLED: bool({ default: true }),
  PROVIDER_BREAKER_WINDOW_MS: int({ default: 30_000, min: 1_000, max: 3_600_000 }),
  PROVIDER_BREAKER_MIN_CALLS: int({ default: 20, min: 1, max: 1_000_000 }),
  PROVIDER_BREAKER_FAILURE_PERCENT: int({ default: 50, min: 1, max: 100 }),
  /** Timeouts in a row (across gateways) that open the breaker whatever the window holds; 0: never by streak. */
  PROVIDER_BREAKER_TIMEOUT_STREAK: int({ default: 5, min: 0, max: 1_000_000 }),
  /** How long an open breaker skips the provider before one probe (the Retry-After of an all-skipped 503). */
  PROVIDER_BREAKER_COOLDOWN_MS: int({ default: 30_000, min: 1_000, max: 3_600_000 }),
  /** The probe's query, sent with the platform's key to the provider's cheapest model for 1 result. */
  PROVIDER_PROBE_QUERY: str({ default: 'search gateway health probe' }),
  /** How often a gateway adds its outcomes to the shared window, and reads every breaker's state. */
  PROVIDER_HEALTH_FLUSH_MS: int({ default: 1_000, min: 50, max: 60_000 }),
  PROVIDER_HEALTH_REFRESH_MS: int({ default: 1_000, min: 50, max: 60_000 }),
  /** A model is `degraded` when at least this percentage of its calls failed over the last 5 minutes... */
  PROVIDER_DEGRADED_FAILURE_PERCENT: int({ default: 10, min: 1, max: 100 }),
  /** ...from this many calls on. */
  PROVIDER_DEGRADED_MIN_CALLS: int({ default: 10, min: 1, max: 1_000_000 }),
  PROVIDER_MAX_IN_FLIGHT_BRAVE: int({ default: 50, min: 0, max: 1_000_000 }),
  PROVIDER_MAX_IN_FLIGHT_EXA: int({ default: 10, min: 0, max: 1_000_000 }),
  PROVIDER_MAX_IN_FLIGHT_TAVILY: int({ default: 16, min: 0, max: 1_000_000 }),
  /** The shared result cache and the coalescing of identical searches (docs/operations.md, "Result cache"). */
  CACHE_ENABLED: bool({ default: true }),
  /** A Redis of its own for the cache (recommended: maxmemory with allkeys-lru); unset: REDIS_URL. */
  CACHE_REDIS_URL: redisUrls({ optional: true }),
  CACHE_REDIS_CLUSTER: bool({ default: false }),
  /** A hit or joined search costs this percentage of the model's base price (rounded to the micro-USD). */
  CACHE_PRICE_PERCENT: int({ default: DEFAULT_CACHE_PRICE_PERCENT, min: 0, max: 100 }),
  /** How long an entry lives, in seconds, unless CACHE_TTL_BY_MODEL names its model. */
  CACHE_TTL_S: int({ default: 3_600, min: 1, max: 604_800 }),
  /** Per-model exceptions to CACHE_TTL_S: `model=seconds`, comma-separated (news changes fast). */
  CACHE_TTL_BY_MODEL: str({ default: 'brave/news=600' }),
  /** An answer larger than this (bytes, as stored) is not cached. */
  CACHE_MAX_ENTRY_BYTES: int({ default: 262_144, min: 1_024, max: 16_777_216 }),
  /** How often a search waiting for an identical one in flight looks for its answer (ms). */
  CACHE_JOIN_POLL_MS: int({ default: 20, min: 1, max: 1_000 }),
  /** How long a gateway answers from its own copy of an entry its lookup found in Redis (ms; 0: always ask Redis). */
  CACHE_LOCAL_TTL_MS: int({ default: 1_000, min: 0, max: 60_000 }),
  /** The most those copies hold in a gateway's memory (bytes); the oldest go first. */
  CACHE_LOCAL_MAX_BYTES: int({ default: 33_554_432, min: 0, max: 1_073_741_824 }),
  /**
   * V8's allocation-site pretenuring. Off by default: under load it sometimes marked the
   * search path's short-lived objects long-lived, and that process then spent about half as
   * much CPU again per search (docs/decisions/0033).
   */
  V8_PRETENURING: bool({ default: false }),
};

export type GatewayConfig = Omit<EnvOf<typeof gatewayEnvSchema>, 'INTERNAL_TOKEN' | 'CACHE_TTL_BY_MODEL' | 'TRUSTED_PROXIES'> & {
  readonly INTERNAL_TOKEN: string;
  /** TRUSTED_PROXIES parsed. */
  readonly TRUSTED_PROXIES: AddressList;
  /** CACHE_TTL_BY_MODEL parsed: seconds by catalog model id. */
  readonly CACHE_TTL_BY_MODEL: ReadonlyMap<string, number>;
  /** The provider-key KEKs; null when BYOK is disabled (then no account key is ever used). */
  readonly kekRing: KekRing | null;
};

/** The KEK ring: required with BYOK enabled; a problem names the variable, never the value. */
function kekRingOf(source: NodeJS.ProcessEnv, byokEnabled: boolean): KekRing | null {
  const ring = readSetting(() => serviceKekRing(source, byokEnabled));
  return byokEnabled ? ring : null;
}

/**
 * Parses the environment and checks the rules between variables: a cached key state may
 * never outlive the propagation bound of spec section 3, a search's bound must hold the
 * longest arrival of a request and one provider call, and an account lease must outlive one
 * provider call. ACCOUNT_LEASE_TTL_MS comes back resolved (never 0).
 */
export function parseGatewayConfig(source: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const config = parseEnv(gatewayEnvSchema, source);
  const internalToken = config.INTERNAL_TOKEN;
  if (internalToken === undefined) throw new ConfigError('INTERNAL_TOKEN', 'is required');
  if (config.KEY_CACHE_TTL_MS > config.KEY_PROPAGATION_MAX_MS) {
    throw new ConfigError('KEY_CACHE_TTL_MS', `must not exceed KEY_PROPAGATION_MAX_MS (${config.KEY_PROPAGATION_MAX_MS})`);
  }
  // A search's time runs from its request's arrival: a request that took all of
  // HTTP_REQUEST_TIMEOUT_MS to arrive must still leave its first attempt its whole provider
  // timeout (decision 0044). Else a slow sender cuts every first attempt short.
  const arrivalAndCall = config.HTTP_REQUEST_TIMEOUT_MS + config.PROVIDER_TIMEOUT_MS;
  if (config.SEARCH_MAX_DURATION_MS < arrivalAndCall) {
    throw new ConfigError(
      'SEARCH_MAX_DURATION_MS',
      `(${config.SEARCH_MAX_DURATION_MS}) must be at least HTTP_REQUEST_TIMEOUT_MS (${config.HTTP_REQUEST_TIMEOUT_MS}) + PROVIDER_TIMEOUT_MS (${config.PROVIDER_TIMEOUT_MS}) = ${arrivalAndCall}: `
        + 'a request that took its whole arrival time would leave its first provider call less than its timeout; raise SEARCH_MAX_DURATION_MS or lower the others',
    );
  }
  const leaseTtlMs = config.ACCOUNT_LEASE_TTL_MS === 0 ? config.PROVIDER_TIMEOUT_MS + 5_000 : config.ACCOUNT_LEASE_TTL_MS;
  // A lease shorter than one provider call would let a slow search stop counting while it still runs.
  if (leaseTtlMs <= config.PROVIDER_TIMEOUT_MS) {
    throw new ConfigError('ACCOUNT_LEASE_TTL_MS', `must exceed PROVIDER_TIMEOUT_MS (${config.PROVIDER_TIMEOUT_MS})`);
  }
  return {
    ...config, ACCOUNT_LEASE_TTL_MS: leaseTtlMs, INTERNAL_TOKEN: internalToken, kekRing: kekRingOf(source, config.BYOK_ENABLED),
    CACHE_TTL_BY_MODEL: parseTtlByModel(config.CACHE_TTL_BY_MODEL),
    TRUSTED_PROXIES: trustedProxiesOf(config.TRUSTED_PROXIES),
  };
}

/** TRUSTED_PROXIES: comma-separated CIDRs; a bad entry stops the gateway naming it. */
export function trustedProxiesOf(raw: string): AddressList {
  try {
    return parseTrustedProxies(raw);
  } catch (error) {
    throw new ConfigError('TRUSTED_PROXIES', error instanceof Error ? error.message : String(error));
  }
}

/** `model=seconds,...` with catalog models and seconds from 1 to 604,800; empty: none. */
export function parseTtlByModel(raw: string): ReadonlyMap<string, number> {
  const ttls = new Map<string, number>();
  for (const part of raw.split(',')) {
    const item = part.trim();
    if (item === '') continue;
    const match = /^([^=\s]+)=(\d{1,6})$/.exec(item);
    if (match === null) throw new ConfigError('CACHE_TTL_BY_MODEL', `must be model=seconds pairs, comma-separated (got "${item}")`);
    const [, model, seconds] = match as unknown as [string, string, string];
    if (!isModelId(model)) throw new ConfigError('CACHE_TTL_BY_MODEL', `names an unknown model "${model}"`);
    const value = Number(seconds);
    if (value < 1 || value > 604_800) throw new ConfigError('CACHE_TTL_BY_MODEL', `seconds must be from 1 to 604800 (got ${value} for ${model})`);
    ttls.set(model, value);
  }
  return ttls;
}

/** For main: parse, or print the problem (never a secret's value) and exit with status 1. */
export function loadGatewayConfigOrExit(): GatewayConfig {
  try {
    return parseGatewayConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`search-gateway: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}
