import { randomBytes } from 'node:crypto';
import { scanKeys } from '@svc/redis-client';
import { redisKeys } from '@svc/contracts';
import { parsePrometheusText, sumSamples } from '@svc/metrics';
import { REDIS_TOPOLOGIES, bearer, call, newAccount, newApiKey, waitFor, grantCredits, UNTHROTTLED_GATEWAY_ENV, useStack, SETTLING_STACK } from '@svc/test-kit';
import type { JsonResponse, StackSuite } from '@svc/test-kit';

/**
 * The shared result cache and the coalescing of identical searches (docs/decisions/0023), end
 * to end: two gateways, account-admin, billing, the ledger worker and the provider simulator,
 * each its own process, on one Redis (or Redis Cluster) and one PostgreSQL. The simulator's
 * /_sim/stats counts the upstream calls.
 *
 * exa/fast with max_results 10 costs 0.009 USD (9,000 micro-USD); its cache price is 10 % of
 * its base price: 900 micro-USD.
 */
const FULL_MICROS = 9_000;
const CACHE_MICROS = 900;
const EXA_OWN = `own-exa-${randomBytes(12).toString('hex')}`;

/** A query no other test (or earlier run on the same Redis) used. */
const fresh = (label: string): string => `${label} ${randomBytes(6).toString('hex')}`;

const search = (gateway: string, secret: string, body: Record<string, unknown>): Promise<JsonResponse> =>
  call('POST', `${gateway}/v1/search`, { body: { model: 'exa/fast', max_results: 10, ...body }, headers: bearer(secret) });

/** A new account holding `micros`, with one API key. */
async function fundedAccountOf(suite: StackSuite, micros: number): Promise<Awaited<ReturnType<typeof newAccount>> & { apiKey: string }> {
  const account = await newAccount(suite.gw, 'cache');
  await grantCredits(suite.stack, account.accountId, micros, { redis: suite.redis });
  const key = await newApiKey(suite.gw, account.managementKey);
  return { ...account, apiKey: key.secret };
}

/** The calls the simulator's Exa API has answered so far. */
const exaCallsOf = async (suite: StackSuite): Promise<number> => Number((await call('GET', `${suite.sim}/_sim/stats`)).body.exa.total);

/** The account's search charges once the worker wrote `count` of them: [request id, micro-USD, cache status]. */
async function chargesOf(suite: StackSuite, accountId: string, count: number): Promise<Map<string, { micros: number; cache: string | null }>> {
  return waitFor('the ledger worker to write every charge', async () => {
    const rows = await suite.db.query<{ request_id: string; amount_micros: string; cache: string | null }>(
      `SELECT request_id, amount_micros, cache FROM ledger_entries WHERE account_id = $1 AND kind = 'search_charge'`, [accountId]);
    if (rows.rows.length < count) return undefined;
    return new Map(rows.rows.map((r) => [r.request_id, { micros: -Number(r.amount_micros), cache: r.cache }]));
  }, { timeoutMs: 30_000 });
}

