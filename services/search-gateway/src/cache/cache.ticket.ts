import type { CacheStatus } from '@svc/contracts';
import type { Micros } from '@svc/money';
import type { CachedAnswer } from './result-cache';

/** `cache` in a search's body: look up and store, store only, or neither. */
export const CACHE_MODES = ['default', 'refresh', 'off'] as const;
export type CacheMode = (typeof CACHE_MODES)[number];

/**
 * What the result cache made of one attempt before its admission (its request's `cache`):
 * - `hit`: a stored answer serves it; it is admitted at `priceMicros` (the cache price) and
 *   takes no provider lease;
 * - `lead`: no entry; this search leads the identical ones (its lead is in `entry` until its answer replaces it);
 * - `follow`: no entry; an identical search leads: this one, admitted as a miss (it may have
 *   to go on alone), waits for its answer;
 * - `miss`: no entry that serves it and no lead (cache `refresh`, an entry too old or of too
 *   few results, or the cache Redis did not answer): the
 *   provider is called and its answer stored.
 * `entry` is where this attempt's answer is stored: the account's own entry for a BYOK
 * attempt, else the shared one.
 */
export type CacheTicket =
  | { readonly kind: 'hit'; readonly entry: string; readonly asked: number; readonly answer: CachedAnswer; readonly priceMicros: Micros }
  | { readonly kind: 'lead' | 'follow' | 'miss'; readonly entry: string; readonly asked: number; readonly maxAgeMs: number | null; readonly token: string };

/** How the cache took part in a successful attempt (AttemptResult's `cache`). */
export interface AttemptCache {
  readonly status: CacheStatus;
  readonly ageS: number;
  readonly savedMicros: Micros;
}

export const CACHE_OFF: AttemptCache = Object.freeze({ status: 'off', ageS: 0, savedMicros: 0 });
export const CACHE_MISS: AttemptCache = Object.freeze({ status: 'miss', ageS: 0, savedMicros: 0 });
