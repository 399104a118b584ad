import { LRUCache } from 'lru-cache';
import type { CachedAnswer, DecodedEntry } from './entry-codec';

/** CACHE_LOCAL_TTL_MS and CACHE_LOCAL_MAX_BYTES: how long a copy is used, and the most the copies hold. */
export interface LocalCopySettings {
  readonly ttlMs: number;
  readonly maxBytes: number;
}

/** What a lookup needs of an entry without Redis. */
interface LocalCopy {
  readonly asked: number;
  readonly storedAt: number;
  readonly count: number;
  readonly json: string;
  /** When this process stops using it (Unix ms on the cache's clock): CACHE_LOCAL_TTL_MS after it was read, never past the entry's TTL. */
  readonly until: number;
}

/**
 * A gateway's own copies of entries its lookups found in Redis (docs/decisions/0023, "Each
 * gateway's own copies"): a hit answered without a Redis lookup for CACHE_LOCAL_TTL_MS. The
 * bound is `lru-cache`'s: at most CACHE_LOCAL_MAX_BYTES of keys and results (UTF-16 code
 * units, as JavaScript holds them), the least recently used copy dropped first, each copy
 * expiring with its TTL. The entry's own rules (the results asked, `cache_max_age_s`, the
 * model's TTL) are checked here at each read, on the cache's clock.
 */
export class LocalCopies {
  /** Null: CACHE_LOCAL_TTL_MS or CACHE_LOCAL_MAX_BYTES is 0 (no copies kept). */
  private readonly copies: LRUCache<string, LocalCopy> | null;
  private readonly ttlMs: number;

  constructor(settings: LocalCopySettings) {
    this.ttlMs = settings.ttlMs;
    this.copies = settings.ttlMs > 0 && settings.maxBytes > 0
      ? new LRUCache<string, LocalCopy>({
        maxSize: settings.maxBytes,
        sizeCalculation: (copy, key) => key.length + copy.json.length,
        ttl: settings.ttlMs,
        // A clock read at every staleness check (about 70 ns on the 2-core VM) instead of the
        // default's timer (about 500 ns to set) whenever the last read is over 1 ms old, which
        // at one gateway's hit rates (a hit every 0.5 to 2 ms) is nearly every read.
        ttlResolution: 0,
      })
      : null;
  }

  /** The bytes the copies hold (keys and results). */
  get bytes(): number {
    return this.copies?.calculatedSize ?? 0;
  }

  /**
   * The first of `entries` whose copy serves `asked` results at most `maxAgeMs` old (null: any
   * age) at `now`: a hit answered without Redis. Null: look up in Redis.
   */
  find(entries: readonly string[], asked: number, maxAgeMs: number | null, now: number): CachedAnswer | null {
    const copies = this.copies;
    if (copies === null || copies.size === 0) return null;
    for (const key of entries) {
      const copy = copies.get(key);
      if (copy === undefined) continue;
      if (now >= copy.until) {
        copies.delete(key);
        continue;
      }
      if (copy.asked < asked || (maxAgeMs !== null && now - copy.storedAt > maxAgeMs)) continue;
      return { count: copy.count, json: copy.json, ageS: Math.max(0, Math.floor((now - copy.storedAt) / 1000)) };
    }
    return null;
  }

  /** Keeps a copy of the entry `key` a lookup found at `now`, for CACHE_LOCAL_TTL_MS, never past `entryTtlMs` after it was stored. */
  keep(key: string, { answer, asked, storedAt }: DecodedEntry, entryTtlMs: number, now: number): void {
    const copies = this.copies;
    if (copies === null || !Number.isSafeInteger(asked) || !Number.isSafeInteger(storedAt)) return;
    const until = Math.min(now + this.ttlMs, storedAt + entryTtlMs);
    if (until <= now) return;
    // A copy larger than the whole bound is refused by lru-cache (and any older copy of the key dropped).
    copies.set(key, { asked, storedAt, count: answer.count, json: answer.json, until }, { ttl: until - now });
  }

  /** Drops the copy of `key` (a store through this process replaced the entry). */
  drop(key: string): void {
    this.copies?.delete(key);
  }
}