describe.each(REDIS_TOPOLOGIES)('result cache and coalescing (%s Redis)', (topology) => {
  const suite = useStack({
    ...SETTLING_STACK,
    name: `cache_${topology}`,
    cluster: topology === 'cluster',
    redisDb: 13,
    simulatorEnv: { SIM_EXA_KEY: `sim-exa-key,${EXA_OWN}` },
    gatewayEnv: {
      CACHE_ENABLED: 'true',
      // Long enough that a slow machine cannot let a gateway's copy lapse between two searches of a test.
      CACHE_LOCAL_TTL_MS: '60000',
      ...UNTHROTTLED_GATEWAY_ENV,
    },
    gateways: [{}, {}],
  }, { db: true });

  const fundedAccount = (micros: number): ReturnType<typeof fundedAccountOf> => fundedAccountOf(suite, micros);
  const exaCalls = (): Promise<number> => exaCallsOf(suite);
  const charges = (accountId: string, count: number): ReturnType<typeof chargesOf> => chargesOf(suite, accountId, count);

  it('the catalog shows each model\'s cache price (10 % of its base price)', async () => {
    const account = await fundedAccount(FULL_MICROS);
    const models = await call('GET', `${suite.gw}/v1/models`, { headers: bearer(account.apiKey) });
    const exa = models.body.data.find((m: { id: string }) => m.id === 'exa/fast');
    expect(exa.pricing).toMatchObject({ base_usd: 0.009, cache_price_usd: 0.0009 });
    const pricing = await call('GET', `${suite.gateway(1)}/v1/credits/pricing`);
    expect(pricing.body.models.find((m: { id: string }) => m.id === 'brave/web')).toMatchObject({ base_usd: 0.006, cache_price_usd: 0.0006 });
    expect(pricing.body.cache).toEqual({ enabled: true, price_percent: 10 });
  });

  it('a repeated search is a hit on either gateway, charged the cache price exactly once in the ledger; usage reports hits and savings', async () => {
    const account = await fundedAccount(100 * FULL_MICROS);
    const query = fresh('cache hit');
    const before = await exaCalls();
    const miss = await search(suite.gw, account.apiKey, { query });
    expect([miss.status, miss.headers.get('x-svc-cache'), miss.body.cache, miss.body.cost_usd]).toEqual([200, 'miss', { status: 'miss', age_s: 0 }, 0.009]);
    // The same query differently spaced (and in NFD) is the same search; another gateway serves it.
    const hit = await search(suite.gateway(1), account.apiKey, { query: `  ${query.replace(' ', '   ')} `.normalize('NFD') });
    expect([hit.status, hit.headers.get('x-svc-cache'), hit.body.cache.status, hit.body.cost_usd]).toEqual([200, 'hit', 'hit', 0.0009]);
    expect(hit.body.cache.age_s).toBeGreaterThanOrEqual(0);
    expect(hit.body).toMatchObject({ model: 'exa/fast', provider: 'exa', source: 'platform', attempts: [] });
    expect(hit.body.results).toEqual(miss.body.results);
    // Fewer results are served from the entry; more are not (and case is kept: another search).
    const fewer = await search(suite.gw, account.apiKey, { query, max_results: 3 });
    expect([fewer.body.cache.status, fewer.body.results]).toEqual(['hit', miss.body.results.slice(0, 3)]);
    const more = await search(suite.gw, account.apiKey, { query, max_results: 12 });
    expect(more.body.cache.status).toBe('miss');
    const otherCase = await search(suite.gw, account.apiKey, { query: query.toUpperCase() });
    expect(otherCase.body.cache.status).toBe('miss');
    expect(await exaCalls()).toBe(before + 3);
    // The ledger: one entry per search; the hits at the cache price, with their status.
    const ledger = await charges(account.accountId, 5);
    expect(ledger.size).toBe(5);
    expect(ledger.get(hit.body.request_id)).toEqual({ micros: CACHE_MICROS, cache: 'hit' });
    expect(ledger.get(fewer.body.request_id)).toEqual({ micros: CACHE_MICROS, cache: 'hit' });
    expect(ledger.get(miss.body.request_id)).toEqual({ micros: FULL_MICROS, cache: 'miss' });
    const events = await suite.db.query<{ request_id: string; cache: string; saved_micros: string }>(
      `SELECT request_id, cache, saved_micros FROM usage_events WHERE request_id = $1`, [hit.body.request_id]);
    expect(events.rows.map((r) => [r.cache, Number(r.saved_micros)])).toEqual([['hit', FULL_MICROS - CACHE_MICROS]]);
    // Exa's price grows past 10 results: 12 cost 11,500; the 3-result hit saved 9,000 - 900.
    const spent = FULL_MICROS * 3 + 2_500 + 2 * CACHE_MICROS;
    expect(await suite.redis.get(redisKeys.accountBalance(account.accountId))).toBe(String(100 * FULL_MICROS - spent));
    const usage = await call('GET', `${suite.gateway(1)}/v1/usage`, { headers: bearer(account.managementKey) });
    expect(usage.body.total).toMatchObject({ searches: 5, cost_usd: spent / 1_000_000, cache_hits: 2, cache_saved_usd: (2 * (FULL_MICROS - CACHE_MICROS)) / 1_000_000 });
    const byModel = await call('GET', `${suite.gateway(1)}/v1/usage?group_by=model`, { headers: bearer(account.managementKey) });
    expect(byModel.body.data).toEqual([expect.objectContaining({ model: 'exa/fast', searches: 5, cache_hits: 2 })]);
    // The dashboard's activity shows each attempt's cache status.
    const activity = await call('GET', `${suite.gw}/dashboard/api/activity`, { headers: account.session });
    const shown = activity.body.data.find((item: { request_id: string }) => item.request_id === hit.body.request_id);
    expect(shown.attempts).toEqual([expect.objectContaining({ cache: 'hit', cost_usd: 0.0009, saved_usd: 0.0081 })]);
  });

  it('a hit answers text past Latin-1 (a curly quote, CJK, an emoji) as the miss gave it: from Redis, from a gateway\'s copy, and on an idempotent repeat', async () => {
    const account = await fundedAccount(100 * FULL_MICROS);
    // The simulator's titles and snippets repeat the query: a curly quote, CJK and an emoji in every result.
    const query = fresh('it’s 字 \u{1F50D} café');
    const miss = await search(suite.gw, account.apiKey, { query });
    expect(miss.body.cache.status).toBe('miss');
    expect(JSON.stringify(miss.body.results)).toContain('’s 字 \u{1F50D} café');
    // The other gateway's first hit reads the entry from Redis; its second, its own copy.
    const fromRedis = await search(suite.gateway(1), account.apiKey, { query });
    const fromCopy = await search(suite.gateway(1), account.apiKey, { query });
    const repeat = (): Promise<JsonResponse> => call('POST', `${suite.gateway(1)}/v1/search`, { body: { model: 'exa/fast', max_results: 10, query }, headers: { ...bearer(account.apiKey), 'idempotency-key': `bytes-${query}`.replace(/[^\x20-\x7e]/g, '') } });
    const first = await repeat();
    const again = await repeat();
    for (const hit of [fromRedis, fromCopy, first]) {
      expect([hit.status, hit.headers.get('x-svc-cache'), hit.headers.get('content-type')]).toEqual([200, 'hit', 'application/json; charset=utf-8']);
      expect(hit.body.results).toEqual(miss.body.results);
    }
    // The repeat answers the first's outcome, kept as text: the same body, byte for byte.
    expect(again.body).toEqual(first.body);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('x-svc-cache')).toBe('hit');
  });

  it('refresh asks the provider and stores its answer; off neither looks up nor stores', async () => {
    const account = await fundedAccount(100 * FULL_MICROS);
    const query = fresh('cache modes');
    const before = await exaCalls();
    expect((await search(suite.gw, account.apiKey, { query })).body.cache.status).toBe('miss');
    const refreshed = await search(suite.gateway(1), account.apiKey, { query, cache: 'refresh' });
    expect([refreshed.headers.get('x-svc-cache'), refreshed.body.cache, refreshed.body.cost_usd]).toEqual(['miss', { status: 'miss', age_s: 0 }, 0.009]);
    const off = await search(suite.gw, account.apiKey, { query, cache: 'off' });
    expect([off.headers.get('x-svc-cache'), off.body.cache, off.body.cost_usd]).toEqual(['off', { status: 'off', age_s: 0 }, 0.009]);
    expect(await exaCalls()).toBe(before + 3);
    // off stored nothing: a new query searched with off first is still a miss after it.
    const other = fresh('cache off first');
    expect((await search(suite.gw, account.apiKey, { query: other, cache: 'off' })).body.cache.status).toBe('off');
    expect((await search(suite.gw, account.apiKey, { query: other })).body.cache.status).toBe('miss');
    // cache_max_age_s: 0 accepts no stored answer (a miss that stores anew), a day accepts it.
    expect((await search(suite.gateway(1), account.apiKey, { query, cache_max_age_s: 0 })).body.cache.status).toBe('miss');
    expect((await search(suite.gateway(1), account.apiKey, { query, cache_max_age_s: 86_400 })).body.cache.status).toBe('hit');
    // Bad values are the API's 400.
    for (const bad of [{ cache: 'always' }, { cache_max_age_s: -1 }, { cache_max_age_s: 1.5 }, { cache: null }]) {
      const reply = await search(suite.gw, account.apiKey, { query, ...bad });
      expect([reply.status, reply.body.error.code]).toEqual([400, 'invalid_request']);
    }
  });

  it('refresh cannot make an entry serve the answer to another text: the one normal form is both the key and what the provider receives (U+FEFF, U+00A0, U+3000 and other Unicode whitespace; a decomposed é)', async () => {
    const victim = await fundedAccount(100 * FULL_MICROS);
    const other = await fundedAccount(100 * FULL_MICROS);
    const lastExaQuery = async (): Promise<unknown> => {
      const seen = (await call('GET', `${suite.sim}/_sim/requests`)).body.requests as { provider: string; params: { query?: unknown } }[];
      return seen.filter((request) => request.provider === 'exa').at(-1)?.params.query;
    };
    const cases: [string, (word: string) => string][] = [
      ['U+FEFF', (w) => `best\uFEFFvpn ${w}`],
      ['U+00A0', (w) => `best\u00A0vpn ${w}`],
      ['U+3000', (w) => `best\u3000vpn ${w}`],
      ['U+2003 and spaces', (w) => ` best \u2003 vpn\t${w} `],
      ['U+2028', (w) => `best\u2028vpn ${w}`],
    ];
    for (const [name, spelled] of cases) {
      const word = randomBytes(6).toString('hex');
      const normal = `best vpn ${word}`;
      const first = await search(suite.gw, victim.apiKey, { query: normal });
      expect([name, first.body.cache.status]).toEqual([name, 'miss']);
      // Another account's refresh, spelled with other whitespace: the provider receives the normal form.
      const refreshed = await search(suite.gateway(1), other.apiKey, { query: spelled(word), cache: 'refresh' });
      expect([name, refreshed.status, refreshed.body.cache.status, await lastExaQuery()]).toEqual([name, 200, 'miss', normal]);
      // The victim is still served what the provider answers for its own text.
      const again = await search(suite.gw, victim.apiKey, { query: normal });
      expect([name, again.body.cache.status]).toEqual([name, 'hit']);
      expect(again.body.results).toEqual(first.body.results);
    }
    // A decomposed é (e + U+0301) against the composed one.
    const word = randomBytes(6).toString('hex');
    const composed = `caf\u00e9 ${word}`;
    const first = await search(suite.gw, victim.apiKey, { query: composed });
    const refreshed = await search(suite.gateway(1), other.apiKey, { query: `cafe\u0301 ${word}`, cache: 'refresh' });
    expect([refreshed.status, await lastExaQuery()]).toEqual([200, composed]);
    const again = await search(suite.gw, victim.apiKey, { query: composed });
    expect([again.body.cache.status, again.body.results]).toEqual(['hit', first.body.results]);
  });

  it('a search with filters is never served an entry stored without them (or with others); the same filters in another order are', async () => {
    const account = await fundedAccount(100 * FULL_MICROS);
    const query = fresh('cache filters');
    const before = await exaCalls();
    expect((await search(suite.gw, account.apiKey, { query })).body.cache.status).toBe('miss');
    const filtered = await search(suite.gateway(1), account.apiKey, { query, include_domains: ['example.com', 'docs.example.org'], country: 'US' });
    expect([filtered.status, filtered.body.cache.status]).toEqual([200, 'miss']);
    const other = await search(suite.gw, account.apiKey, { query, include_domains: ['example.com'], country: 'US' });
    expect(other.body.cache.status).toBe('miss');
    // The same filters, listed in another order and case: the contracts' canonical form, one entry.
    const same = await search(suite.gw, account.apiKey, { query, country: 'US', include_domains: ['DOCS.example.org', 'example.com'] });
    expect([same.body.cache.status, same.body.results]).toEqual(['hit', filtered.body.results]);
    // And the unfiltered entry still answers the unfiltered search.
    expect((await search(suite.gateway(1), account.apiKey, { query })).body.cache.status).toBe('hit');
    expect(await exaCalls()).toBe(before + 3);
  });

  it('a hit is checked against the balance at the cache price', async () => {
    const rich = await fundedAccount(10 * FULL_MICROS);
    const query = fresh('cache balance');
    expect((await search(suite.gw, rich.apiKey, { query })).body.cache.status).toBe('miss');
    // An account that can pay the cache price and not the full price: the hit is served, a miss is refused.
    const poor = await fundedAccount(CACHE_MICROS);
    const hit = await search(suite.gateway(1), poor.apiKey, { query });
    expect([hit.status, hit.body.cache.status, hit.body.cost_usd]).toEqual([200, 'hit', 0.0009]);
    const again = await search(suite.gateway(1), poor.apiKey, { query });
    expect([again.status, again.body.error.code, again.body.error.needed_usd]).toEqual([402, 'insufficient_credits', 0.0009]);
    expect(await suite.redis.get(redisKeys.accountBalance(poor.accountId))).toBe('0');
  });

  it('50 identical searches at once across two gateways make one upstream call: one miss, 49 joined, each charged once', async () => {
    const account = await fundedAccount(100 * FULL_MICROS);
    // The leading call takes 3 s, so every search arrives while it is in flight.
    const query = `${fresh('coalesce')} sim:exa=slow3000`;
    const before = await exaCalls();
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => search(i % 2 === 0 ? suite.gw : suite.gateway(1), account.apiKey, { query })));
    expect(replies.map((r) => r.status)).toEqual(Array.from({ length: 50 }, () => 200));
    expect(await exaCalls()).toBe(before + 1);
    const statuses = replies.map((r) => r.body.cache.status as string);
    expect(statuses.filter((s) => s === 'miss')).toHaveLength(1);
    expect(statuses.filter((s) => s === 'joined')).toHaveLength(49);
    expect(new Set(replies.map((r) => r.headers.get('x-svc-cache')))).toEqual(new Set(['miss', 'joined']));
    for (const reply of replies) expect(reply.body.results).toEqual(replies[0]?.body.results);
    const ledger = await charges(account.accountId, 50);
    expect(ledger.size).toBe(50);
    expect([...ledger.values()].reduce((sum, c) => sum + c.micros, 0)).toBe(FULL_MICROS + 49 * CACHE_MICROS);
    expect([...ledger.values()].filter((c) => c.cache === 'joined')).toHaveLength(49);
    expect(await suite.redis.get(redisKeys.accountBalance(account.accountId))).toBe(String(100 * FULL_MICROS - FULL_MICROS - 49 * CACHE_MICROS));
    // The gateways count the lookups by model and status.
    const samples = (await Promise.all(suite.stack.gateways.map(async (g) => parsePrometheusText(await (await fetch(`${g.metricsUrl}/metrics`)).text())))).flat();
    expect(sumSamples(samples, 'gateway_cache_lookups_total', { model: 'exa/fast', status: 'joined' })).toBeGreaterThanOrEqual(49);
    expect(sumSamples(samples, 'gateway_cache_bytes_held')).toBeGreaterThan(0);
  });

  it('the leading call failing gives no waiting search an error: each goes on alone (its own call, then its fallbacks)', async () => {
    const account = await fundedAccount(100 * FULL_MICROS);
    // The first exa call of this query fails after 2 s; every later one answers.
    const query = `${fresh('leader fails')} sim:exa=failfirst2000`;
    const before = await exaCalls();
    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) =>
      search(i % 2 === 0 ? suite.gw : suite.gateway(1), account.apiKey, { query, models: ['exa/fast', 'brave/web'] })));
    // Every search answered; the one whose exa call failed fell back to Brave, as it would have alone.
    expect(replies.map((r) => r.status)).toEqual(Array.from({ length: 10 }, () => 200));
    const fellBack = replies.filter((r) => r.body.model === 'brave/web');
    expect(fellBack).toHaveLength(1);
    expect(fellBack[0]?.body.attempts).toEqual([expect.objectContaining({ model: 'exa/fast', status: 'error' })]);
    // The others waited, saw the leader fail, and went on alone: each called exa itself (miss),
    // unless a sibling that went on before it had already stored a complete answer, which it may
    // then join. No waiting search is ever given the leader's failure.
    const waited = replies.filter((r) => r.body.model === 'exa/fast');
    expect(waited).toHaveLength(9);
    for (const reply of waited) {
      expect(reply.body.attempts).toEqual([]);
      expect(['miss', 'joined']).toContain(reply.body.cache.status);
    }
    const misses = waited.filter((r) => r.body.cache.status === 'miss').length;
    expect(misses).toBeGreaterThanOrEqual(1);
    expect(await exaCalls()).toBe(before + 1 + misses);
  });

  it('a gateway answers a repeat from its own copy of the entry (no Redis lookup), charged the cache price exactly once', async () => {
    const gateway = suite.stack.gateways[0] as (typeof suite.stack.gateways)[number];
    const localHits = async (): Promise<number> => sumSamples(parsePrometheusText(await (await fetch(`${gateway.metricsUrl}/metrics`)).text()), 'gateway_cache_local_hits_total');
    const account = await fundedAccount(100 * FULL_MICROS);
    const query = fresh('cache local copy');
    const before = await exaCalls();
    expect((await search(suite.gw, account.apiKey, { query })).body.cache.status).toBe('miss');
    // The first repeat reads the entry in Redis (and keeps a copy); the next ones, within CACHE_LOCAL_TTL_MS, are served from it.
    const first = await search(suite.gw, account.apiKey, { query });
    const counted = await localHits();
    const repeats = [await search(suite.gw, account.apiKey, { query }), await search(suite.gw, account.apiKey, { query, max_results: 3 })];
    expect(repeats.map((r) => [r.status, r.headers.get('x-svc-cache'), r.body.cost_usd])).toEqual([[200, 'hit', 0.0009], [200, 'hit', 0.0009]]);
    expect(repeats[0]?.body.results).toEqual(first.body.results);
    expect(repeats[1]?.body.results).toEqual(first.body.results.slice(0, 3));
    expect(await localHits()).toBe(counted + 2);
    expect(await exaCalls()).toBe(before + 1);
    // Each hit once in the ledger at the cache price; the balance moved by exactly that.
    const ledger = await charges(account.accountId, 4);
    expect([...ledger.values()].map((c) => c.micros).sort((a, b) => a - b)).toEqual([CACHE_MICROS, CACHE_MICROS, CACHE_MICROS, FULL_MICROS]);
    expect(await suite.redis.get(redisKeys.accountBalance(account.accountId))).toBe(String(100 * FULL_MICROS - FULL_MICROS - 3 * CACHE_MICROS));
  });

  it('an answer from an account\'s own provider key is served to that account only', async () => {
    const owner = await fundedAccount(100 * FULL_MICROS);
    const put = await call('PUT', `${suite.gw}/v1/provider-keys/exa`, { body: { key: EXA_OWN }, headers: bearer(owner.managementKey) });
    expect(put.status).toBe(200);
    // Both gateways use the account's key once its change reached them (probes skip the cache).
    for (const gateway of [suite.gw, suite.gateway(1)]) {
      await waitFor('the gateway to use the account key', async () => {
        const probe = await search(gateway, owner.apiKey, { query: fresh('byok probe'), cache: 'off' });
        return probe.body.source === 'byok' ? true : undefined;
      });
    }
    const query = fresh('byok cached');
    const first = await search(suite.gw, owner.apiKey, { query });
    expect([first.body.source, first.body.cache.status]).toEqual(['byok', 'miss']);
    const other = await fundedAccount(100 * FULL_MICROS);
    const before = await exaCalls();
    const otherReply = await search(suite.gateway(1), other.apiKey, { query });
    expect([otherReply.body.source, otherReply.body.cache.status, otherReply.body.cost_usd]).toEqual(['platform', 'miss', 0.009]);
    expect(await exaCalls()).toBe(before + 1);
    const again = await search(suite.gateway(1), owner.apiKey, { query });
    expect([again.body.source, again.body.cache.status]).toEqual(['byok', 'hit']);
    // A BYOK hit costs no more than the attempt's BYOK fee (5 % of 9,000 = 450 < 900).
    expect(again.body.cost_usd).toBe(0.00045);
    expect(await exaCalls()).toBe(before + 1);
    // The stored entries hold results only: no provider key, no account id, in values or key names.
    let seen = 0;
    for await (const keys of scanKeys(suite.redis, 'svc:cache:*')) {
      for (const key of keys) {
        expect(key).not.toContain(owner.accountId);
        const value = key.includes(':e') ? await suite.redis.get(key) : null;
        if (value === null) continue;
        seen += 1;
        expect(value).not.toContain(EXA_OWN);
        expect(value).not.toContain(owner.accountId);
        expect(value).not.toContain('sim-exa-key');
      }
    }
    expect(seen).toBeGreaterThan(0);
  });
});

