/**
 * The retry rules of the API's reference client, as pure functions:
 * - retried: 429, 500, 503, 504 and every other 5xx except 502; never another 4xx, never 502;
 * - backoff 300 ms, then 600 ms (doubling), each plus up to 20 % jitter;
 * - with `Retry-After`, the wait is at least that long, up to 10 s: a `Retry-After` above
 *   10 s is waited for 10 s, then the request is retried (within the retry count), as the
 *   specification says ("waits at least that long, up to 10 seconds").
 */

/** First backoff; each further retry doubles it. */
export const BASE_DELAY_MS = 300;
/** Jitter: up to this share of the backoff is added. */
export const JITTER = 0.2;
/** The longest wait before a retry, `Retry-After` included. */
export const MAX_WAIT_MS = 10_000;
export const DEFAULT_MAX_RETRIES = 2;

/** Whether a response with this status is retried. */
export function isRetryableStatus(status: number): boolean {
  if (status === 429) return true;
  return status >= 500 && status <= 599 && status !== 502;
}

/**
 * `Retry-After` in seconds: a non-negative number of seconds, or an HTTP date (seconds
 * from `now`, at least 0). Null when absent or unreadable.
 */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (text === '') return null;
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return null;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/**
 * The wait before retry number `retry` (0 for the first retry): the backoff, or the
 * response's `Retry-After` when that is longer, never more than MAX_WAIT_MS (10 s).
 * `random` is in [0, 1).
 */
export function retryDelayMs(retry: number, retryAfterSeconds: number | null, random: number): number {
  const backoff = Math.min(MAX_WAIT_MS, BASE_DELAY_MS * 2 ** retry * (1 + JITTER * random));
  if (retryAfterSeconds === null) return Math.round(backoff);
  const asked = Math.min(MAX_WAIT_MS, retryAfterSeconds * 1000);
  return Math.round(Math.max(asked, backoff));
}
