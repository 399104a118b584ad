import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { extractCostMicros, findExtractModel, LIMITS, redisKeys } from '@svc/contracts';
import type { ExtractModelSpec } from '@svc/contracts';
import { bearer, call, grantCredits, newAccount, newApiKey, useStack, waitFor, SETTLING_STACK } from '@svc/test-kit';
import type { JsonResponse } from '@svc/test-kit';

/**
 * POST /v1/extract and page text on search results, end to end through HTTP (and MCP's
 * web_fetch): two gateway processes, billing with its ledger worker, account-admin and the
 * provider simulator, whose pages fail on purpose at one provider (`sim-fail-<provider>` in the
 * path) or at every one (`sim-fail-all`). Money is read where it lands: the spendable balance in
 * Redis, and the settlement, usage events and charge entries in billing's ledger.
 */
function model(id: string): ExtractModelSpec {
  const found = findExtractModel(id);
  if (found === undefined) throw new Error(`no extract model ${id}`);
  return found;
}

const EXA = model('exa/contents');
const TAVILY = model('tavily/extract');

describe('extract and page content, end to end', () => {
  const clients: McpClient[] = [];
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
  });
  // Gateway 2 runs with the result cache on (test stacks start with it off).
  const suite = useStack({ ...SETTLING_STACK, name: 'extract', redisDb: 9, gateways: [{}, {}, { env: { CACHE_ENABLED: 'true' } }] }, { db: true });

  async function fundedKey(usd = 1): Promise<{ accountId: string; managementKey: string; secret: string }> {
    const account = await newAccount(suite.gw, 'extract');
    await grantCredits(suite.stack, account.accountId, Math.round(usd * 1_000_000), { redis: suite.redis });
    const key = await newApiKey(suite.gw, account.managementKey);
    return { accountId: account.accountId, managementKey: account.managementKey, secret: key.secret };
  }

  const balance = async (accountId: string): Promise<number> => Number(await suite.redis.get(redisKeys.accountBalance(accountId)));
  const extract = (secret: string, body: Record<string, unknown>, gateway = 0): Promise<JsonResponse> =>
    call('POST', `${suite.gateway(gateway)}/v1/extract`, { body, headers: bearer(secret) });

  /** Waits until the ledger worker wrote the request's settlement, then reads what billing keeps of it. */
  async function ledgerOf(requestId: string): Promise<{ kind: string; charged: number; entries: { kind: string; amount: number; requestKind: string | null }[]; attempts: { model: string; status: string; results: number; charged: number; kind: string }[] }> {
    const settlement = await waitFor(`the settlement of ${requestId}`, async () => {
      const rows = await suite.db.query<{ request_kind: string; charged_micros: string }>('SELECT request_kind, charged_micros FROM settlements WHERE request_id = $1', [requestId]);
      return rows.rows[0];
    }, { timeoutMs: 20_000 });
    const entries = await suite.db.query<{ kind: string; amount_micros: string; request_kind: string | null }>(
      'SELECT kind, amount_micros, request_kind FROM ledger_entries WHERE request_id = $1 ORDER BY created_at', [requestId]);
    const attempts = await suite.db.query<{ model: string; status: string; results: number; charged_micros: string; request_kind: string }>(
      'SELECT model, status, results, charged_micros, request_kind FROM usage_events WHERE request_id = $1 ORDER BY attempt_index', [requestId]);
    return {
      kind: settlement.request_kind,
      charged: Number(settlement.charged_micros),
      entries: entries.rows.map((r) => ({ kind: r.kind, amount: Number(r.amount_micros), requestKind: r.request_kind })),
      attempts: attempts.rows.map((r) => ({ model: r.model, status: r.status, results: r.results, charged: Number(r.charged_micros), kind: r.request_kind })),
    };
  }

  it('three URLs, one failing at the first model only and one everywhere: two results, one from each model, one failed, charged exactly the two', async () => {
    const { accountId, secret } = await fundedKey();
    const before = await balance(accountId);
    const urls = ['https://docs.example.org/guide/setup', 'https://example.com/sim-fail-exa/article', 'https://example.net/sim-fail-all/gone'];
    const response = await extract(secret, { urls, models: ['exa/contents', 'tavily/extract'] });
    expect(response.status).toBe(200);
    const body = response.body;
    expect(body.results.map((r: { url: string; model: string; provider: string; source: string }) => [r.url, r.model, r.provider, r.source])).toEqual([
      [urls[0], 'exa/contents', 'exa', 'platform'],
      [urls[1], 'tavily/extract', 'tavily', 'platform'],
    ]);
    expect(body.results[0]).toEqual(expect.objectContaining({ title: expect.any(String), text: expect.any(String), truncated: false, cache: { status: 'off', age_s: 0 } }));
    expect(body.results[0].chars).toBe(body.results[0].text.length);
    expect(body.failed).toEqual([{ url: urls[2], error: 'page could not be fetched' }]);
    const exaCharge = extractCostMicros(EXA, 1);
    const tavilyCharge = extractCostMicros(TAVILY, 1);
    expect(body.attempts).toEqual([
      { model: 'exa/contents', source: 'platform', status: 'success', urls: 3, succeeded: 1, failed: 2, cost_usd: exaCharge / 1e6, error: '2 of 3 URLs could not be fetched' },
      { model: 'tavily/extract', source: 'platform', status: 'success', urls: 2, succeeded: 1, failed: 1, cost_usd: tavilyCharge / 1e6, error: '1 of 2 URLs could not be fetched' },
    ]);
    expect(body.cost_usd).toBe((exaCharge + tavilyCharge) / 1e6);
    expect(response.headers.get('server-timing')).toMatch(/^gateway;dur=[\d.]+, upstream;dur=[\d.]+$/);
    // The spendable balance moved by exactly the two URLs' prices; the ledger says the same, as an extract.
    expect(before - (await balance(accountId))).toBe(exaCharge + tavilyCharge);
    const ledger = await ledgerOf(body.request_id);
    expect(ledger).toEqual({
      kind: 'extract',
      charged: exaCharge + tavilyCharge,
      entries: [{ kind: 'search_charge', amount: -(exaCharge + tavilyCharge), requestKind: 'extract' }],
      attempts: [
        { model: 'exa/contents', status: 'success', results: 1, charged: exaCharge, kind: 'extract' },
        { model: 'tavily/extract', status: 'success', results: 1, charged: tavilyCharge, kind: 'extract' },
      ],
    });
  });

  it('every URL failing everywhere: 502 all_providers_failed and nothing charged', async () => {
    const { accountId, secret } = await fundedKey();
    const before = await balance(accountId);
    const response = await extract(secret, { urls: ['https://example.com/sim-fail-all/a', 'https://example.org/sim-fail-all/b'], models: ['exa/contents', 'tavily/extract'] });
    expect(response.status).toBe(502);
    expect(response.body.error).toEqual(expect.objectContaining({
      code: 'all_providers_failed',
      attempts: [
        { model: 'exa/contents', source: 'platform', status: 'error', error: '2 of 2 URLs could not be fetched' },
        { model: 'tavily/extract', source: 'platform', status: 'error', error: '2 of 2 URLs could not be fetched' },
      ],
    }));
    expect(await balance(accountId)).toBe(before);
    const ledger = await ledgerOf(response.body.error.request_id);
    expect({ charged: ledger.charged, entries: ledger.entries }).toEqual({ charged: 0, entries: [] });
    expect(await suite.redis.get(redisKeys.accountReserved(accountId))).toBe('0');
  });

  it('max_chars_per_url and max_total_chars cut and flag the text', async () => {
    const { secret } = await fundedKey();
    const long = 'https://example.com/sim-chars-5000/long';
    const cut = await extract(secret, { urls: [long], model: 'tavily/extract', max_chars_per_url: 1_000 });
    expect(cut.status).toBe(200);
    expect(cut.body.results[0]).toEqual(expect.objectContaining({ chars: 1_000, truncated: true }));
    expect(cut.body.results[0].text).toHaveLength(1_000);
    expect(cut.body.truncated).toBe(true);
    const whole = await extract(secret, { urls: ['https://example.com/sim-chars-600/short'], model: 'tavily/extract' });
    expect(whole.body.results[0]).toEqual(expect.objectContaining({ chars: 600, truncated: false }));
    expect(whole.body.truncated).toBe(false);
    // A budget on the whole answer: the first page whole, the second cut, the third dropped (still fetched and charged).
    const urls = ['https://example.com/sim-chars-700/one', 'https://example.com/sim-chars-700/two', 'https://example.com/sim-chars-700/three'];
    const budget = await extract(secret, { urls, model: 'tavily/extract', max_total_chars: 1_000 });
    expect(budget.status).toBe(200);
    const results = budget.body.results as { url: string; title: string; chars: number; truncated: boolean }[];
    expect(results.map((r) => r.url)).toEqual(urls.slice(0, 2));
    expect(results[0]).toEqual(expect.objectContaining({ chars: 700, truncated: false }));
    expect(results[1]?.truncated).toBe(true);
    expect(results.reduce((sum, r) => sum + r.chars + r.title.length, 0)).toBeLessThanOrEqual(1_000);
    expect(budget.body.truncated).toBe(true);
    expect(budget.body.cost_usd).toBe(extractCostMicros(TAVILY, 3) / 1e6);
  });

  it('an option a model cannot honour skips it (never dropped); every model skipped is 400 unsupported_option, nothing charged', async () => {
    const { accountId, secret } = await fundedKey();
    const skipped = await extract(secret, { urls: ['https://example.com/fresh'], models: ['tavily/extract', 'exa/contents'], max_age_s: 0 });
    expect(skipped.status).toBe(200);
    expect(skipped.body.attempts[0]).toEqual({ model: 'tavily/extract', status: 'skipped', urls: 0, succeeded: 0, failed: 0, cost_usd: 0, error: 'unsupported option: max_age_s' });
    expect(skipped.body.results[0].model).toBe('exa/contents');
    const before = await balance(accountId);
    const refused = await extract(secret, { urls: ['https://example.com/md'], model: 'exa/contents', format: 'markdown' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toEqual(expect.objectContaining({ code: 'unsupported_option', message: expect.stringContaining('exa/contents (unsupported option: format markdown)') }));
    expect(await balance(accountId)).toBe(before);
    const unknown = await extract(secret, { urls: ['https://example.com/x'], model: 'exa/fast' });
    expect([unknown.status, unknown.body.error.code]).toEqual([400, 'unknown_model']);
  });

  it('the cache serves a page per URL and model at the cache price; another format, or refresh, asks the provider', async () => {
    const { accountId, secret } = await fundedKey();
    const url = `https://example.com/cached/${Date.now()}`;
    const first = await extract(secret, { urls: [url, `${url}/two`], model: 'tavily/extract' }, 2);
    expect(first.status).toBe(200);
    expect(first.body.cache).toEqual({ status: 'miss', age_s: 0 });
    expect(first.body.results.map((r: { cache: { status: string } }) => r.cache.status)).toEqual(['miss', 'miss']);
    const before = await balance(accountId);
    // The same URL differently spelled (host case, a fragment): one normal form, one entry.
    const hit = await extract(secret, { urls: [url.replace('example.com', 'EXAMPLE.com'), `${url}/two#section`], model: 'tavily/extract' }, 2);
    expect(hit.headers.get('x-svc-cache')).toBe('hit');
    expect(hit.body.results.map((r: { text: string }) => r.text)).toEqual(first.body.results.map((r: { text: string }) => r.text));
    const cachePrice = Math.floor((TAVILY.perUrlMicros * 10 + 50) / 100);
    expect(hit.body.cost_usd).toBe((2 * cachePrice) / 1e6);
    expect(before - (await balance(accountId))).toBe(2 * cachePrice);
    const markdown = await extract(secret, { urls: [url], model: 'tavily/extract', format: 'markdown' }, 2);
    expect(markdown.body.cache.status).toBe('miss');
    const refreshed = await extract(secret, { urls: [url], model: 'tavily/extract', cache: 'refresh' }, 2);
    expect(refreshed.body.cache.status).toBe('miss');
    // One URL stored, one new: the stored one at the cache price, the other from the provider, never dearer than both from it.
    const mixed = await extract(secret, { urls: [url, `${url}/three`], model: 'tavily/extract' }, 2);
    expect(mixed.body.results.map((r: { cache: { status: string } }) => r.cache.status)).toEqual(['hit', 'miss']);
    expect(mixed.body.cost_usd).toBe(Math.min(extractCostMicros(TAVILY, 2), cachePrice + extractCostMicros(TAVILY, 1)) / 1e6);
    const ledger = await ledgerOf(hit.body.request_id);
    expect(ledger.entries).toEqual([{ kind: 'search_charge', amount: -2 * cachePrice, requestKind: 'extract' }]);
  });

  it('contents "text" on a search returns text per result, and is refused where no model can', async () => {
    const { accountId, secret } = await fundedKey();
    const searched = await call('POST', `${suite.gw}/v1/search`, { body: { query: 'page text', model: 'exa/fast', max_results: 3, contents: 'text', max_chars_per_result: 800 }, headers: bearer(secret) });
    expect(searched.status).toBe(200);
    expect(searched.body.results).toHaveLength(3);
    for (const result of searched.body.results as { text: string; truncated: boolean }[]) {
      expect(result.text.length).toBeGreaterThan(0);
      expect(result.text.length).toBeLessThanOrEqual(800);
      expect(typeof result.truncated).toBe('boolean');
    }
    expect(searched.body.cost_usd).toBe(0.009);
    const plain = await call('POST', `${suite.gw}/v1/search`, { body: { query: 'page text', model: 'exa/fast', max_results: 3 }, headers: bearer(secret) });
    expect(plain.body.results[0]).not.toHaveProperty('text');
    expect(plain.body).not.toHaveProperty('truncated');
    const before = await balance(accountId);
    const refused = await call('POST', `${suite.gw}/v1/search`, { body: { query: 'page text', model: 'brave/web', contents: 'text' }, headers: bearer(secret) });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toEqual(expect.objectContaining({
      code: 'unsupported_option',
      message: 'no requested model can honour what was sent: brave/web (unsupported contents: text)',
      attempts: [{ model: 'brave/web', status: 'skipped', error: 'unsupported contents: text' }],
    }));
    expect(await balance(accountId)).toBe(before);
    const fallback = await call('POST', `${suite.gw}/v1/search`, { body: { query: 'page text', models: ['brave/web', 'tavily/basic'], contents: 'text', max_results: 2 }, headers: bearer(secret) });
    expect(fallback.status).toBe(200);
    expect(fallback.body.model).toBe('tavily/basic');
    expect(fallback.body.attempts).toEqual([{ model: 'brave/web', status: 'skipped', error: 'unsupported contents: text' }]);
    const budgeted = await call('POST', `${suite.gw}/v1/search`, { body: { query: 'page text', model: 'exa/fast', max_results: 5, contents: 'text', max_total_chars: 1_500 }, headers: bearer(secret) });
    expect(budgeted.body.truncated).toBe(true);
    const total = (budgeted.body.results as { title: string; snippet: string; text: string }[]).reduce((sum, r) => sum + r.title.length + r.snippet.length + r.text.length, 0);
    expect(total).toBeLessThanOrEqual(1_500);
  });

  it('web_fetch over MCP charges the same as the HTTP call', async () => {
    const { accountId, secret } = await fundedKey();
    const transport = new StreamableHTTPClientTransport(new URL(`${suite.gateway(1)}/mcp`), { requestInit: { headers: bearer(secret) } });
    // Both gateways run without the cache: both calls fetch from the providers.
    const client = new McpClient({ name: 'e2e-extract', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    const urls = ['https://example.org/mcp/page', 'https://example.com/sim-fail-exa/mcp'];
    const arguments_ = { urls, models: ['exa/contents', 'tavily/extract'] };
    const before = await balance(accountId);
    const http = await extract(secret, arguments_);
    const afterHttp = await balance(accountId);
    const tool = (await client.callTool({ name: 'web_fetch', arguments: arguments_ })) as CallToolResult;
    expect(tool.isError).toBeFalsy();
    const structured = tool.structuredContent as { cost_usd: number; results: { url: string; model: string }[]; request_id: string };
    expect(structured.cost_usd).toBe(http.body.cost_usd);
    expect(structured.results.map((r) => [r.url, r.model])).toEqual(http.body.results.map((r: { url: string; model: string }) => [r.url, r.model]));
    expect(before - afterHttp).toBe(afterHttp - (await balance(accountId)));
    const [viaHttp, viaMcp] = await Promise.all([ledgerOf(http.body.request_id), ledgerOf(structured.request_id)]);
    expect(viaMcp).toEqual(viaHttp);
    const text = tool.content[0]?.type === 'text' ? tool.content[0].text : '';
    expect(text).toContain('## ');
  });

  it('the MCP tools\' default budget keeps a tool result under 25,000 tokens of output (at 2 characters a token or more), whatever the pages', async () => {
    const { secret } = await fundedKey(5);
    const transport = new StreamableHTTPClientTransport(new URL(`${suite.gw}/mcp`), { requestInit: { headers: bearer(secret) } });
    const client = new McpClient({ name: 'e2e-budget', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    const urls = Array.from({ length: LIMITS.extractUrls.max }, (_, i) => `https://example.com/sim-chars-100000/budget-${i}`);
    const fetched = (await client.callTool({ name: 'web_fetch', arguments: { urls, model: 'exa/contents', max_chars_per_url: LIMITS.extractCharsPerUrl.max } })) as CallToolResult;
    expect(fetched.isError).toBeFalsy();
    const fetchedAnswer = fetched.structuredContent as { truncated: boolean; results: { title: string; chars: number }[]; cost_usd: number };
    expect(fetchedAnswer.truncated).toBe(true);
    expect(fetchedAnswer.results.reduce((sum, r) => sum + r.chars + r.title.length, 0)).toBeLessThanOrEqual(LIMITS.mcpTotalChars.default);
    // Every page was fetched and is charged: the budget limits the output, not the work.
    expect(fetchedAnswer.cost_usd).toBe(extractCostMicros(EXA, urls.length) / 1e6);
    expect(JSON.stringify({ content: fetched.content, structuredContent: fetched.structuredContent }).length).toBeLessThan(50_000);
    const searched = (await client.callTool({ name: 'web_search', arguments: { query: 'budget', model: 'exa/deep', max_results: 100, contents: 'text', max_chars_per_result: 20_000 } })) as CallToolResult;
    expect(searched.isError).toBeFalsy();
    expect((searched.structuredContent as { truncated?: boolean }).truncated).toBe(true);
    expect(JSON.stringify({ content: searched.content, structuredContent: searched.structuredContent }).length).toBeLessThan(50_000);
    // A call that sends its own budget gets it.
    const own = (await client.callTool({ name: 'web_fetch', arguments: { urls: urls.slice(0, 2), model: 'exa/contents', max_chars_per_url: 30_000, max_total_chars: 60_000 } })) as CallToolResult;
    expect((own.structuredContent as { results: unknown[] }).results).toHaveLength(2);
  });

  it('GET /v1/models lists every model with its kind; extract models with per_url_usd, url_block and what they honour', async () => {
    const models = await call('GET', `${suite.gw}/v1/models`);
    const byId = new Map((models.body.data as { id: string }[]).map((m) => [m.id, m]));
    expect(byId.get('exa/fast')).toEqual(expect.objectContaining({ kind: 'search', supported_contents: ['none', 'text', 'highlights'] }));
    expect(byId.get('brave/web')).toEqual(expect.objectContaining({ kind: 'search', supported_contents: ['none'] }));
    expect(byId.get('exa/contents')).toEqual(expect.objectContaining({
      kind: 'extract', max_results: LIMITS.extractUrls.max, supported_filters: [], supported_formats: ['text'], supported_options: ['max_age_s', 'query'],
      pricing: expect.objectContaining({ per_url_usd: 0.00125, url_block: 1, base_usd: 0 }),
    }));
    expect(byId.get('tavily/extract-advanced')).toEqual(expect.objectContaining({ kind: 'extract', pricing: expect.objectContaining({ per_url_usd: 0.004, url_block: 5 }) }));
    const pricing = await call('GET', `${suite.gw}/v1/credits/pricing`);
    expect((pricing.body.models as { id: string; kind: string }[]).find((m) => m.id === 'tavily/extract')).toEqual(expect.objectContaining({ kind: 'extract', per_url_usd: 0.002, url_block: 5 }));
  });

  it('GET /v1/usage groups by kind: the searches and the extracts, each with its cost', async () => {
    const { secret, managementKey } = await fundedKey();
    const searched = await call('POST', `${suite.gw}/v1/search`, { body: { query: 'usage by kind', model: 'exa/fast' }, headers: bearer(secret) });
    const extracted = await extract(secret, { urls: ['https://example.com/usage/kind'], model: 'exa/contents' });
    await Promise.all([ledgerOf(searched.body.request_id), ledgerOf(extracted.body.request_id)]);
    const usage = await call('GET', `${suite.gw}/v1/usage?group_by=kind`, { headers: bearer(managementKey) });
    expect(usage.status).toBe(200);
    expect(usage.body.data).toEqual([
      expect.objectContaining({ kind: 'extract', searches: 1, cost_usd: extracted.body.cost_usd }),
      expect.objectContaining({ kind: 'search', searches: 1, cost_usd: searched.body.cost_usd }),
    ]);
    expect(usage.body.total.cost_usd).toBe(Math.round((searched.body.cost_usd + extracted.body.cost_usd) * 1e6) / 1e6);
  });

  it('an extract takes the search route\'s money rules: 402 when the balance covers no model, an Idempotency-Key repeat charged once', async () => {
    const poor = await fundedKey(0.001);
    const refused = await extract(poor.secret, { urls: ['https://example.com/a', 'https://example.com/b'], model: 'tavily/extract' });
    expect(refused.status).toBe(402);
    expect(refused.body.error).toEqual(expect.objectContaining({ code: 'insufficient_credits', needed_usd: extractCostMicros(TAVILY, 2) / 1e6 }));
    const { accountId, secret } = await fundedKey();
    const before = await balance(accountId);
    const headers = { ...bearer(secret), 'idempotency-key': `extract-${Date.now()}` };
    const body = { urls: ['https://example.com/idem/page'], model: 'exa/contents' };
    const [a, b] = await Promise.all([
      call('POST', `${suite.gateway(0)}/v1/extract`, { body, headers }),
      call('POST', `${suite.gateway(1)}/v1/extract`, { body, headers }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body).toEqual(a.body);
    expect(before - (await balance(accountId))).toBe(extractCostMicros(EXA, 1));
  });
});
