import { CATALOG, hostnameMatches, MODELS, redisKeys, RESEARCH_MODELS } from '@svc/contracts';
import type { FilterName, ModelSpec } from '@svc/contracts';
import { REDIS_TOPOLOGIES, bearer, call, newAccount, newApiKey, waitFor, grantCredits, useStack, SETTLING_STACK } from '@svc/test-kit';

/**
 * Search filters end to end (docs/api.md, "Filters"): the gateway, account-admin, billing,
 * the ledger worker and the provider simulator as separate processes over HTTP. Each filter is
 * honoured by each model that supports it (what came back is inside the domains and dates,
 * and the simulator was asked the provider's own parameter); a model that cannot honour a
 * filter is skipped and the fallback answers; when every model is skipped the answer is 400
 * unsupported_filter, and nothing is reserved, charged or sent upstream.
 */
const FILTER_VALUES = {
  include_domains: ['example.org'],
  exclude_domains: ['docs.example.org'],
  country: 'DE',
  language: 'de',
  published_after: '2025-01-01',
  published_before: '2025-06-30T12:00:00Z',
  safesearch: 'strict',
} as const satisfies Record<FilterName, unknown>;
const FROM_MS = Date.UTC(2025, 0, 1);
const TO_MS = Date.UTC(2025, 5, 30, 12);

/** The provider's own parameter each filter became, as the simulator saw it. */
const UPSTREAM: Record<ModelSpec['provider'], Partial<Record<FilterName, [string, unknown]>>> = {
  brave: { country: ['country', 'DE'], language: ['search_lang', 'de'], safesearch: ['safesearch', 'strict'], published_after: ['freshness', '2025-01-01to2025-06-29'] },
  exa: {
    include_domains: ['includeDomains', ['example.org']], exclude_domains: ['excludeDomains', ['docs.example.org']], country: ['userLocation', 'DE'],
    published_after: ['startPublishedDate', '2025-01-01T00:00:00.000Z'], published_before: ['endPublishedDate', '2025-06-30T12:00:00.000Z'],
  },
  tavily: { include_domains: ['include_domains', ['example.org']], exclude_domains: ['exclude_domains', ['docs.example.org']], published_after: ['start_date', '2025-01-01'], published_before: ['end_date', '2025-06-29'] },
};

