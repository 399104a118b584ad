/**
 * Outgoing webhooks (docs/decisions/0028-webhooks-and-auto-top-up.md): the event types an
 * account's endpoints may subscribe to, the signature header, the delivery queue and the
 * retry schedule. Billing's HTTP API validates against these, the ledger worker delivers by
 * them, and the SDK's verifyWebhook is tested against what billing signs.
 */
export const WEBHOOK_EVENT_TYPES = ['balance.low', 'key.limit.threshold', 'credits.purchased', 'auto_topup.succeeded', 'auto_topup.failed', 'research.completed', 'research.failed'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export function isWebhookEventType(value: unknown): value is WebhookEventType {
  return typeof value === 'string' && (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
}

/** `svc-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">[,v1=<with the previous secret>]`. */
export const WEBHOOK_SIGNATURE_HEADER = 'svc-signature';

/** The BullMQ queue of deliveries (one job per event and endpoint), under QUEUE_PREFIX's hash tag. */
export const WEBHOOK_QUEUE = 'webhooks';

/** The ledger worker's queue that puts pending deliveries on WEBHOOK_QUEUE (its own, so it never waits behind a delivery). */
export const WEBHOOK_DISPATCH_QUEUE = 'webhook-dispatch';

/** The ledger worker's queue of balance.low and key.limit.threshold checks. */
export const THRESHOLDS_QUEUE = 'thresholds';

/** The ledger worker's queue of automatic top-ups (crossings opened, pending top-ups charged). */
export const AUTO_TOPUP_QUEUE = 'auto-topup';

/** Deliveries one account may have in flight at once in one worker process, by default (WEBHOOK_ACCOUNT_CONCURRENCY). */
export const WEBHOOK_ACCOUNT_CONCURRENCY = 4;

/** How long a rotated-out secret keeps signing (a second v1). */
export const WEBHOOK_SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** A delivery is retried for this long after its first attempt, and an endpoint failing this long is disabled. */
export const WEBHOOK_RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** The first retry's delay; each next one doubles, up to WEBHOOK_RETRY_MAX_DELAY_MS. */
export const WEBHOOK_RETRY_BASE_DELAY_MS = 30_000;
export const WEBHOOK_RETRY_MAX_DELAY_MS = 60 * 60 * 1000;

/** How much of a receiver's answer an attempt records. */
export const WEBHOOK_RESPONSE_HEAD_BYTES = 256;

/** A receiver must answer within this (headers and body), else the attempt failed. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

/** The percentages of a key's period limit that emit key.limit.threshold, each once per period. */
export const KEY_LIMIT_THRESHOLD_PERCENTS = [80, 100] as const;
