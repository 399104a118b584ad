import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { cachePriceMicros, costMicros, extractCostMicros, filterInstantMs, findExtractModel, findModel, hostnameMatches, maxCostMicros, redisKeys } from '@svc/contracts';
import type { ModelSpec } from '@svc/contracts';
import { SearchGateway, SearchGatewayError } from '@svc/sdk';
import { bearer, call, grantCredits, newAccount, newApiKey, useStack, waitFor, SETTLING_STACK } from '@svc/test-kit';
import type { JsonResponse } from '@svc/test-kit';

/**
 * Fan-out (POST /v1/search `strategy: "fanout"`) and the cost cap (`max_cost_usd`), end to end
 * through HTTP, MCP and the SDK: two gateway processes (the second with the result cache on),
 * billing with its ledger worker, account-admin and the provider simulator, whose providers'
 * answers overlap (a share of each answer from one pool of pages, each provider spelling a page's
 * URL its own way) and fail or ignore filters on purpose (`sim:<provider>=...` in the query).
 * Money is read where it lands: the spendable balance in Redis, the settlement, usage events and
 * charge entries in billing's ledger.
 */
function model(id: string): ModelSpec {
  const found = findModel(id);
  if (found === undefined) throw new Error(`no model ${id}`);
  return found;
}

const EXA = model('exa/fast');
const BRAVE = model('brave/web');
const TAVILY = model('tavily/basic');
const THREE = ['exa/fast', 'brave/web', 'tavily/basic'];

/**
 * The page a URL stands for, by a rule of this test's own (stricter than the platform's: every
 * query parameter and the fragment dropped, the host in lower case, no trailing slash): no two
 * results of a merged list may stand for the same page by it.
 */
function pageOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.hostname.toLowerCase()}${parsed.pathname.replace(/\/+$/, '') || '/'}`;
}

interface FanoutBody {
  request_id: string;
  strategy: 'fanout';
  models: string[];
  results: { position: number; url: string; title: string; published_at: string | null; score: number; sources: { model: string; position: number }[] }[];
  cost_usd: number;
  attempts: { model: string; status: string; results?: number; cost_usd: number; error?: string; cache?: { status: string; age_s: number } }[];
  duplicates_removed: number;
  cache: { status: string; age_s: number };
}

const micros = (usd: number): number => Math.round(usd * 1_000_000);

describe('fan-out and the cost cap, end to end', () => {
  const clients: McpClient[] = [];
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
  });
  // Gateway 1 runs with the result cache on (test stacks start with it off).
  const suite = useStack({ ...SETTLING_STACK, name: 'fanout', redisDb: 9, gateways: [{}, { env: { CACHE_ENABLED: 'true' } }] }, { db: true });

  async function fundedKey(usd = 1): Promise<{ accountId: string; secret: string }> {
    const account = await newAccount(suite.gw, 'fanout');
    await grantCredits(suite.stack, account.accountId, Math.round(usd * 1_000_000), { redis: suite.redis });
    const key = await newApiKey(suite.gw, account.managementKey);
    return { accountId: account.accountId, secret: key.secret };
  }

  const balance = async (accountId: string): Promise<number> => Number(await suite.redis.get(redisKeys.accountBalance(accountId)));
  const search = (secret: string, body: Record<string, unknown>, gateway = 0): Promise<JsonResponse> =>
    call('POST', `${suite.gateway(gateway)}/v1/search`, { body, headers: bearer(secret) });

  /** Waits until the ledger worker wrote the request's settlement, then reads what billing keeps of it. */
  async function ledgerOf(requestId: string): Promise<{ charged: number; entries: number; attempts: { model: string; status: string; results: number; charged: number; timedOut: boolean }[] }> {
    const settlement = await waitFor(`the settlement of ${requestId}`, async () => {
      const rows = await suite.db.query<{ charged_micros: string }>('SELECT charged_micros FROM settlements WHERE request_id = $1', [requestId]);
      return rows.rows[0];
    }, { timeoutMs: 20_000 });
    const entries = await suite.db.query<{ amount_micros: string }>('SELECT amount_micros FROM ledger_entries WHERE request_id = $1', [requestId]);
    const attempts = await suite.db.query<{ model: string; status: string; results: number; charged_micros: string; timed_out: boolean }>(
      'SELECT model, status, results, charged_micros, timed_out FROM usage_events WHERE request_id = $1 ORDER BY attempt_index', [requestId]);
    return {
      charged: Number(settlement.charged_micros),
      entries: -entries.rows.reduce((sum, r) => sum + Number(r.amount_micros), 0),
      attempts: attempts.rows.map((r) => ({ model: r.model, status: r.status, results: r.results, charged: Number(r.charged_micros), timedOut: r.timed_out })),
    };
  }

  it('three models fanned out: one merged list without a page twice, results with several sources, every result inside the filters, cost_usd the sum of the attempts and the ledger', async () => {
    const { accountId, secret } = await fundedKey();
    const before = await balance(accountId);
    // The date filters, which all three honour; Exa ignores them here (the simulator's `unfiltered`): the merge applies them again.
    const filters = { published_after: '2024-06-01', published_before: '2025-06-30' };
    const response = await search(secret, { query: 'solar power storage sim:exa=unfiltered', models: THREE, strategy: 'fanout', max_results: 20, ...filters });
    expect(response.status).toBe(200);
    const body = response.body as FanoutBody;
    expect(body.strategy).toBe('fanout');
    expect(body.models).toEqual(THREE);
    expect(response.headers.get('x-svc-cache')).toBe('off');
    // No page twice, by a rule stricter than the platform's.
    const pages = body.results.map((r) => pageOf(r.url));
    expect(new Set(pages).size).toBe(pages.length);
    expect(body.results.length).toBeGreaterThan(0);
    expect(body.results.length).toBeLessThanOrEqual(20);
    expect(body.duplicates_removed).toBeGreaterThan(0);
    // Pages more than one provider returned (each spelling its URL its own way).
    const shared = body.results.filter((r) => r.sources.length > 1);
    expect(shared.length).toBeGreaterThan(0);
    for (const r of shared) expect(new Set(r.sources.map((s) => s.model)).size).toBe(r.sources.length);
    // Ordered by the fusion's score, every position 1.. in order.
    body.results.forEach((r, i) => {
      expect(r.position).toBe(i + 1);
      if (i > 0) expect(r.score).toBeLessThanOrEqual(body.results[i - 1]?.score ?? Number.POSITIVE_INFINITY);
      expect(r.score).toBeCloseTo(r.sources.reduce((sum, s) => sum + 1 / (60 + s.position), 0), 12);
    });
    // Every result inside the filters, whatever Exa returned (the simulator dates every result).
    for (const r of body.results) {
      const at = Date.parse(r.published_at ?? '');
      expect({ url: r.url, inRange: at >= filterInstantMs('2024-06-01', 'start') && at <= filterInstantMs('2025-06-30', 'end') }).toEqual({ url: r.url, inRange: true });
    }
    const exa = body.attempts[0];
    expect(exa).toEqual(expect.objectContaining({ model: 'exa/fast', status: 'success', results: 20 }));
    // Exa was charged for the 20 results it returned, though the filters left fewer of them.
    expect(body.results.filter((r) => r.sources.some((s) => s.model === 'exa/fast')).length).toBeLessThan(20);
    // Money: each model its price for what it returned; cost_usd their sum; the balance and the ledger the same.
    const charges = body.attempts.map((a) => micros(a.cost_usd));
    expect(charges).toEqual([costMicros(EXA, 20), costMicros(BRAVE, body.attempts[1]?.results ?? -1), costMicros(TAVILY, body.attempts[2]?.results ?? -1)]);
    const total = charges.reduce((a, b) => a + b, 0);
    expect(micros(body.cost_usd)).toBe(total);
    expect(before - (await balance(accountId))).toBe(total);
    expect(await suite.redis.get(redisKeys.accountReserved(accountId))).toBe('0');
    const ledger = await ledgerOf(body.request_id);
    expect(ledger.charged).toBe(total);
    expect(ledger.entries).toBe(total);
    expect(ledger.attempts.map((a) => [a.model, a.status, a.charged])).toEqual(THREE.map((id, i) => [id, 'success', charges[i]]));
  });

  it('the domain filters are applied again to the merged list too: nothing outside them, whatever a provider returned', async () => {
    const { secret } = await fundedKey();
    const filters = { include_domains: ['example.org', 'example.com'], exclude_domains: ['docs.example.org'] };
    const response = await search(secret, { query: 'heat pumps sim:exa=unfiltered', models: ['exa/fast', 'tavily/basic', 'tavily/advanced'], strategy: 'fanout', max_results: 20, ...filters });
    expect(response.status).toBe(200);
    const body = response.body as FanoutBody;
    expect(body.models).toEqual(['exa/fast', 'tavily/basic', 'tavily/advanced']);
    expect(body.results.some((r) => r.sources.length > 1)).toBe(true);
    for (const r of body.results) {
      const host = new URL(r.url).hostname.toLowerCase();
      const inside = ['example.org', 'example.com'].some((d) => hostnameMatches(host, d)) && !hostnameMatches(host, 'docs.example.org');
      expect({ url: r.url, inside }).toEqual({ url: r.url, inside: true });
    }
    expect(body.results.filter((r) => r.sources.some((s) => s.model === 'exa/fast')).length).toBeLessThan(body.attempts[0]?.results ?? 0);
  });

  it('one failing model is refunded and the other two merged', async () => {
    const { accountId, secret } = await fundedKey();
    const before = await balance(accountId);
    const response = await search(secret, { query: 'wind turbines sim:brave=error500', models: THREE, strategy: 'fanout' });
    expect(response.status).toBe(200);
    const body = response.body as FanoutBody;
    expect(body.models).toEqual(['exa/fast', 'tavily/basic']);
    expect(body.attempts[1]).toEqual({ model: 'brave/web', source: 'platform', status: 'error', cost_usd: 0, error: 'provider returned 500' });
    for (const r of body.results) for (const s of r.sources) expect(s.model).not.toBe('brave/web');
    expect(body.results.some((r) => r.sources.length === 2)).toBe(true);
    const total = costMicros(EXA, body.attempts[0]?.results ?? -1) + costMicros(TAVILY, body.attempts[2]?.results ?? -1);
    expect(micros(body.cost_usd)).toBe(total);
    expect(before - (await balance(accountId))).toBe(total);
    const ledger = await ledgerOf(body.request_id);
    expect(ledger.attempts.map((a) => [a.model, a.status, a.charged])).toEqual([['exa/fast', 'success', costMicros(EXA, 10)], ['brave/web', 'error', 0], ['tavily/basic', 'success', costMicros(TAVILY, 10)]]);
    expect([ledger.charged, ledger.entries]).toEqual([total, total]);
  });

  it('a model still running at fanout_wait_ms is cancelled: its attempt a timeout keeping its base price, the others merged', async () => {
    const { accountId, secret } = await fundedKey();
    const before = await balance(accountId);
    const response = await search(secret, { query: 'tidal energy sim:tavily=slow5000', models: THREE, strategy: 'fanout', fanout_wait_ms: 800 });
    expect(response.status).toBe(200);
    const body = response.body as FanoutBody;
    expect(body.models).toEqual(['exa/fast', 'brave/web']);
    expect(body.attempts[2]).toEqual({ model: 'tavily/basic', source: 'platform', status: 'error', cost_usd: TAVILY.baseMicros / 1e6, error: expect.stringMatching(/^no answer within fanout_wait_ms \(\d+ ms\): cancelled$/) });
    const total = costMicros(EXA, 10) + costMicros(BRAVE, 10) + TAVILY.baseMicros;
    expect(micros(body.cost_usd)).toBe(total);
    expect(before - (await balance(accountId))).toBe(total);
    const ledger = await ledgerOf(body.request_id);
    expect(ledger.attempts[2]).toEqual({ model: 'tavily/basic', status: 'error', results: 0, charged: TAVILY.baseMicros, timedOut: true });
    expect(ledger.charged).toBe(total);
  });

  it('max_cost_usd below two models\' price runs one, on a fan-out and on a fallback; never a charge above it', async () => {
    const { accountId, secret } = await fundedKey();
    const cap = maxCostMicros(EXA, 10) + maxCostMicros(BRAVE, 10) - 1_000;
    const before = await balance(accountId);
    const response = await search(secret, { query: 'geothermal heat', models: THREE, strategy: 'fanout', max_cost_usd: cap / 1e6 });
    expect(response.status).toBe(200);
    const body = response.body as FanoutBody;
    expect(body.models).toEqual(['exa/fast']);
    const left = (cap - maxCostMicros(EXA, 10)) / 1e6;
    expect(body.attempts.slice(1)).toEqual([
      { model: 'brave/web', source: 'platform', status: 'skipped', cost_usd: 0, error: `over max_cost_usd: needs up to ${maxCostMicros(BRAVE, 10) / 1e6} USD, ${left} USD of max_cost_usd left` },
      { model: 'tavily/basic', source: 'platform', status: 'skipped', cost_usd: 0, error: `over max_cost_usd: needs up to ${maxCostMicros(TAVILY, 10) / 1e6} USD, ${left} USD of max_cost_usd left` },
    ]);
    expect(micros(body.cost_usd)).toBeLessThanOrEqual(cap);
    expect(before - (await balance(accountId))).toBe(micros(body.cost_usd));
    const ledger = await ledgerOf(body.request_id);
    expect(ledger.charged).toBe(micros(body.cost_usd));
    // A fallback: the dearer first model is skipped for the cap, the next one answers.
    const deep = model('exa/deep');
    const fallback = await search(secret, { query: 'geothermal heat', models: ['exa/deep', 'brave/web'], max_cost_usd: (maxCostMicros(deep, 10) - 1) / 1e6 });
    expect(fallback.status).toBe(200);
    expect(fallback.body.model).toBe('brave/web');
    expect(fallback.body.attempts).toEqual([{ model: 'exa/deep', source: 'platform', status: 'skipped', error: expect.stringMatching(/^over max_cost_usd: needs up to 0\.015 USD/) }]);
    expect(fallback.body.cost_usd).toBe(costMicros(BRAVE, 10) / 1e6);
  });

  it('max_cost_usd below every model\'s price: 402 max_cost_exceeded and nothing charged (search, fan-out and extract)', async () => {
    const { accountId, secret } = await fundedKey();
    const before = await balance(accountId);
    const cap = maxCostMicros(BRAVE, 10) - 1;
    for (const body of [
      { query: 'too dear', models: THREE, strategy: 'fanout', max_cost_usd: cap / 1e6 },
      { query: 'too dear', models: THREE, max_cost_usd: cap / 1e6 },
    ]) {
      const refused = await search(secret, body);
      expect(refused.status).toBe(402);
      expect(refused.body.error).toEqual(expect.objectContaining({
        code: 'max_cost_exceeded', needed_usd: maxCostMicros(BRAVE, 10) / 1e6,
        attempts: THREE.map((id) => ({ model: id, source: 'platform', status: 'skipped', error: expect.stringMatching(/^over max_cost_usd: needs up to/) })),
      }));
    }
    const contents = findExtractModel('exa/contents');
    if (contents === undefined) throw new Error('no exa/contents');
    const extract = await call('POST', `${suite.gw}/v1/extract`, { body: { urls: ['https://example.org/a', 'https://example.org/b'], model: 'exa/contents', max_cost_usd: (extractCostMicros(contents, 2) - 1) / 1e6 }, headers: bearer(secret) });
    expect([extract.status, extract.body.error.code, extract.body.error.needed_usd]).toEqual([402, 'max_cost_exceeded', extractCostMicros(contents, 2) / 1e6]);
    expect(await balance(accountId)).toBe(before);
    expect(Number((await suite.redis.get(redisKeys.accountReserved(accountId))) ?? '0')).toBe(0);
    expect(await suite.redis.zcard(redisKeys.accountInFlight(accountId))).toBe(0);
  });

  it('the cache keeps each model\'s answer: a repeated fan-out is served per model from it (the merge recomputed), and a fallback search of one of them hits its entry', async () => {
    const { accountId, secret } = await fundedKey();
    const query = `cached fanout ${Date.now()}`;
    const first = await search(secret, { query, models: THREE, strategy: 'fanout' }, 1);
    expect(first.status).toBe(200);
    expect((first.body as FanoutBody).attempts.map((a) => a.cache?.status)).toEqual(['miss', 'miss', 'miss']);
    expect(first.headers.get('x-svc-cache')).toBe('miss');
    const before = await balance(accountId);
    const again = await search(secret, { query, models: THREE, strategy: 'fanout' }, 1);
    const body = again.body as FanoutBody;
    expect(body.attempts.map((a) => a.cache?.status)).toEqual(['hit', 'hit', 'hit']);
    expect(again.headers.get('x-svc-cache')).toBe('hit');
    expect(body.results).toEqual((first.body as FanoutBody).results);
    const cacheTotal = [EXA, BRAVE, TAVILY].reduce((sum, m) => sum + cachePriceMicros(m, 10), 0);
    expect(micros(body.cost_usd)).toBe(cacheTotal);
    expect(before - (await balance(accountId))).toBe(cacheTotal);
    const single = await search(secret, { query, model: 'brave/web' }, 1);
    expect([single.body.model, single.body.cache.status]).toEqual(['brave/web', 'hit']);
  });

  it('MCP web_search fans out as the HTTP route does (its answer checked against the tool\'s output schema by the client), and the SDK types both answers and the cap\'s error', async () => {
    const { accountId, secret } = await fundedKey();
    const transport = new StreamableHTTPClientTransport(new URL(`${suite.gw}/mcp`), { requestInit: { headers: bearer(secret) } });
    const client = new McpClient({ name: 'e2e-fanout', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    const args = { query: 'ocean currents', models: THREE, strategy: 'fanout', max_results: 8 };
    const before = await balance(accountId);
    const http = await search(secret, args);
    const afterHttp = await balance(accountId);
    const tool = (await client.callTool({ name: 'web_search', arguments: args })) as CallToolResult;
    expect(tool.isError).toBeFalsy();
    const structured = tool.structuredContent as unknown as FanoutBody;
    expect(structured.results.map((r) => [r.url, r.sources])).toEqual((http.body as FanoutBody).results.map((r) => [r.url, r.sources]));
    expect(structured.cost_usd).toBe(http.body.cost_usd);
    expect(before - afterHttp).toBe(afterHttp - (await balance(accountId)));
    const text = tool.content[0]?.type === 'text' ? tool.content[0].text : '';
    expect(text).toContain('merged from exa/fast, brave/web, tavily/basic');
    expect(text).toMatch(/from \w+\/\w+ #\d+, \w+\/\w+ #\d+/);
    const refused = (await client.callTool({ name: 'web_search', arguments: { ...args, max_cost_usd: 0.000001 } })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(refused.content[0]?.type === 'text' ? refused.content[0].text : '').toContain('Error max_cost_exceeded');

    const sdk = new SearchGateway({ baseUrl: suite.gw, apiKey: secret, maxRetries: 0 });
    const merged = await sdk.search({ query: 'ocean currents', models: THREE, strategy: 'fanout', fanout_wait_ms: 5_000 });
    expect(merged.models).toEqual(THREE);
    expect(merged.results[0]?.sources.length).toBeGreaterThan(0);
    const plain = await sdk.search({ query: 'ocean currents', model: 'exa/fast' });
    expect(plain.model).toBe('exa/fast');
    const error = await sdk.search({ query: 'ocean currents', models: THREE, strategy: 'fanout', max_cost_usd: 0.000001 }).catch((e: unknown) => e);
    expect(SearchGatewayError.is(error)).toBe(true);
    if (!SearchGatewayError.is(error)) throw new Error('no SearchGatewayError');
    expect([error.status, error.code, error.neededUsd, error.attempts?.length]).toEqual([402, 'max_cost_exceeded', maxCostMicros(BRAVE, 10) / 1e6, 3]);
  });

  it('a fan-out\'s body is checked: 2 to 5 models, fanout_wait_ms only with it, max_cost_usd in whole micro-USD', async () => {
    const { secret } = await fundedKey();
    const cases: [Record<string, unknown>, string][] = [
      [{ query: 'x', model: 'exa/fast', strategy: 'fanout' }, 'strategy "fanout" takes 2 to 5 models (model and models together, each once)'],
      [{ query: 'x', models: ['exa/fast', 'exa/fast'], strategy: 'fanout' }, 'strategy "fanout" takes 2 to 5 models (model and models together, each once)'],
      [{ query: 'x', models: ['exa/fast', 'exa/deep', 'exa/auto', 'brave/web', 'brave/news', 'tavily/basic'], strategy: 'fanout' }, 'strategy "fanout" takes 2 to 5 models (model and models together, each once)'],
      [{ query: 'x', models: THREE, fanout_wait_ms: 500 }, 'fanout_wait_ms needs strategy "fanout"'],
      [{ query: 'x', models: THREE, strategy: 'fanout', fanout_wait_ms: 10 }, 'body field fanout_wait_ms must be >= 100'],
      [{ query: 'x', models: THREE, strategy: 'sideways' }, 'body field strategy must be equal to one of the allowed values'],
      [{ query: 'x', models: THREE, max_cost_usd: 0.0000001 }, 'max_cost_usd must be a USD amount with at most 6 decimals'],
      [{ query: 'x', models: THREE, max_cost_usd: 0 }, 'body field max_cost_usd must be > 0'],
      [{ query: 'x', models: THREE, max_cost_usd: '0.5' }, 'body field max_cost_usd must be number'],
    ];
    for (const [body, message] of cases) {
      const response = await search(secret, body);
      expect({ body, status: response.status, code: response.body.error?.code, message: response.body.error?.message }).toEqual({ body, status: 400, code: 'invalid_request', message });
    }
  });
});