/**
 * A burst of identical searches on the deployment's default limits (docs/decisions/0042): Exa
 * holds at most 10 calls in flight (PROVIDER_MAX_IN_FLIGHT_EXA), each key 20 searches a second
 * in bursts of 40, an account 50 searches in flight. Only a call to the provider takes a
 * capacity slot: a hit or a joined search takes none, so the searches one call serves are
 * never refused for capacity.
 */
describe.each(REDIS_TOPOLOGIES)('a burst of identical searches on the default limits (%s Redis)', (topology) => {
  const suite = useStack({
    ...SETTLING_STACK,
    name: `cache_burst_${topology}`,
    cluster: topology === 'cluster',
    redisDb: 13,
    gatewayEnv: { CACHE_ENABLED: 'true' },
    gateways: [{}, {}],
  }, { db: true });

  it('50 identical searches at once across two gateways make exactly one upstream call and none is refused for capacity: one miss, the rest joined or hit, each charged as the cache says', async () => {
    const account = await fundedAccountOf(suite, 100 * FULL_MICROS);
    // Two keys of the account: each sends 25, inside a key's burst of 40.
    const second = (await newApiKey(suite.gw, account.managementKey)).secret;
    // The leading call takes 2 s, so every search arrives while it is in flight.
    const query = `${fresh('burst')} sim:exa=slow2000`;
    const before = await exaCallsOf(suite);
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) =>
      search(i % 2 === 0 ? suite.gw : suite.gateway(1), i < 25 ? account.apiKey : second, { query })));
    expect(replies.map((r) => [r.status, r.body.error?.code])).toEqual(Array.from({ length: 50 }, () => [200, undefined]));
    expect(await exaCallsOf(suite)).toBe(before + 1);
    const statuses = replies.map((r) => r.body.cache.status as string);
    expect(statuses.filter((s) => s === 'miss')).toHaveLength(1);
    expect(statuses.filter((s) => s === 'joined' || s === 'hit')).toHaveLength(49);
    for (const reply of replies) expect(reply.body.results).toEqual(replies[0]?.body.results);
    // One charge each: the miss at the model's price, every other at the cache price.
    const ledger = await chargesOf(suite, account.accountId, 50);
    expect(ledger.size).toBe(50);
    for (const reply of replies) {
      expect(ledger.get(reply.body.request_id)).toEqual({ micros: reply.body.cache.status === 'miss' ? FULL_MICROS : CACHE_MICROS, cache: reply.body.cache.status });
    }
    expect(await suite.redis.get(redisKeys.accountBalance(account.accountId))).toBe(String(100 * FULL_MICROS - FULL_MICROS - 49 * CACHE_MICROS));
  });
});
