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
    cache.useLeadLifetime(2_000);
  });

  afterAll(() => {
    batch.close();
    redis.disconnect();
  });

  const keysOf = (): ReturnType<typeof cacheKeys> => cacheKeys(cacheDigest('exa/fast', `q ${randomBytes(6).toString('hex')}`, '{}'), SHARED_SCOPE);
  const stored = async (key: string): Promise<void> => {
    for (let i = 0; i < 100 && !/^\d/.test((await redis.get(key)) ?? ''); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  };

  it('the first lookup leads (its lead held in the entry\'s key), the next follows; the answer replaces the lead and is a hit for as many results or fewer', async () => {
    const keys = keysOf();
    expect(await cache.lookup([keys.shared], 3, null, 'lead-1', true)).toEqual({ kind: 'lead' });
    expect(await redis.get(keys.shared)).toBe('~lead-1');
    expect(await redis.pttl(keys.shared)).toBeLessThanOrEqual(2_000);
    expect(await cache.lookup([keys.shared], 3, null, 'other', true)).toEqual({ kind: 'follow' });
    // Only looking finds no answer in a lead.
    expect(await cache.lookup([keys.shared], 3, null, 'x', false)).toEqual({ kind: 'miss' });
    cache.store(keys.shared, 'exa/fast', 3, RESULTS.length, JSON.stringify(RESULTS), 'lead-1');
    await stored(keys.shared);
    expect(await redis.get(keys.shared)).toBe(`3|${now}|3|${JSON.stringify(RESULTS)}`);
    now += 5_000;
    expect(await cache.lookup([keys.shared], 2, null, 'x', true)).toEqual({ kind: 'hit', answer: { count: 3, json: JSON.stringify(RESULTS), ageS: 5 } });
    // Too old for cache_max_age_s 4, or asked for more results: no hit, and no lead taken over the answer (it stays).
    expect(await cache.lookup([keys.shared], 3, 4_000, 'x', false)).toEqual({ kind: 'miss' });
    expect(await cache.lookup([keys.shared], 3, 4_000, 'y', true)).toEqual({ kind: 'miss' });
    expect(await cache.lookup([keys.shared], 4, null, 'y', true)).toEqual({ kind: 'miss' });
    expect(await redis.get(keys.shared)).toBe(`3|${now - 5_000}|3|${JSON.stringify(RESULTS)}`);
    expect(await redis.pttl(keys.shared)).toBeGreaterThan(50_000);
  });

  it('followers join the leader\'s answer (one poll per lead in a process); one asking more results than it holds goes on alone', async () => {
    const keys = keysOf();
    expect((await cache.lookup([keys.shared], 2, null, 'lead-2', true)).kind).toBe('lead');
    const waiting = [cache.join(keys.shared, 2, null, 5_000), cache.join(keys.shared, 2, null, 5_000), cache.join(keys.shared, 3, null, 5_000)];
    cache.store(keys.shared, 'exa/fast', 2, 2, JSON.stringify(RESULTS.slice(0, 2)), 'lead-2');
    const joined = await Promise.all(waiting);
    expect(joined.map((j) => j.kind)).toEqual(['joined', 'joined', 'alone']);
  });

  it('an answer stored by another search replaces the lead: the followers join it, and the leader\'s release keeps it', async () => {
    const keys = keysOf();
    expect((await cache.lookup([keys.shared], 3, null, 'lead-5', true)).kind).toBe('lead');
    const waiting = cache.join(keys.shared, 3, null, 5_000);
    // A refresh (or a follower gone on alone) stores without leading.
    cache.store(keys.shared, 'exa/fast', 3, RESULTS.length, JSON.stringify(RESULTS), '');
    expect(await waiting).toEqual({ kind: 'joined', answer: { count: 3, json: JSON.stringify(RESULTS), ageS: 0 } });
    cache.release(keys.shared, 'lead-5');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await redis.get(keys.shared)).toBe(`3|${now}|3|${JSON.stringify(RESULTS)}`);
  });

  it('stores an answer byte for byte, ASCII or not (é, 字, an emoji), and serves the same text', async () => {
    for (const snippet of ['plain ascii', 'café é', '字 \u{1F50D} "quoted" \\ back']) {
      const keys = keysOf();
      const json = JSON.stringify([{ ...RESULTS[0], snippet }]);
      cache.store(keys.shared, 'exa/fast', 1, 1, json, '');
      await stored(keys.shared);
      expect(await redis.get(keys.shared)).toBe(`1|${now}|1|${json}`);
      expect(await cache.lookup([keys.shared], 1, null, 'x', false)).toEqual({ kind: 'hit', answer: { count: 1, json, ageS: 0 } });
    }
  });

  it('an entry of the first format (no result count) is still served, its count read from its JSON', async () => {
    const keys = keysOf();
    await redis.set(keys.shared, `3|${now - 2_000}|${JSON.stringify(RESULTS)}`, 'PX', 60_000);
    expect(await cache.lookup([keys.shared], 3, null, 'x', true)).toEqual({ kind: 'hit', answer: { count: 3, json: JSON.stringify(RESULTS), ageS: 2 } });
    await redis.set(keys.shared, `3|${now}|x|not json`, 'PX', 60_000);
    expect(await cache.lookup([keys.shared], 3, null, 'x', false)).toEqual({ kind: 'miss' });
  });

  it('a leader that gives its lead back without an answer sends its followers on alone; another token cannot release it', async () => {
    const keys = keysOf();
    expect((await cache.lookup([keys.shared], 3, null, 'lead-3', true)).kind).toBe('lead');
    cache.release(keys.shared, 'not-the-leader');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await redis.get(keys.shared)).toBe('~lead-3');
    const waiting = cache.join(keys.shared, 3, null, 5_000);
    cache.release(keys.shared, 'lead-3');
    expect(await waiting).toEqual({ kind: 'alone' });
    expect(await redis.exists(keys.shared)).toBe(0);
  });

  it('a follower stops waiting after its timeout; an answer too large is not stored and frees the lead', async () => {
    const keys = keysOf();
    expect((await cache.lookup([keys.shared], 3, null, 'lead-4', true)).kind).toBe('lead');
    const realNow = now;
    const timed = cache.join(keys.shared, 3, null, 50);
    now = realNow + 100;
    expect(await timed).toEqual({ kind: 'alone' });
    const big = [{ ...RESULTS[0], snippet: 'x'.repeat(3_000) } as NormalizedResult];
    cache.store(keys.shared, 'exa/fast', 3, big.length, JSON.stringify(big), 'lead-4');
    for (let i = 0; i < 100 && (await redis.exists(keys.shared)) === 1; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await redis.exists(keys.shared)).toBe(0);
    // Fewer characters than the bound, more bytes (é is two): too large as well.
    const wide = keysOf();
    expect((await cache.lookup([wide.shared], 3, null, 'lead-6', true)).kind).toBe('lead');
    const accented = JSON.stringify([{ ...RESULTS[0], snippet: 'é'.repeat(1_500) }]);
    expect(accented.length).toBeLessThan(2_000);
    cache.store(wide.shared, 'exa/fast', 3, 1, accented, 'lead-6');
    for (let i = 0; i < 100 && (await redis.exists(wide.shared)) === 1; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await redis.exists(wide.shared)).toBe(0);
    // Just under the bound in bytes: stored.
    const fits = JSON.stringify([{ ...RESULTS[0], snippet: 'é'.repeat(800) }]);
    cache.store(wide.shared, 'exa/fast', 3, 1, fits, '');
    await stored(wide.shared);
    expect(await redis.get(wide.shared)).toBe(`3|${now}|1|${fits}`);
  });

  it('a BYOK search (its account\'s entry, then the shared one) leads on its own entry and is served the shared answer', async () => {
    const digest = cacheDigest('exa/fast', `q ${randomBytes(6).toString('hex')}`, '{}');
    const own = cacheKeys(digest, { kind: 'account', accountId: 'acct_a' });
    const other = cacheKeys(digest, { kind: 'account', accountId: 'acct_b' });
    const entries = (keys: typeof own): string[] => [keys.account ?? '', keys.shared];
    expect(await cache.lookup(entries(own), 3, null, 'byok-1', true)).toEqual({ kind: 'lead' });
    expect(await redis.get(own.account ?? '')).toBe('~byok-1');
    expect(await redis.exists(own.shared)).toBe(0);
    expect(await cache.lookup(entries(own), 3, null, 'byok-2', true)).toEqual({ kind: 'follow' });
    // Another account's BYOK search leads on its own entry: never a follower of this account's call.
    expect(await cache.lookup(entries(other), 3, null, 'byok-3', true)).toEqual({ kind: 'lead' });
    cache.store(own.account ?? '', 'exa/fast', 3, RESULTS.length, JSON.stringify(RESULTS), 'byok-1');
    await stored(own.account ?? '');
    expect(await cache.lookup(entries(own), 3, null, 'x', true)).toEqual({ kind: 'hit', answer: { count: 3, json: JSON.stringify(RESULTS), ageS: 0 } });
    // The account's answer is never the shared one, nor another account's.
    expect(await cache.lookup([own.shared], 3, null, 'x', false)).toEqual({ kind: 'miss' });
    expect(await cache.lookup(entries(other), 3, null, 'x', true)).toEqual({ kind: 'follow' });
    // A shared answer serves a BYOK search whose own entry holds none that serves it (it takes no lead then).
    await redis.set(own.shared, `5|${now}|3|${JSON.stringify(RESULTS)}`, 'PX', 60_000);
    expect(await cache.lookup(entries(own), 5, null, 'x', true)).toEqual({ kind: 'hit', answer: { count: 3, json: JSON.stringify(RESULTS), ageS: 0 } });
    expect(await cache.lookup(entries(own), 6, null, 'x', true)).toEqual({ kind: 'miss' });
    expect(await redis.get(own.account ?? '')).toBe(`3|${now}|3|${JSON.stringify(RESULTS)}`);
  });

  it('a Redis that does not answer is a miss, never an error', async () => {
    const down = new RedisBatch({ url: 'redis://127.0.0.1:1', cluster: false });
    const offline = new ResultCache(batchCacheRedis(down), { pricePercent: 10, ttlMs: () => 1_000, maxEntryBytes: 2_000, pollMs: 5 }, pino({ level: 'silent' }));
    const keys = keysOf();
    expect(await offline.lookup([keys.shared], 3, null, 't', true)).toEqual({ kind: 'miss' });
    expect(await offline.lookup([`${keys.shared}:a`, keys.shared], 3, null, 't', true)).toEqual({ kind: 'miss' });
    expect(await offline.join(keys.shared, 3, null, 100)).toEqual({ kind: 'alone' });
    down.close();
  });

  describe('a gateway\'s own copies (CACHE_LOCAL_TTL_MS)', () => {
    const JSON_TEXT = JSON.stringify(RESULTS);
    const localCache = (localMaxBytes: number, localTtlMs = 1_000): ResultCache =>
      new ResultCache(batchCacheRedis(batch), { pricePercent: 10, ttlMs: () => 60_000, maxEntryBytes: 2_000, pollMs: 5, localTtlMs, localMaxBytes }, pino({ level: 'silent' }), null, () => now);

    it('answers what a lookup found without Redis, for CACHE_LOCAL_TTL_MS, as many results or fewer, within cache_max_age_s', async () => {
      const local = localCache(1_000_000);
      const keys = keysOf();
      local.store(keys.shared, 'exa/fast', 3, RESULTS.length, JSON_TEXT, '');
      await stored(keys.shared);
      // A store keeps no copy (a gateway whose searches never repeat holds nothing); a lookup that finds the entry does.
      expect(local.lookupLocal([keys.shared], 3, null)).toBeNull();
      expect((await local.lookup([keys.shared], 3, null, 'x', false, 'exa/fast')).kind).toBe('hit');
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
      expect((await local.lookup([keys.shared], 3, null, 'lead-l', true)).kind).toBe('lead');
    });

    it('keeps what a lookup of one entry found in Redis, never what a lookup of two found', async () => {
      const local = localCache(1_000_000);
      const writer = localCache(1_000_000, 0);
      const one = keysOf();
      writer.store(one.shared, 'exa/fast', 3, RESULTS.length, JSON_TEXT, '');
      await stored(one.shared);
      expect(local.lookupLocal([one.shared], 3, null)).toBeNull();
      expect((await local.lookup([one.shared], 3, null, 'x', false, 'exa/fast')).kind).toBe('hit');
      expect(local.lookupLocal([one.shared], 3, null)).toEqual({ count: 3, json: JSON_TEXT, ageS: 0 });
      const two = keysOf();
      writer.store(two.shared, 'exa/fast', 3, RESULTS.length, JSON_TEXT, '');
      await stored(two.shared);
      const account = `${two.shared}:account`;
      expect((await local.lookup([account, two.shared], 3, null, 'x', false, 'exa/fast')).kind).toBe('hit');
      expect(local.lookupLocal([two.shared], 3, null)).toBeNull();
      expect(local.lookupLocal([account], 3, null)).toBeNull();
    });

    it('holds at most CACHE_LOCAL_MAX_BYTES: the oldest copy goes first; 0 keeps none; a store drops the copy it replaces', async () => {
      const first = keysOf();
      const second = keysOf();
      const writer = localCache(0);
      writer.store(first.shared, 'exa/fast', 3, RESULTS.length, JSON_TEXT, '');
      writer.store(second.shared, 'exa/fast', 3, RESULTS.length, JSON_TEXT, '');
      await stored(first.shared);
      await stored(second.shared);
      const look = async (cache: ResultCache, keys: ReturnType<typeof keysOf>): Promise<void> => {
        expect((await cache.lookup([keys.shared], 3, null, 'x', false, 'exa/fast')).kind).toBe('hit');
      };
      const local = localCache(first.shared.length + JSON_TEXT.length + 10);
      await look(local, first);
      await look(local, second);
      expect(local.lookupLocal([first.shared], 3, null)).toBeNull();
      expect(local.lookupLocal([second.shared], 3, null)).not.toBeNull();
      // A refresh through this process stores a new answer: the old copy is not served after it.
      local.store(second.shared, 'exa/fast', 3, RESULTS.length, JSON_TEXT, '');
      expect(local.lookupLocal([second.shared], 3, null)).toBeNull();
      await look(writer, first);
      expect(writer.lookupLocal([first.shared], 3, null)).toBeNull();
    });
  });
});