describe.each(REDIS_TOPOLOGIES)('search filters (%s Redis)', (topology) => {
  const suite = useStack({
    ...SETTLING_STACK, name: `filters_${topology}`, cluster: topology === 'cluster', redisDb: 11,
    gatewayEnv: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000' },
  }, { db: true });
  let account: Awaited<ReturnType<typeof newAccount>>;
  let key: string;

  beforeAll(async () => {
    account = await newAccount(suite.gw, 'filters');
    await grantCredits(suite.stack, account.accountId, 10000000, { redis: suite.redis });
    key = (await newApiKey(suite.gw, account.managementKey)).secret;
  });

  const search = (body: Record<string, unknown>) => call('POST', `${suite.gw}/v1/search`, { body, headers: bearer(key) });

  /** The simulator's record of the request whose query (q for Brave) was `query`. */
  async function upstreamRequest(query: string): Promise<{ provider: string; path: string; params: Record<string, unknown> } | undefined> {
    const seen = await call('GET', `${suite.sim}/_sim/requests`);
    const requests = seen.body.requests as { provider: string; path: string; params: Record<string, unknown> }[];
    return requests.find((r) => r.params.q === query || r.params.query === query);
  }

  it('GET /v1/models lists every model\'s supported_filters, as the catalog declares them (none on an extract model)', async () => {
    const models = await call('GET', `${suite.gw}/v1/models`);
    expect(models.status).toBe(200);
    // Research models (kind "research") follow the search models and take no search filter.
    expect(models.body.data.map((m: { id: string; supported_filters: string[] }) => [m.id, m.supported_filters]))
      .toEqual([...MODELS.map((model) => [model.id, model.kind === 'search' ? [...model.supportedFilters] : []]), ...RESEARCH_MODELS.map((model) => [model.id, []])]);
  });

  it.each(CATALOG.map((model) => [model.id, model] as const))('%s honours every filter it supports', async (id, model) => {
    const query = `filters honoured by ${id} ${topology}`;
    const filters = Object.fromEntries(model.supportedFilters.map((name) => [name, FILTER_VALUES[name]]));
    const answer = await search({ query, model: id, max_results: 10, ...filters });
    expect(answer.status).toBe(200);
    expect(answer.body.model).toBe(id);
    expect(answer.body.attempts).toEqual([]);
    const results = answer.body.results as { url: string; published_at: string | null }[];
    expect(results.length).toBeGreaterThan(0);
    for (const result of results) {
      const host = new URL(result.url).hostname;
      if ('include_domains' in filters) expect({ url: result.url, inside: hostnameMatches(host, 'example.org') }).toEqual({ url: result.url, inside: true });
      if ('exclude_domains' in filters) expect({ url: result.url, excluded: hostnameMatches(host, 'docs.example.org') }).toEqual({ url: result.url, excluded: false });
      if ('published_after' in filters) {
        const ms = Date.parse(result.published_at ?? '');
        expect({ url: result.url, inRange: ms >= FROM_MS && ms <= TO_MS }).toEqual({ url: result.url, inRange: true });
      }
    }
    const upstream = await upstreamRequest(query);
    expect(upstream).toBeDefined();
    for (const name of model.supportedFilters) {
      const mapped = UPSTREAM[model.provider][name];
      if (mapped === undefined) continue; // Brave's published_before shares freshness with published_after
      expect({ name, [mapped[0]]: upstream?.params[mapped[0]] }).toEqual({ name, [mapped[0]]: mapped[1] });
    }
  });

  it('a fallback list whose first model cannot honour a filter skips it with the reason and answers from the next', async () => {
    const query = `fallback to exa ${topology}`;
    const answer = await search({ query, models: ['brave/web', 'exa/fast'], include_domains: ['example.org'] });
    expect(answer.status).toBe(200);
    expect(answer.body.model).toBe('exa/fast');
    expect(answer.body.attempts).toEqual([{ model: 'brave/web', status: 'skipped', error: 'unsupported filter: include_domains' }]);
    expect(answer.body.cost_usd).toBe(0.009);
    expect(await upstreamRequest(query)).toEqual(expect.objectContaining({ provider: 'exa' }));
  });

  it('every model skipped: 400 unsupported_filter naming the filters and the models; nothing reserved, charged or sent upstream', async () => {
    const before = await suite.redis.get(redisKeys.accountBalance(account.accountId));
    const stats = (await call('GET', `${suite.sim}/_sim/stats`)).body;
    const answer = await search({ query: `nobody can ${topology}`, models: ['brave/web', 'exa/auto', 'tavily/basic'], include_domains: ['example.org'], safesearch: 'strict' });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toEqual({
      code: 'unsupported_filter',
      message: 'no requested model can honour every filter sent: brave/web (include_domains), exa/auto (safesearch), tavily/basic (safesearch)',
      request_id: expect.any(String),
      attempts: [
        { model: 'brave/web', status: 'skipped', error: 'unsupported filter: include_domains' },
        { model: 'exa/auto', status: 'skipped', error: 'unsupported filter: safesearch' },
        { model: 'tavily/basic', status: 'skipped', error: 'unsupported filter: safesearch' },
      ],
    });
    expect(await suite.redis.get(redisKeys.accountBalance(account.accountId))).toBe(before);
    expect(Number(await suite.redis.get(redisKeys.accountReserved(account.accountId)) ?? '0')).toBe(0);
    const after = (await call('GET', `${suite.sim}/_sim/stats`)).body;
    expect([after.brave.total, after.exa.total, after.tavily.total]).toEqual([stats.brave.total, stats.exa.total, stats.tavily.total]);
    expect(await upstreamRequest(`nobody can ${topology}`)).toBeUndefined();
    // The ledger: a search made after it is written by the worker; the refused one never is.
    const later = await search({ query: `after the refusal ${topology}`, model: 'exa/fast' });
    expect(later.status).toBe(200);
    await waitFor('the ledger worker to write the later search', async () =>
      ((await suite.db.query('SELECT 1 FROM settlements WHERE request_id = $1', [later.body.request_id])).rowCount ?? 0) > 0 ? true : undefined, { timeoutMs: 30_000 });
    const refusedId = String(answer.body.error.request_id);
    expect((await suite.db.query('SELECT 1 FROM settlements WHERE request_id = $1', [refusedId])).rowCount).toBe(0);
    expect((await suite.db.query('SELECT 1 FROM ledger_entries WHERE request_id = $1', [refusedId])).rowCount).toBe(0);
  });

  it.each([
    [{ country: 'us' }, 'country'],
    [{ country: 'XX' }, 'country'],
    [{ language: 'EN' }, 'language'],
    [{ include_domains: ['https://example.org/'] }, 'include_domains.0'],
    [{ include_domains: [] }, 'include_domains'],
    [{ exclude_domains: Array.from({ length: 21 }, (_, i) => `d${i}.example.org`) }, 'exclude_domains'],
    [{ published_after: 'yesterday' }, 'published_after'],
    [{ published_after: '2025-02-30' }, 'published_after'],
    [{ published_before: '2025-01-01T10:00:00' }, 'published_before'],
    [{ published_after: '2025-03-02', published_before: '2025-03-01' }, 'published_after'],
    [{ safesearch: 'high' }, 'safesearch'],
    [{ safesearch: 1 }, 'safesearch'],
  ])('%j is 400 invalid_request naming %s', async (filters, field) => {
    const answer = await search({ query: 'bad filter', model: 'exa/fast', ...filters });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('invalid_request');
    expect(answer.body.error.message).toContain(field);
  });
});
