import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pino from 'pino';
import { redisUrl } from '@svc/test-kit';
import { cacheDigest, cacheKeys, SHARED_SCOPE } from '../src/cache/cache.key';
import { batchCacheRedis } from '../src/cache/cache.redis';
import { ResultCache } from '../src/cache/result-cache';
import { RedisBatch } from '../src/redis/redis-batch';
import type { NormalizedResult } from '../src/providers';

const DB = 3;
const RESULTS: NormalizedResult[] = [1, 2, 3].map((position) => ({ position, title: `t${position}`, url: `https://example.com/${position}`, snippet: 's', published_at: null, score: null }));

/** The result cache's scripts against a real Redis: lookup, lead, follow, store, release and join. */
describe('ResultCache (real Redis)', () => {
  let redis: Redis;
  let batch: RedisBatch;
  let now = 1_000_000;
  let cache: ResultCache;

  beforeAll(() => {
    // The cache speaks through a batch connection, as in the gateway; the test reads Redis with ioredis.
    redis = new Redis(redisUrl(DB));
    batch = new RedisBatch({ url: redisUrl(DB), cluster: false });
    cache = new ResultCache(batchCacheRedis(batch), { pricePercent: 10, ttlMs: () => 60_000, maxEntryBytes: 2_000, pollMs: 5 }, pino({ level: 'silent' }), null, () => now);
    cache.useLockLifetime(2_000);
  });

  afterAll(() => {
    batch.close();
    redis.disconnect();
  });

  const keysOf = (asked: number): ReturnType<typeof cacheKeys> => cacheKeys(cacheDigest('exa/fast', `q ${randomBytes(6).toString('hex')}`, '{}'), asked, SHARED_SCOPE);
  const stored = async (key: string): Promise<void> => {
    for (let i = 0; i < 100 && (await redis.exists(key)) === 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
  };

  it('the first lookup leads, the next follows; the leader\'s answer is then a hit for as many results or fewer', async () => {
    const keys = keysOf(3);
    expect(await cache.lookup(keys, [keys.shared], 3, null, 'lead-1', true)).toEqual({ kind: 'lead' });
    expect(await cache.lookup(keys, [keys.shared], 3, null, 'other', true)).toEqual({ kind: 'follow' });
    cache.store(keys.shared, keys.lock, 'exa/fast', 3, RESULTS.length, JSON.stringify(RESULTS), 'lead-1');
    await stored(keys.shared);
    expect(await redis.exists(keys.lock)).toBe(0);
    now += 5_000;
    expect(await cache.lookup(keys, [keys.shared], 2, null, 'x', true)).toEqual({ kind: 'hit', answer: { count: 3, json: JSON.stringify(RESULTS), ageS: 5 } });
    // Too old for cache_max_age_s 4, or asked for more results: no hit (and only looking takes no lead).
    expect(await cache.lookup(keys, [keys.shared], 3, 4_000, 'x', false)).toEqual({ kind: 'miss' });
    expect(await cache.lookup(keys, [keys.shared], 4, null, 'x', false)).toEqual({ kind: 'miss' });
    expect(await redis.pttl(keys.shared)).toBeGreaterThan(50_000);
  });

  it('followers join the leader\'s answer (one poll per lock in a process)', async () => {
    const keys = keysOf(3);
    expect((await cache.lookup(keys, [keys.shared], 3, null, 'lead-2', true)).kind).toBe('lead');
    const waiting = [cache.join(keys, keys.shared, 3, null, 5_000), cache.join(keys, keys.shared, 3, null, 5_000)];
    cache.store(keys.shared, keys.lock, 'exa/fast', 3, RESULTS.length, JSON.stringify(RESULTS), 'lead-2');
    const joined = await Promise.all(waiting);
    expect(joined.map((j) => j.kind)).toEqual(['joined', 'joined']);
  });

  it('an entry of the first format (no result count) is still served, its count read from its JSON', async () => {
    const keys = keysOf(3);
    await redis.set(keys.shared, `3|${now - 2_000}|${JSON.stringify(RESULTS)}`, 'PX', 60_000);
    expect(await cache.lookup(keys, [keys.shared], 3, null, 'x', true)).toEqual({ kind: 'hit', answer: { count: 3, json: JSON.stringify(RESULTS), ageS: 2 } });
    await redis.set(keys.shared, `3|${now}|x|not json`, 'PX', 60_000);
    expect(await cache.lookup(keys, [keys.shared], 3, null, 'x', false)).toEqual({ kind: 'miss' });
  });

  it('a leader that gives its lock back without an answer sends its followers on alone; another token cannot release it', async () => {
    const keys = keysOf(3);
    expect((await cache.lookup(keys, [keys.shared], 3, null, 'lead-3', true)).kind).toBe('lead');
    cache.release(keys.lock, 'not-the-leader');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await redis.get(keys.lock)).toBe('lead-3');
    const waiting = cache.join(keys, keys.shared, 3, null, 5_000);
    cache.release(keys.lock, 'lead-3');
    expect(await waiting).toEqual({ kind: 'alone' });
    expect(await redis.exists(keys.shared)).toBe(0);
  });

  it('a follower stops waiting after its timeout; an answer too large is not stored and frees the lock', async () => {
    const keys = keysOf(3);
    expect((await cache.lookup(keys, [keys.shared], 3, null, 'lead-4', true)).kind).toBe('lead');
    const realNow = now;
    const timed = cache.join(keys, keys.shared, 3, null, 50);
    now = realNow + 100;
    expect(await timed).toEqual({ kind: 'alone' });
    const big = [{ ...RESULTS[0], snippet: 'x'.repeat(3_000) } as NormalizedResult];
    cache.store(keys.shared, keys.lock, 'exa/fast', 3, big.length, JSON.stringify(big), 'lead-4');
    for (let i = 0; i < 100 && (await redis.exists(keys.lock)) === 1; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect([await redis.exists(keys.lock), await redis.exists(keys.shared)]).toEqual([0, 0]);
  });

  it('a Redis that does not answer is a miss, never an error', async () => {
    const down = new RedisBatch({ url: 'redis://127.0.0.1:1', cluster: false });
    const offline = new ResultCache(batchCacheRedis(down), { pricePercent: 10, ttlMs: () => 1_000, maxEntryBytes: 2_000, pollMs: 5 }, pino({ level: 'silent' }));
    const keys = keysOf(3);
    expect(await offline.lookup(keys, [keys.shared], 3, null, 't', true)).toEqual({ kind: 'miss' });
    expect(await offline.join(keys, keys.shared, 3, null, 100)).toEqual({ kind: 'alone' });
    down.close();
  });

  describe('a gateway\'s own copies (CACHE_LOCAL_TTL_MS)', () => {
    const JSON_TEXT = JSON.stringify(RESULTS);
    const localCache = (localMaxBytes: number, localTtlMs = 1_000): ResultCache =>
      new ResultCache(batchCacheRedis(batch), { pricePercent: 10, ttlMs: () => 60_000, maxEntryBytes: 2_000, pollMs: 5, localTtlMs, localMaxBytes }, pino({ level: 'silent' }), null, () => now);

    it('answers what a lookup found without Redis, for CACHE_LOCAL_TTL_MS, as many results or fewer, within cache_max_age_s', async () => {
      const local = localCache(1_000_000);
      const keys = keysOf(3);
      local.store(keys.shared, keys.lock, 'exa/fast', 3, RESULTS.length, JSON_TEXT, '');
      await stored(keys.shared);
      // A store keeps no copy (a gateway whose searches never repeat holds nothing); a lookup that finds the entry does.
      expect(local.lookupLocal([keys.shared], 3, null)).toBeNull();
      expect((await local.lookup(keys, [keys.shared], 3, null, 'x', false, 'exa/fast')).kind).toBe('hit');
      // Redis no longer holds it: the copy still answers (so no lookup reached Redis).
      await redis.del(keys.shared);
      expect(local.lookupLocal([keys.shared], 2, null)).toEqual({ count: 3, json: JSON_TEXT, ageS: 0 });
      expect(local.lookupLocal([keys.shared], 4, null)).toBeNull();
      now += 900;
      expect(local.lookupLocal([keys.shared], 3, 500)).toBeNull();
      expect(local.lookupLocal([keys.shared], 3, null)).toEqual({ count: 3, json: JSON_TEXT, ageS: 0 });
      now += 100;
      expect(local.lookupLocal([keys.shared], 3, null)).toBeNull();
      // Without the copy the lookup asks Redis, which no longer has the entry: this search leads.
      expect((await local.lookup(keys, [keys.shared], 3, null, 'lead-l', true)).kind).toBe('lead');
    });

    it('keeps what a lookup of one entry found in Redis, never what a lookup of two found', async () => {
      const local = localCache(1_000_000);
      const writer = localCache(1_000_000, 0);
      const one = keysOf(3);
      writer.store(one.shared, one.lock, 'exa/fast', 3, RESULTS.length, JSON_TEXT, '');
      await stored(one.shared);
      expect(local.lookupLocal([one.shared], 3, null)).toBeNull();
      expect((await local.lookup(one, [one.shared], 3, null, 'x', false, 'exa/fast')).kind).toBe('hit');
      expect(local.lookupLocal([one.shared], 3, null)).toEqual({ count: 3, json: JSON_TEXT, ageS: 0 });
      const two = keysOf(3);
      writer.store(two.shared, two.lock, 'exa/fast', 3, RESULTS.length, JSON_TEXT, '');
      await stored(two.shared);
      const account = `${two.shared}:account`;
      expect((await local.lookup(two, [account, two.shared], 3, null, 'x', false, 'exa/fast')).kind).toBe('hit');
      expect(local.lookupLocal([two.shared], 3, null)).toBeNull();
      expect(local.lookupLocal([account], 3, null)).toBeNull();
    });

    it('holds at most CACHE_LOCAL_MAX_BYTES: the oldest copy goes first; 0 keeps none; a store drops the copy it replaces', async () => {
      const first = keysOf(3);
      const second = keysOf(3);
      const writer = localCache(0);
      writer.store(first.shared, first.lock, 'exa/fast', 3, RESULTS.length, JSON_TEXT, '');
      writer.store(second.shared, second.lock, 'exa/fast', 3, RESULTS.length, JSON_TEXT, '');
      await stored(first.shared);
      await stored(second.shared);
      const look = async (cache: ResultCache, keys: ReturnType<typeof keysOf>): Promise<void> => {
        expect((await cache.lookup(keys, [keys.shared], 3, null, 'x', false, 'exa/fast')).kind).toBe('hit');
      };
      const local = localCache(first.shared.length + JSON_TEXT.length + 10);
      await look(local, first);
      await look(local, second);
      expect(local.lookupLocal([first.shared], 3, null)).toBeNull();
      expect(local.lookupLocal([second.shared], 3, null)).not.toBeNull();
      // A refresh through this process stores a new answer: the old copy is not served after it.
      local.store(second.shared, second.lock, 'exa/fast', 3, RESULTS.length, JSON_TEXT, '');
      expect(local.lookupLocal([second.shared], 3, null)).toBeNull();
      await look(writer, first);
      expect(writer.lookupLocal([first.shared], 3, null)).toBeNull();
    });
  });
});
