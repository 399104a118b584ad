import { bool, ConfigError, int, oneOf, parseEnv, readSetting, redisUrls, secret, str, url } from '@svc/config';
import { parseTrustedProxies } from '@svc/http-edge';
import type { AddressList } from '@svc/http-edge';
import { serviceKekRing } from '@svc/keys';
import type { KekRing } from '@svc/keys';
import type { EnvOf } from '@svc/config';

/** account-admin's environment, read once at start (docs/development.md lists the shared names). */
export const configSchema = {
  PORT: int({ default: 3001, min: 0, max: 65535 }),
  GRPC_PORT: int({ default: 50051, min: 0, max: 65535 }),
  /** Prometheus text at GET /metrics on this port (never the public one). */
  METRICS_PORT: int({ default: 9465, min: 0, max: 65535 }),
  HOST: str({ default: '0.0.0.0' }),
  DATABASE_URL: url({ default: 'postgresql://postgres@127.0.0.1:5432/svc_account_admin', protocols: ['postgresql', 'postgres'] }),
  /** One Redis, or with REDIS_CLUSTER=true a comma-separated list of seed nodes of a Redis Cluster (any node will do). */
  REDIS_URL: redisUrls({ default: 'redis://127.0.0.1:6379' }),
  REDIS_CLUSTER: bool({ default: false }),
  INTERNAL_TOKEN: secret({ minLength: 16 }),
  /**
   * Proxies in front of account-admin when it is reached without the gateway (comma-separated
   * CIDRs; docs/operations.md, "Client addresses and TRUSTED_PROXIES"). Through the gateway the
   * client's address is the one the gateway resolved with its own TRUSTED_PROXIES.
   */
  TRUSTED_PROXIES: str({ default: '' }),
  /** billing's internal HTTP API: the dashboard's credits, checkout, usage and history (docs/decisions/0010). */
  BILLING_HTTP_URL: url({ default: 'http://127.0.0.1:3002', protocols: ['http', 'https'] }),
  /** The whole request (headers and body) must arrive within this, else 408 and the connection closes. */
  HTTP_REQUEST_TIMEOUT_MS: int({ default: 30_000, min: 100, max: 600_000 }),
  /** The deepest nesting of objects and arrays a JSON body may have; deeper is 400 before any parse. */
  HTTP_MAX_BODY_DEPTH: int({ default: 32, min: 1, max: 1_000 }),
  /** After SIGTERM: how long the service keeps serving (unready, connection: close) before it stops accepting. */
  SHUTDOWN_DELAY_MS: int({ default: 5_000, min: 0, max: 600_000 }),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
  SESSION_TTL_HOURS: int({ default: 168, min: 1, max: 24 * 365 }),
  COOKIE_SECURE: bool({ default: true }),
  /** Sign-in and sign-up attempts allowed per email, and per client address, in one window. */
  SIGN_IN_ATTEMPTS_PER_EMAIL: int({ default: 10, min: 1, max: 1_000_000 }),
  SIGN_IN_ATTEMPTS_PER_ADDRESS: int({ default: 50, min: 1, max: 1_000_000 }),
  SIGN_IN_WINDOW_SECONDS: int({ default: 900, min: 1, max: 86_400 }),
  KEY_MISS_TTL_SECONDS: int({ default: 60, min: 1, max: 86_400 }),
  RATE_LIMIT_PER_SECOND: int({ default: 20, min: 1 }),
  RATE_LIMIT_BURST: int({ default: 40, min: 1 }),
  MIGRATE_ON_START: bool({ default: false }),
  /** How often the key-cache outbox loop looks for changes not yet confirmed in Redis. */
  KEY_OUTBOX_INTERVAL_MS: int({ default: 500, min: 10, max: 60_000 }),
  /** Lifetime of a live key record in Redis; a lost write heals by a LookupKey refill after it. */
  KEY_RECORD_TTL_SECONDS: int({ default: 3600, min: 1, max: 7 * 24 * 3600 }),
  /** The platform's public base URL (the gateway's), without a path: the OAuth issuer and the connector resource's origin (docs/decisions/0029). */
  PUBLIC_BASE_URL: url({ default: 'http://localhost:8080', protocols: ['http', 'https'] }),
  /**
   * Local and test stacks only: lets a Client ID Metadata Document be fetched over http and from
   * loopback or private addresses. Off in production, where such a fetch would be server-side
   * request forgery.
   */
  OAUTH_CLIENT_METADATA_ALLOW_PRIVATE: bool({ default: false }),
  /**
   * Anonymous writes of the OAuth authorization server, per client address (an IPv6 address
   * counts for its /64) in a fixed hour: dynamic registrations (POST /oauth/register) and
   * authorization requests (GET /oauth/authorize); over it, 429 rate_limited with Retry-After.
   * Chat apps register from their own servers, so the first counts a whole app's egress address.
   */
  OAUTH_REGISTER_PER_ADDRESS_PER_HOUR: int({ default: 120, min: 1, max: 1_000_000 }),
  OAUTH_AUTHORIZE_PER_ADDRESS_PER_HOUR: int({ default: 300, min: 1, max: 1_000_000 }),
  /** How often each replica deletes expired OAuth requests, codes and tokens and unused metadata-document clients. */
  OAUTH_SWEEP_INTERVAL_MS: int({ default: 600_000, min: 100, max: 86_400_000 }),
  /** Provider keys (BYOK) can be stored; false: /v1/provider-keys answers 503 byok_disabled. */
  BYOK_ENABLED: bool({ default: true }),
  /** Key-encryption key of provider keys (base64, 32 bytes) and its id; read by kekRingFromEnv. */
  PROVIDER_KEY_KEK: secret({ optional: true }),
  PROVIDER_KEY_KEK_ID: str({ optional: true }),
  /** During a KEK rotation: `<previous id>:<base64 key>`. */
  PROVIDER_KEY_KEK_PREVIOUS: secret({ optional: true }),
};

export type AppConfig = Omit<EnvOf<typeof configSchema>, 'TRUSTED_PROXIES'> & {
  readonly INTERNAL_TOKEN: string;
  /** TRUSTED_PROXIES parsed. */
  readonly TRUSTED_PROXIES: AddressList;
  /** The provider-key KEKs; null only when BYOK is disabled and no KEK is set. */
  readonly kekRing: KekRing | null;
};

/**
 * The KEK ring, required when BYOK is enabled: a missing or bad KEK stops the service with
 * a ConfigError naming the variable (the local stack makes one in .local/secrets.json).
 */
export function kekRingOf(source: NodeJS.ProcessEnv, byokEnabled: boolean): KekRing | null {
  return readSetting(() => serviceKekRing(source, byokEnabled));
}

/** Parses the environment; throws a ConfigError naming the first bad variable. */
export function parseConfig(source: NodeJS.ProcessEnv = process.env): AppConfig {
  const env = parseEnv(configSchema, source);
  const token = env.INTERNAL_TOKEN;
  if (token === undefined) throw new Error('INTERNAL_TOKEN is required');
  let trustedProxies: AddressList;
  try {
    trustedProxies = parseTrustedProxies(env.TRUSTED_PROXIES);
  } catch (error) {
    throw new ConfigError('TRUSTED_PROXIES', error instanceof Error ? error.message : String(error));
  }
  return { ...env, INTERNAL_TOKEN: token, TRUSTED_PROXIES: trustedProxies, kekRing: kekRingOf(source, env.BYOK_ENABLED) };
}

/** Nest injection token of the AppConfig. */
export const APP_CONFIG = Symbol('APP_CONFIG');
