import type { CacheStatus } from '@svc/contracts';
import type { Micros } from '@svc/money';

/** `cache` in a search's body: look up and store, store only, or neither. */
export const CACHE_MODES = ['default', 'refresh', 'off'] as const;
export type CacheMode = (typeof CACHE_MODES)[number];

/** How the cache took part in a successful attempt (AttemptResult's `cache`). */
export interface AttemptCache {
  readonly status: CacheStatus;
  readonly ageS: number;
  readonly savedMicros: Micros;
}

export const CACHE_OFF: AttemptCache = Object.freeze({ status: 'off', ageS: 0, savedMicros: 0 });
export const CACHE_MISS: AttemptCache = Object.freeze({ status: 'miss', ageS: 0, savedMicros: 0 });
