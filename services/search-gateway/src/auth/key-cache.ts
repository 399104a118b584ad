import type { KeyLookup } from '@svc/contracts';

export interface KeyCacheOptions {
  /** Lifetime of every entry, positive or negative. */
  ttlMs: number;
  /** Most entries held; the oldest is dropped to make room. */
  maxEntries: number;
  now?: () => number;
}

interface Entry {
  lookup: KeyLookup;
  expiresAtMs: number;
}

/**
 * The in-process key cache: key hash -> the last known lookup (a record, or a known miss
 * for an unknown hash). An entry expires `ttlMs` after it was inserted or at the `notAfterMs`
 * given with it (the state's stamp plus the propagation bound), whichever is earlier, so a
 * lost invalidation message can never keep a state in use past the bound. Bounded in size:
 * inserting into a full cache drops the entry inserted first.
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  /** Lookups answered from the cache, not answered (absent or expired), and entries stored: read by the metrics at scrape. */
  readonly stats = { hits: 0, misses: 0, fills: 0 };

  constructor(options: KeyCacheOptions) {
    this.ttlMs = options.ttlMs;
    this.maxEntries = options.maxEntries;
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The cached lookup, or undefined when absent or expired. */
  get(keyHash: string): KeyLookup | undefined {
    const entry = this.entries.get(keyHash);
    if (entry === undefined) {
      this.stats.misses++;
      return undefined;
    }
    if (this.now() >= entry.expiresAtMs) {
      this.entries.delete(keyHash);
      this.stats.misses++;
      return undefined;
    }
    this.stats.hits++;
    return entry.lookup;
  }

  /** Caches `lookup` until min(now + ttlMs, notAfterMs); nothing when that is not in the future. */
  set(keyHash: string, lookup: KeyLookup, notAfterMs = Number.POSITIVE_INFINITY): void {
    const expiresAtMs = Math.min(this.now() + this.ttlMs, notAfterMs);
    if (this.ttlMs <= 0 || expiresAtMs <= this.now()) {
      this.entries.delete(keyHash);
      return;
    }
    // Re-inserting moves the entry to the end of the eviction order.
    this.entries.delete(keyHash);
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.entries.delete(oldest.value);
    }
    this.entries.set(keyHash, { lookup, expiresAtMs });
    this.stats.fills++;
  }

  delete(keyHash: string): void {
    this.entries.delete(keyHash);
  }

  clear(): void {
    this.entries.clear();
  }
}
