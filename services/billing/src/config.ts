import { bool, int, oneOf, parseEnv, secret, str, url, redisUrls } from '@svc/config';
import type { EnvOf } from '@svc/config';
import { DEFAULT_RESEARCH_RUN_TIMEOUT_MS } from '@svc/contracts';
import { STRIPE_CLIENT_ENV } from './adapters/stripe-config';

/** billing's environment, parsed once at start (main.ts) or from a test's own object. */
export const BILLING_ENV = {
  PORT: int({ default: 3002, min: 0, max: 65535 }),
  OPERATOR_PORT: int({ default: 8081, min: 0, max: 65535 }),
  HOST: str({ default: '0.0.0.0' }),
  /** Prometheus text at GET /metrics on this port (never the public or operator one). */
  METRICS_PORT: int({ default: 9466, min: 0, max: 65535 }),
  DATABASE_URL: url({ default: 'postgresql://postgres@127.0.0.1:5432/svc_billing', protocols: ['postgresql', 'postgres'] }),
  /** One Redis, or with REDIS_CLUSTER=true a comma-separated list of seed nodes of a Redis Cluster (any node will do). */
  REDIS_URL: redisUrls({ default: 'redis://127.0.0.1:6379' }),
  REDIS_CLUSTER: bool({ default: false }),
  INTERNAL_TOKEN: secret({ minLength: 16 }),
  OPERATOR_TOKEN: secret({ minLength: 16 }),
  ACCOUNT_ADMIN_GRPC_URL: str({ default: '127.0.0.1:50051' }),
  /** The whole request (headers and body) must arrive within this, else 408 and the connection closes. */
  HTTP_REQUEST_TIMEOUT_MS: int({ default: 30_000, min: 100, max: 600_000 }),
  /** The deepest nesting of objects and arrays a JSON body may have; deeper is 400 before any parse. */
  HTTP_MAX_BODY_DEPTH: int({ default: 32, min: 1, max: 1_000 }),
  /** After SIGTERM: how long both listeners keep serving (unready, connection: close) before they stop accepting. */
  SHUTDOWN_DELAY_MS: int({ default: 5_000, min: 0, max: 600_000 }),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
  MIGRATE_ON_START: bool({ default: false }),
  /** A reservation whose search ran past its own bound by more than this is stale (reconciliation). */
  RECONCILE_STALE_AFTER_MS: int({ default: 60_000, min: 0, max: 3_600_000 }),
  /** Stripe Checkout and the Stripe webhook (src/adapters/stripe.adapter.ts, src/services/purchases). No secret key: checkout is 503 payment_disabled. */
  ...STRIPE_CLIENT_ENV,
  STRIPE_WEBHOOK_SECRET: secret({ optional: true }),
  CHECKOUT_SUCCESS_URL: url({ default: 'http://localhost:8080/dashboard?checkout=success', protocols: ['http', 'https'] }),
  /**
   * Webhook endpoints may be http and on loopback addresses (the local stack and tests). Off:
   * https only, and never a loopback, private or link-local address (docs/decisions/0028).
   */
  WEBHOOK_ALLOW_HTTP_AND_LOOPBACK: bool({ default: false }),
  CHECKOUT_CANCEL_URL: url({ default: 'http://localhost:8080/dashboard?checkout=cancel', protocols: ['http', 'https'] }),
  /** A research run's bound from its creation (the research worker gives it up past it); here: how long its key's hold must live. */
  RESEARCH_RUN_TIMEOUT_MS: int({ default: DEFAULT_RESEARCH_RUN_TIMEOUT_MS, min: 10_000, max: 86_400_000 }),
};

type ParsedEnv = EnvOf<typeof BILLING_ENV>;

/** The parsed environment; both secrets are required, so they are plain strings here. */
export type BillingConfig = Omit<ParsedEnv, 'INTERNAL_TOKEN' | 'OPERATOR_TOKEN'> & {
  readonly INTERNAL_TOKEN: string;
  readonly OPERATOR_TOKEN: string;
};

/** Throws a ConfigError naming the first bad variable (never echoing a secret). */
export function parseBillingConfig(source: NodeJS.ProcessEnv = process.env): BillingConfig {
  const env = parseEnv(BILLING_ENV, source);
  const { INTERNAL_TOKEN, OPERATOR_TOKEN } = env;
  // secret() without `optional` never yields undefined; this narrows the type.
  if (INTERNAL_TOKEN === undefined || OPERATOR_TOKEN === undefined) throw new Error('unreachable: required secret missing');
  return { ...env, INTERNAL_TOKEN, OPERATOR_TOKEN };
}
