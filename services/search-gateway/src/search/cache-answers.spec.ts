import { capturingLogger, failure, FakeMoney, FakeProviders, model, RECORD, SETTINGS, success } from '../../test/search-steps.fakes';
import type { CallOptions } from '../../test/search-steps.fakes';
import type { CacheCommand, CacheRedis } from '../cache/cache.redis';
import type { CacheScriptName } from '../cache/cache.scripts';
import { entryValue } from '../cache/entry-codec';
import { ResultCache } from '../cache/result-cache';
import type { CacheSettings } from '../cache/result-cache';
import type { ProviderOutcome } from '../providers';
import type { RespArg } from '../redis/resp-connection';
import { SearchService } from './search.service';
import type { SearchCall, SearchReply, SearchResult } from './search.result';

/** The cache's Redis, scripted: what each command answers, and every command sent. */
class FakeCacheRedis implements CacheRedis {
  readonly sent: { readonly name: string; readonly args: readonly unknown[] }[] = [];
  /** What the lookups (`SET … NX … GET`) find, in order; then an empty key. */
  readonly lookups: unknown[] = [];
  /** What a waiting search's `GET`s find, in order; then an empty key. */
  readonly gets: unknown[] = [];

  command(name: CacheCommand, args: readonly RespArg[]): Promise<unknown> {
    this.sent.push({ name: name === 'set' && args.includes('NX') ? 'lookup' : name === 'set' ? 'store' : 'get', args });
    if (name === 'get') return Promise.resolve(this.gets.shift() ?? null);
    return Promise.resolve(args.includes('NX') ? this.lookups.shift() ?? null : 'OK');
  }

  run(name: CacheScriptName, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    this.sent.push({ name: name === 'svcCacheRelease' ? 'release' : name, args: [...keys, ...args] });
    return Promise.resolve(1);
  }

  /** The commands sent, by name. */
  get names(): string[] {
    return this.sent.map((command) => command.name);
  }
}

const SETTINGS_CACHE: CacheSettings = { pricePercent: 10, ttlMs: () => 60_000, maxEntryBytes: 100_000, pollMs: 1, localTtlMs: 0, localMaxBytes: 0 };

function service(providers = new FakeProviders(), cacheSettings: CacheSettings = SETTINGS_CACHE) {
  const money = new FakeMoney();
  const redis = new FakeCacheRedis();
  const { log } = capturingLogger();
  const cache = new ResultCache(redis, cacheSettings, log);
  const search = new SearchService(providers, money, SETTINGS, { countFailure: () => undefined }, log, null, undefined, cache);
  return { search, money, redis, providers };
}

function call(options: CallOptions & { cache?: 'default' | 'refresh' | 'off' } = {}): SearchCall {
  return {
    record: options.record ?? RECORD,
    requestId: options.requestId ?? 'req_c',
    request: { query: 'q', models: (options.models ?? ['exa/fast']).map(model), maxResults: options.maxResults ?? 10, cache: options.cache ?? 'default', cacheMaxAgeS: null, contents: 'none', maxCharsPerResult: 5_000, maxTotalChars: null },
    idempotency: options.idempotency ?? null,
    elapsedMs: () => 2,
  };
}

function reply(result: SearchResult): SearchReply & { json: Record<string, unknown> } {
  if (result.kind !== 'reply') throw new Error(`refused: ${result.reason}`);
  return { ...result, json: JSON.parse(result.body) as Record<string, unknown> };
}

