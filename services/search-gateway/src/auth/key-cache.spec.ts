import type { KeyLookup, KeyRecord } from '@svc/contracts';
import { KeyCache } from './key-cache';

const record = (id: string): KeyRecord => ({
  id, accountId: 'acct_1', kind: 'api', disabled: false, expiresAtMs: null,
  limitMicros: null, limitReset: null, version: 1, deleted: false,
});
const found = (id: string): KeyLookup => ({ found: true, record: record(id) });

describe('KeyCache', () => {
  let now = 0;
  const clock = (): number => now;
  beforeEach(() => {
    now = 1_000_000;
  });

  it('serves an entry until its lifetime ends, and never after', () => {
    const cache = new KeyCache({ ttlMs: 5000, maxEntries: 10, now: clock });
    cache.set('h1', found('key_1'));
    now += 4999;
    expect(cache.get('h1')).toEqual(found('key_1'));
    now += 1;
    expect(cache.get('h1')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('keeps negative entries for unknown hashes with the same lifetime', () => {
    const cache = new KeyCache({ ttlMs: 2000, maxEntries: 10, now: clock });
    cache.set('unknown', { found: false });
    expect(cache.get('unknown')).toEqual({ found: false });
    now += 2000;
    expect(cache.get('unknown')).toBeUndefined();
  });

  it('never holds more than maxEntries, dropping the oldest first (negative entries included)', () => {
    const cache = new KeyCache({ ttlMs: 60_000, maxEntries: 3, now: clock });
    cache.set('a', found('key_a'));
    cache.set('b', { found: false });
    cache.set('c', found('key_c'));
    cache.set('d', { found: false });
    expect(cache.size).toBe(3);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toEqual({ found: false });
    for (let i = 0; i < 100; i++) cache.set(`n${i}`, { found: false });
    expect(cache.size).toBe(3);
  });

  it('refreshing an entry restarts its lifetime and its place in eviction order', () => {
    const cache = new KeyCache({ ttlMs: 1000, maxEntries: 2, now: clock });
    cache.set('a', found('key_a'));
    cache.set('b', found('key_b'));
    now += 900;
    cache.set('a', found('key_a2'));
    cache.set('c', found('key_c'));
    expect(cache.get('b')).toBeUndefined();
    now += 500;
    expect(cache.get('a')).toEqual(found('key_a2'));
  });

  it('drops one entry or all on invalidation', () => {
    const cache = new KeyCache({ ttlMs: 1000, maxEntries: 10, now: clock });
    cache.set('a', found('key_a'));
    cache.set('b', found('key_b'));
    cache.delete('a');
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBeDefined();
    cache.clear();
    expect(cache.size).toBe(0);
  });

  it('caches nothing when the lifetime is zero', () => {
    const cache = new KeyCache({ ttlMs: 0, maxEntries: 10, now: clock });
    cache.set('a', found('key_a'));
    expect(cache.get('a')).toBeUndefined();
  });

  it('expires an entry at notAfterMs when that comes before the lifetime', () => {
    const cache = new KeyCache({ ttlMs: 5000, maxEntries: 10, now: clock });
    cache.set('a', found('key_a'), now + 2000);
    now += 1999;
    expect(cache.get('a')).toEqual(found('key_a'));
    now += 1;
    expect(cache.get('a')).toBeUndefined();
  });

  it('keeps the lifetime when notAfterMs is later', () => {
    const cache = new KeyCache({ ttlMs: 5000, maxEntries: 10, now: clock });
    cache.set('a', found('key_a'), now + 60_000);
    now += 4999;
    expect(cache.get('a')).toBeDefined();
    now += 1;
    expect(cache.get('a')).toBeUndefined();
  });

  it('does not store a state already past its notAfterMs, and drops the older copy', () => {
    const cache = new KeyCache({ ttlMs: 5000, maxEntries: 10, now: clock });
    cache.set('a', found('key_a'));
    cache.set('a', found('key_a2'), now);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });
});
