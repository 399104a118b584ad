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
  /**
   * Sign-up (docs/decisions/0055): `required` answers every sign-up alike ("check your email")
   * and makes the account only when the link mailed to the address is used; `off` makes the
   * account and its session at once and says when an address is taken (test stacks that sign
   * up many accounts). `required` needs SMTP_HOST.
   */
  SIGNUP_CONFIRMATION: oneOf(['required', 'off'], { default: 'required' }),
  /** How long a sign-up's confirmation link and a password-reset link work, from when they are mailed. */
  SIGNUP_CONFIRMATION_TTL_HOURS: int({ default: 24, min: 1, max: 24 * 30 }),
  PASSWORD_RESET_TTL_MINUTES: int({ default: 60, min: 1, max: 24 * 60 }),
  /**
   * Mails asked for anonymously, per recipient address and per client address, in one window
   * (MAIL_LIMIT_WINDOW_SECONDS): sign-ups (confirmation or "already registered") and password
   * resets, each counted on its own. Over a limit: 429 rate_limited, nothing mailed.
   */
  SIGNUP_MAILS_PER_EMAIL: int({ default: 3, min: 1, max: 1_000_000 }),
  SIGNUP_MAILS_PER_ADDRESS: int({ default: 20, min: 1, max: 1_000_000 }),
  PASSWORD_RESETS_PER_EMAIL: int({ default: 3, min: 1, max: 1_000_000 }),
  PASSWORD_RESETS_PER_ADDRESS: int({ default: 20, min: 1, max: 1_000_000 }),
  MAIL_LIMIT_WINDOW_SECONDS: int({ default: 3600, min: 1, max: 7 * 86_400 }),
  /**
   * The SMTP server mail goes out through (docs/operations.md, "Mail"). Unset: no mail is sent
   * (sign-up confirmation must then be off; a password reset is recorded as skipped).
   */
  SMTP_HOST: str({ optional: true }),
  SMTP_PORT: int({ default: 587, min: 1, max: 65535 }),
  /** `starttls`: plain connection upgraded with STARTTLS, required (port 587); `tls`: TLS from the first byte (port 465); `off`: no TLS (a local catcher only). */
  SMTP_TLS: oneOf(['starttls', 'tls', 'off'], { default: 'starttls' }),
  /** Credentials for SMTP AUTH; both or neither. */
  SMTP_USER: str({ optional: true }),
  SMTP_PASSWORD: secret({ optional: true }),
  /** The sender of every message, an address or `Name <address>`; required with SMTP_HOST. */
  MAIL_FROM: str({ optional: true }),
  /** Messages one account-admin process sends at once. */
  MAIL_CONCURRENCY: int({ default: 4, min: 1, max: 100 }),
  /** The first retry's delay after a failed send; each next one doubles (8 attempts in all). */
  MAIL_RETRY_BASE_DELAY_MS: int({ default: 30_000, min: 10, max: 3_600_000 }),
  /** How often each replica puts back on the queue messages whose job was lost, and deletes expired links and old records. */
  MAIL_DISPATCH_INTERVAL_MS: int({ default: 60_000, min: 100, max: 86_400_000 }),
  /** How long the record of a sent, failed or skipped message is kept. */
  MAIL_RECORD_RETENTION_DAYS: int({ default: 90, min: 1, max: 3_650 }),
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
  /** The SMTP server and sender, when mail is on (SMTP_HOST set). */
  readonly smtp: SmtpSettings | null;
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

/** Where mail goes out (SMTP_* and MAIL_FROM, checked together). */
export interface SmtpSettings {
  readonly host: string;
  readonly port: number;
  readonly tls: 'starttls' | 'tls' | 'off';
  readonly auth: { readonly user: string; readonly password: string } | null;
  readonly from: string;
}

/** The SMTP settings, or null without SMTP_HOST; a ConfigError names what contradicts. */
export function smtpSettingsOf(env: EnvOf<typeof configSchema>): SmtpSettings | null {
  const host = env.SMTP_HOST?.trim() ?? '';
  if (host === '') {
    if (env.SIGNUP_CONFIRMATION === 'required') throw new ConfigError('SIGNUP_CONFIRMATION', 'is required but SMTP_HOST is not set: set SMTP_HOST (and MAIL_FROM), or SIGNUP_CONFIRMATION=off');
    return null;
  }
  const from = env.MAIL_FROM?.trim() ?? '';
  if (from === '') throw new ConfigError('MAIL_FROM', 'is required with SMTP_HOST (the sender of every message)');
  if (!/^(?:[^<>\r\n]*<[^<>@\s]+@[^<>@\s]+>|[^<>@\s]+@[^<>@\s]+)$/.test(from)) throw new ConfigError('MAIL_FROM', 'must be an address or `Name <address>`');
  const user = env.SMTP_USER?.trim() ?? '';
  const password = env.SMTP_PASSWORD ?? '';
  if ((user === '') !== (password === '')) throw new ConfigError(user === '' ? 'SMTP_USER' : 'SMTP_PASSWORD', 'must be set together with ' + (user === '' ? 'SMTP_PASSWORD' : 'SMTP_USER'));
  return { host, port: env.SMTP_PORT, tls: env.SMTP_TLS, auth: user === '' ? null : { user, password }, from };
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
  return { ...env, INTERNAL_TOKEN: token, TRUSTED_PROXIES: trustedProxies, smtp: smtpSettingsOf(env), kekRing: kekRingOf(source, env.BYOK_ENABLED) };
}

/** Nest injection token of the AppConfig. */
export const APP_CONFIG = Symbol('APP_CONFIG');
