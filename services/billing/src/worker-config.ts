import { bool, int, oneOf, parseEnv, str, url, redisUrls } from '@svc/config';
import type { EnvOf } from '@svc/config';
import { HYDRATION_ENV } from './services/hydration/hydration-config';
import { checkWebhookConfig, WEBHOOK_ENV } from './services/outbound-webhooks/webhook-config';
import { DEFAULT_SWEEP_SCAN_KEYS } from './services/settlement/settlement-stream.adapter';
import { STRIPE_CLIENT_ENV } from './adapters/stripe-config';

/**
 * The ledger worker's environment (dist/worker.js), parsed once at start (src/worker.ts):
 * every part of the worker takes its settings from the result, none reads process.env.
 */
export const LEDGER_WORKER_ENV = {
  /** /healthz and /readyz only; the deploy files expect 3003. */
  PORT: int({ default: 3003, min: 0, max: 65535 }),
  HOST: str({ default: '0.0.0.0' }),
  /** Prometheus text at GET /metrics on this port. */
  METRICS_PORT: int({ default: 9467, min: 0, max: 65535 }),
  DATABASE_URL: url({ default: 'postgresql://postgres@127.0.0.1:5432/svc_billing', protocols: ['postgresql', 'postgres'] }),
  /** One Redis, or with REDIS_CLUSTER=true a comma-separated list of seed nodes of a Redis Cluster (any node will do). */
  REDIS_URL: redisUrls({ default: 'redis://127.0.0.1:6379' }),
  REDIS_CLUSTER: bool({ default: false }),
  /** The whole request (headers and body) must arrive within this, else 408 and the connection closes. */
  HTTP_REQUEST_TIMEOUT_MS: int({ default: 30_000, min: 100, max: 600_000 }),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
  /**
   * How often the drain job runs (a BullMQ job scheduler). Each run writes an account's new
   * records in transactions of up to LEDGER_BATCH_SIZE; a longer interval means fewer, larger
   * transactions (less PostgreSQL CPU per search) and a ledger that trails Redis by up to this
   * much more (docs/decisions/0006-drain-cadence.md).
   */
  LEDGER_DRAIN_INTERVAL_MS: int({ default: 1_000, min: 10, max: 60_000 }),
  /** How often the sweep runs: re-marks streams whose dirty mark was lost, re-applies the outbox. */
  LEDGER_SWEEP_INTERVAL_MS: int({ default: 30_000, min: 100, max: 3_600_000 }),
  /**
   * Keys a sweep's SCAN walks at most (in calls of 1,000) looking for streams whose dirty mark
   * was lost; the next sweep goes on from there, so a pass over a keyspace of N keys takes
   * N / this sweeps, and the SCAN's cost per sweep stays bounded however many entries the
   * result cache holds (docs/decisions/0036).
   */
  LEDGER_SWEEP_SCAN_KEYS: int({ default: DEFAULT_SWEEP_SCAN_KEYS, min: 1_000, max: 100_000_000 }),
  /** Stream entries per Postgres transaction (at most; an account's stream is read oldest first). */
  LEDGER_BATCH_SIZE: int({ default: 2_000, min: 1, max: 10_000 }),
  /** How often reconciliation runs over every account (a BullMQ job scheduler). */
  RECONCILE_INTERVAL_MS: int({ default: 60_000, min: 1_000, max: 86_400_000 }),
  /**
   * Keys each reconciliation run's SCAN walks at least (in calls of 1,000) looking for
   * reservation hashes; the next run goes on from there, and a run walks more when a pass
   * would otherwise take longer than 20 minutes (docs/decisions/0036).
   */
  RECONCILE_SCAN_KEYS: int({ default: 100_000, min: 1_000, max: 100_000_000 }),
  /** Also correct drift confirmed by two consecutive reads (stale reservations are always released). */
  RECONCILE_REPAIR: bool({ default: false }),
  /** A reservation whose search ran past its own bound by more than this is stale. */
  RECONCILE_STALE_AFTER_MS: int({ default: 60_000, min: 0, max: 3_600_000 }),
  /** account-admin's gRPC address: the worker records keys' last use there (MarkKeysUsed). */
  ACCOUNT_ADMIN_GRPC_URL: str({ default: '127.0.0.1:50051' }),
  /** How often the worker sends keys' last use to account-admin (each key at most once a minute). */
  KEY_USE_FLUSH_INTERVAL_MS: int({ default: 5_000, min: 10, max: 600_000 }),
  /** How often the backlog is logged while records are pending. */
  BACKLOG_LOG_INTERVAL_MS: int({ default: 5_000, min: 100, max: 3_600_000 }),
  /** Recovery from a Redis that lost its data (src/services/hydration). */
  ...HYDRATION_ENV,
  /** Outgoing webhooks, thresholds and the schedule of automatic top-up (src/services/outbound-webhooks). */
  ...WEBHOOK_ENV,
  /** Automatic top-up's off-session PaymentIntents (src/services/purchases); no secret key: no top-ups are made. */
  ...STRIPE_CLIENT_ENV,
  /** A pending top-up whose last call to Stripe failed or is still processing is tried (or re-read) again after this. */
  AUTO_TOPUP_RETRY_AFTER_MS: int({ default: 60_000, min: 100, max: 3_600_000 }),
};

export type LedgerWorkerConfig = EnvOf<typeof LEDGER_WORKER_ENV>;

/** Throws a ConfigError naming the first bad variable. */
export function parseLedgerWorkerConfig(source: NodeJS.ProcessEnv): LedgerWorkerConfig {
  return checkWebhookConfig(parseEnv(LEDGER_WORKER_ENV, source));
}