/** An answer stored for exa/fast (asked 10 results), as Redis holds it. */
const STORED = entryValue(10, Date.now(), 1, JSON.stringify((success(1) as Extract<ProviderOutcome, { ok: true }>).results)).text;
const unlease = (leaseId = 'req_c:0', provider = 'exa') => ({ kind: 'unlease', provider, leaseId });
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('the result cache as an answer source (docs/decisions/0042): the round trips and cache commands of each way an attempt is answered', () => {
  describe('miss', () => {
    it('the lookup takes the lead beside the first admission, which takes the provider lease: one round trip; the answer replaces the lead, nothing released', async () => {
      const { search, money, redis } = service();
      const answered = reply(await search.search(call()));
      expect([answered.status, answered.cache, answered.json.cost_usd]).toEqual([200, 'miss', 0.009]);
      expect(money.methods).toEqual(['admitFirst', 'settle']);
      expect(money.calls[0]).toMatchObject({ lease: { leaseId: 'req_c:0' }, reserve: { amountMicros: 9_000 } });
      expect(redis.names).toEqual(['lookup', 'store']);
      expect(redis.sent[0]?.args[1]).toBe('~req_c:0');
    });

    it('refresh: no lookup and no lead; the answer is stored', async () => {
      const { search, money, redis } = service();
      expect(reply(await search.search(call({ cache: 'refresh' }))).cache).toBe('miss');
      expect(money.calls[0]).toMatchObject({ method: 'admitFirst', lease: { leaseId: 'req_c:0' } });
      expect(redis.names).toEqual(['store']);
    });

    it('off: the provider call alone, no cache command', async () => {
      const { search, redis } = service();
      expect(reply(await search.search(call({ cache: 'off' }))).cache).toBe('off');
      expect(redis.sent).toEqual([]);
    });
  });

  describe('hit', () => {
    it('found in Redis: answered without a provider call at the cache price; the provider lease taken beside the lookup goes back with the settlement', async () => {
      const { search, money, redis, providers } = service();
      redis.lookups.push(STORED);
      const answered = reply(await search.search(call()));
      expect([answered.status, answered.cache, answered.json.cost_usd]).toEqual([200, 'hit', 0.0009]);
      expect(providers.requests).toEqual([]);
      expect(money.calls[1]).toMatchObject({ method: 'settle', ops: [unlease()], settlement: { record: { chargedMicros: 900, attempts: [{ reservedMicros: 9_000, chargedMicros: 900, cache: 'hit' }] } } });
      expect(redis.names).toEqual(['lookup']);
    });

    it('found in Redis while the provider is at capacity: still answered, no second round trip', async () => {
      const { search, money, redis } = service();
      redis.lookups.push(STORED);
      money.admitFirstAnswers.push({ leased: false, admission: { kind: 'admitted', remaining: 3, verdict: { kind: 'ok' } } });
      expect(reply(await search.search(call())).cache).toBe('hit');
      expect(money.methods).toEqual(['admitFirst', 'settle']);
      expect(money.calls[1]).toMatchObject({ ops: [] });
    });

    it('from this gateway\'s own copy: no lookup; admitted at the cache price without a provider lease', async () => {
      const { search, money, redis } = service(new FakeProviders(), { ...SETTINGS_CACHE, localTtlMs: 10_000, localMaxBytes: 1_000_000 });
      redis.lookups.push(STORED);
      await search.search(call());
      const answered = reply(await search.search(call({ requestId: 'req_d' })));
      expect(answered.cache).toBe('hit');
      expect(redis.names).toEqual(['lookup']);
      expect(money.calls[2]).toEqual({ method: 'admitFirst', ops: [], lease: null, reserve: { index: 0, amountMicros: 900, claim: undefined } });
    });
  });

  describe('joined', () => {
    it('a follower gives the provider lease taken beside its lookup back at once (not after its wait), then is served the leader\'s answer at the cache price', async () => {
      const { search, money, redis, providers } = service();
      redis.lookups.push('~req_leader:0');
      redis.gets.push('~req_leader:0', STORED);
      const answered = reply(await search.search(call()));
      expect([answered.cache, answered.json.cost_usd]).toEqual(['joined', 0.0009]);
      expect(providers.requests).toEqual([]);
      expect(money.calls.map((c) => [c.method, 'ops' in c ? c.ops : null])).toEqual([['admitFirst', []], ['giveBack', [unlease()]], ['settle', []]]);
      expect(redis.names).toEqual(['lookup', 'get', 'get']);
    });

    it('a second attempt of this gateway on the same entry takes no provider lease beside its lookup', async () => {
      const held = new Promise<ProviderOutcome>((resolve) => setTimeout(() => resolve(success(1)), 30));
      const { search, money, redis } = service(new FakeProviders().answer('exa', held));
      redis.lookups.push(null, '~req_c:0');
      const leader = search.search(call());
      await tick();
      const follower = search.search(call({ requestId: 'req_f' }));
      redis.gets.push(STORED);
      expect([reply(await leader).cache, reply(await follower).cache]).toEqual(['miss', 'joined']);
      const admissions = money.calls.filter((c) => c.method === 'admitFirst');
      expect(admissions.map((c) => (c.method === 'admitFirst' ? c.lease?.leaseId ?? null : undefined))).toEqual(['req_c:0', null]);
      expect(money.methods).not.toContain('giveBack');
    });

    it('a follower whose leader failed takes its provider lease then (one more round trip), calls the provider and stores its answer without a lead', async () => {
      const { search, money, redis, providers } = service();
      redis.lookups.push('~req_leader:0');
      // The lead is gone without an answer.
      redis.gets.push(null);
      const answered = reply(await search.search(call()));
      expect([answered.status, answered.cache, answered.json.cost_usd]).toEqual([200, 'miss', 0.009]);
      expect(money.methods).toEqual(['admitFirst', 'giveBack', 'lease', 'settle']);
      expect(money.calls[2]).toMatchObject({ method: 'lease', lease: { leaseId: 'req_c:0', provider: 'exa' }, extendLeaseMs: SETTINGS.admission.leaseTtlMs });
      expect(providers.requests).toHaveLength(1);
      expect(redis.names).toEqual(['lookup', 'get', 'store']);
    });

    it('...and with no lease free is skipped for capacity like any attempt: 503, its reservation given back', async () => {
      const { search, money, redis, providers } = service();
      redis.lookups.push('~req_leader:0');
      redis.gets.push(null);
      money.leaseAnswers.push(false);
      const answered = reply(await search.search(call()));
      expect(answered.status).toBe(503);
      expect(providers.requests).toEqual([]);
      expect(money.calls.at(-1)).toMatchObject({ method: 'finish', ops: [{ kind: 'release', index: 0, keepMicros: 0 }, { kind: 'unleaseAccount' }] });
    });
  });

  describe('the lead goes back in one place, whatever ended the attempt', () => {
    const releases = (redis: FakeCacheRedis): unknown[][] => redis.sent.filter((c) => c.name === 'release').map((c) => [...c.args]);

    it('the leading call failed: its lead goes back once, and the fallback leads on its own entry', async () => {
      const { search, redis } = service(new FakeProviders().answer('exa', failure('server_error')));
      const answered = reply(await search.search(call({ models: ['exa/fast', 'brave/web'] })));
      expect(answered.json.model).toBe('brave/web');
      expect(releases(redis)).toEqual([[redis.sent[0]?.args[0], '~req_c:0']]);
      expect(redis.names).toEqual(['lookup', 'release', 'lookup', 'store']);
    });

    it('the leader blocked by the balance (402): its lead goes back', async () => {
      const { search, money, redis } = service();
      money.admitFirstAnswers.push({ leased: true, admission: { kind: 'admitted', remaining: 3, verdict: { kind: 'balance' } } });
      expect(reply(await search.search(call())).status).toBe(402);
      expect(redis.names).toEqual(['lookup', 'release']);
    });

    it('the search refused (rate limited) before its lookup was read: the lead goes back once the lookup answers', async () => {
      const { search, money, redis } = service();
      money.admitFirstAnswers.push({ leased: false, admission: { kind: 'rate_limited', retryAfterMs: 100 } });
      expect(await search.search(call())).toMatchObject({ kind: 'refused', reason: 'rate_limited' });
      await tick();
      expect(redis.names).toEqual(['lookup', 'release']);
    });

    it('a fault after a provider call: every lead goes back, and the account lease', async () => {
      const { search, money, redis } = service(new FakeProviders().answer('exa', failure('server_error')));
      money.admitAnswers.push(new Error('connection reset'));
      await expect(search.search(call({ models: ['exa/fast', 'brave/web'] }))).rejects.toThrow('connection reset');
      await tick();
      expect(redis.names).toEqual(['lookup', 'release', 'lookup', 'release']);
      expect(money.methods).toEqual(['admitFirst', 'admit', 'releaseAccount']);
    });

    it('a follower never releases the leader\'s lead', async () => {
      const { search, redis } = service(new FakeProviders().answer('exa', failure('server_error')));
      redis.lookups.push('~req_leader:0');
      redis.gets.push(null);
      expect(reply(await search.search(call())).status).toBe(502);
      expect(releases(redis)).toEqual([]);
    });
  });
});
