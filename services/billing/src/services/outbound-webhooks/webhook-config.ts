import { WEBHOOK_ACCOUNT_CONCURRENCY, WEBHOOK_RETRY_BASE_DELAY_MS, WEBHOOK_RETRY_MAX_DELAY_MS, WEBHOOK_RETRY_WINDOW_MS, WEBHOOK_TIMEOUT_MS } from '@svc/contracts';
import { bool, ConfigError, int, parseEnv } from '@svc/config';
import type { EnvOf } from '@svc/config';

/**
 * The ledger worker's settings of outgoing webhooks, thresholds and automatic top-up
 * (docs/decisions/0028): part of LEDGER_WORKER_ENV, read once with the rest of the worker's
 * environment (src/worker-config.ts).
 */
export const WEBHOOK_ENV = {
  /** Deliveries may go to http URLs and loopback addresses (the local stack and tests). */
  WEBHOOK_ALLOW_HTTP_AND_LOOPBACK: bool({ default: false }),
  /** How often pending deliveries are put on the queue, thresholds checked and automatic top-ups evaluated (each its own queue). */
  WEBHOOK_DISPATCH_INTERVAL_MS: int({ default: 1_000, min: 10, max: 60_000 }),
  /** Deliveries in flight at once per worker process. */
  WEBHOOK_CONCURRENCY: int({ default: 16, min: 1, max: 256 }),
  /**
   * Deliveries one account may have in flight at once per worker process (at most
   * WEBHOOK_CONCURRENCY): an account's slow endpoints hold no more of the slots than this, and
   * its further deliveries wait without holding one (docs/webhooks.md, "Fairness").
   */
  WEBHOOK_ACCOUNT_CONCURRENCY: int({ default: WEBHOOK_ACCOUNT_CONCURRENCY, min: 1, max: 256 }),
  /** The first retry's delay; each next one doubles up to WEBHOOK_RETRY_MAX_DELAY_MS. */
  WEBHOOK_RETRY_BASE_DELAY_MS: int({ default: WEBHOOK_RETRY_BASE_DELAY_MS, min: 10, max: 3_600_000 }),
  WEBHOOK_RETRY_MAX_DELAY_MS: int({ default: WEBHOOK_RETRY_MAX_DELAY_MS, min: 10, max: 86_400_000 }),
  /** A delivery is retried this long after its first attempt; an endpoint failing this long is disabled. */
  WEBHOOK_RETRY_WINDOW_MS: int({ default: WEBHOOK_RETRY_WINDOW_MS, min: 100, max: 7 * 86_400_000 }),
  WEBHOOK_TIMEOUT_MS: int({ default: WEBHOOK_TIMEOUT_MS, min: 100, max: 60_000 }),
};

export type WebhookConfig = EnvOf<typeof WEBHOOK_ENV>;

/** The settings that must agree with each other; a ConfigError names the variable at fault. */
export function checkWebhookConfig<T extends Pick<WebhookConfig, 'WEBHOOK_CONCURRENCY' | 'WEBHOOK_ACCOUNT_CONCURRENCY'>>(config: T): T {
  if (config.WEBHOOK_ACCOUNT_CONCURRENCY > config.WEBHOOK_CONCURRENCY) {
    throw new ConfigError('WEBHOOK_ACCOUNT_CONCURRENCY', `must be at most WEBHOOK_CONCURRENCY (${config.WEBHOOK_CONCURRENCY})`);
  }
  return config;
}

/** These settings alone, from `source` (tests and tools; the worker reads them with LEDGER_WORKER_ENV). */
export function parseWebhookConfig(source: NodeJS.ProcessEnv): WebhookConfig {
  return checkWebhookConfig(parseEnv(WEBHOOK_ENV, source));
}

/** The delay before retry number `attempt` (1 = the first retry): base * 2^(attempt-1), capped. */
export function retryDelayMs(attempt: number, config: Pick<WebhookConfig, 'WEBHOOK_RETRY_BASE_DELAY_MS' | 'WEBHOOK_RETRY_MAX_DELAY_MS'>): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 40);
  return Math.min(config.WEBHOOK_RETRY_BASE_DELAY_MS * 2 ** exponent, config.WEBHOOK_RETRY_MAX_DELAY_MS);
}
