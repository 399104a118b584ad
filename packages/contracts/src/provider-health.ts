import type { Provider } from './catalog';

/**
 * Provider health (docs/decisions/0027): the Redis keys every gateway shares to judge a
 * provider, and the operator's override. Everything of one provider sits under the hash tag
 * `{ph:<provider>}`, so each multi-key script runs on one Redis Cluster slot.
 */
export const providerHealthKeys = {
  /**
   * Hash of the provider's breaker (platform key only): `state` (`closed` or `open`),
   * `opened_at_ms`, `open_until_ms`, `reason`, `streak` (timeouts in a row), `closed_at_ms`,
   * and `force` (`open` or `closed`) while an operator overrides it.
   */
  breaker: (provider: Provider): string => `svc:ph:{ph:${provider}}:breaker`,
  /** The probe lock: at most one probe per provider per interval across the cluster. */
  probeLock: (provider: Provider): string => `svc:ph:{ph:${provider}}:probe`,
  /** Hash of one short bucket of the breaker's rolling window: `n` calls, `fail` failures. */
  windowBucket: (provider: Provider, source: HealthSource, bucketStartMs: number): string => `svc:ph:{ph:${provider}}:w:${source}:${bucketStartMs}`,
  /**
   * Hash of one minute of outcomes (status page), fields `<model id>|<field>`: ok, timeout,
   * server_error (5xx and connection errors), rate_limited (the provider's 429), other, and
   * h<i> the count of calls in latency bucket i (HEALTH_LATENCY_BUCKETS_MS).
   */
  minuteBucket: (provider: Provider, source: HealthSource, minuteStartMs: number): string => `svc:ph:{ph:${provider}}:m:${source}:${minuteStartMs}`,
} as const;

/** Whose key a call used: the platform's (judged by the breaker) or an account's own (judged apart). */
export type HealthSource = 'platform' | 'byok';

/** What an operator can set: force the breaker open or closed, or give it back to the window (`auto`). */
export const BREAKER_MODES = ['open', 'closed', 'auto'] as const;
export type BreakerMode = (typeof BREAKER_MODES)[number];

/** A model's status in GET /v1/models and GET /v1/status. */
export const MODEL_STATUSES = ['operational', 'degraded', 'unavailable'] as const;
export type ModelStatus = (typeof MODEL_STATUSES)[number];

/** Upper bounds (ms) of the latency buckets the minute hashes count; the last is open-ended. */
export const HEALTH_LATENCY_BUCKETS_MS: readonly number[] = Object.freeze([25, 50, 100, 200, 400, 800, 1_600, 3_200, 6_400, 12_800, 25_600, 60_000]);

/** How long a minute bucket is kept: the status page's longest window (one hour) and a margin. */
export const HEALTH_MINUTE_TTL_MS = 65 * 60_000;
