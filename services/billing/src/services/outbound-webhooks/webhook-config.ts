import { WEBHOOK_RETRY_BASE_DELAY_MS, WEBHOOK_RETRY_MAX_DELAY_MS, WEBHOOK_RETRY_WINDOW_MS, WEBHOOK_TIMEOUT_MS } from '@svc/contracts';
import { bool, int, parseEnv } from '@svc/config';
import type { EnvOf } from '@svc/config';

/** The ledger worker's webhook settings (read next to its own environment; docs/decisions/0028). */
export const WEBHOOK_ENV = {
  /** Deliveries may go to http URLs and loopback addresses (the local stack and tests). */
  WEBHOOK_ALLOW_HTTP_AND_LOOPBACK: bool({ default: false }),
  /** How often new deliveries are put on the queue and the balance thresholds evaluated. */
  WEBHOOK_DISPATCH_INTERVAL_MS: int({ default: 1_000, min: 10, max: 60_000 }),
  /** Deliveries in flight at once per worker process. */
  WEBHOOK_CONCURRENCY: int({ default: 16, min: 1, max: 256 }),
  /** The first retry's delay; each next one doubles up to WEBHOOK_RETRY_MAX_DELAY_MS. */
  WEBHOOK_RETRY_BASE_DELAY_MS: int({ default: WEBHOOK_RETRY_BASE_DELAY_MS, min: 10, max: 3_600_000 }),
  WEBHOOK_RETRY_MAX_DELAY_MS: int({ default: WEBHOOK_RETRY_MAX_DELAY_MS, min: 10, max: 86_400_000 }),
  /** A delivery is retried this long after its first attempt; an endpoint failing this long is disabled. */
  WEBHOOK_RETRY_WINDOW_MS: int({ default: WEBHOOK_RETRY_WINDOW_MS, min: 100, max: 7 * 86_400_000 }),
  WEBHOOK_TIMEOUT_MS: int({ default: WEBHOOK_TIMEOUT_MS, min: 100, max: 60_000 }),
};

export type WebhookConfig = EnvOf<typeof WEBHOOK_ENV>;

export function parseWebhookConfig(source: NodeJS.ProcessEnv = process.env): WebhookConfig {
  return parseEnv(WEBHOOK_ENV, source);
}

/** The delay before retry number `attempt` (1 = the first retry): base * 2^(attempt-1), capped. */
export function retryDelayMs(attempt: number, config: Pick<WebhookConfig, 'WEBHOOK_RETRY_BASE_DELAY_MS' | 'WEBHOOK_RETRY_MAX_DELAY_MS'>): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 40);
  return Math.min(config.WEBHOOK_RETRY_BASE_DELAY_MS * 2 ** exponent, config.WEBHOOK_RETRY_MAX_DELAY_MS);
}
