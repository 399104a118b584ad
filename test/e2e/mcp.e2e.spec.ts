import { createServer, request as httpRequest } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { redisKeys } from '@svc/contracts';
import { bearer, call, newAccount, newApiKey, waitFor, grantCredits, useStack, SETTLING_STACK } from '@svc/test-kit';

/**
 * /mcp with the official MCP client over HTTP, against two gateway processes, billing with
 * its ledger worker, account-admin and the provider simulator. Gateway 2 runs with a key
 * rate of 1/s and a burst of 1, for the rate_limited case.
 */
describe('the remote MCP endpoint (/mcp) through the official MCP client', () => {
  const clients: McpClient[] = [];
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
  });
  const suite = useStack({
    ...SETTLING_STACK,
    name: 'mcp',
    redisDb: 12,
    gateways: [{}, {}, { env: { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '1' } }],
  }, { db: true });
  const gw = (index: number): string => suite.gateway(index);

  async function connect(url: string, secret: string | null): Promise<McpClient> {
    const headers: Record<string, string> = secret === null ? {} : bearer(secret);
    const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } });
    const client = new McpClient({ name: 'e2e', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  async function fundedKey(usd: number): Promise<{ accountId: string; managementKey: string; secret: string }> {
    const account = await newAccount(gw(0), 'mcp');
    await grantCredits(suite.stack, account.accountId, Math.round(usd * 1_000_000), { redis: suite.redis });
    const key = await newApiKey(gw(0), account.managementKey);
    return { accountId: account.accountId, managementKey: account.managementKey, secret: key.secret };
  }

  const balanceMicros = async (accountId: string): Promise<number> => Number(await suite.redis.get(redisKeys.accountBalance(accountId)));

  const texts = (result: CallToolResult): string[] => result.content.map((block) => (block.type === 'text' ? block.text : ''));

  /** The platform error body of a tool error (its second text block). */
  function toolError(result: CallToolResult): { code: string; message: string; request_id: string; needed_usd?: number; attempts?: unknown[]; retry_after_seconds?: number } {
    expect(result.isError).toBe(true);
    return (JSON.parse(texts(result)[1] ?? '') as { error: ReturnType<typeof toolError> }).error;
  }

  const search = async (client: McpClient, args: Record<string, unknown>): Promise<CallToolResult> =>
    (await client.callTool({ name: 'web_search', arguments: args })) as CallToolResult;

  it('lists web_search, web_fetch, list_models and get_credits with their schemas', async () => {
    const { secret } = await fundedKey(1);
    const client = await connect(gw(0), secret);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['deep_research', 'get_credits', 'get_research', 'list_models', 'web_fetch', 'web_search']);
    const webSearch = tools.find((t) => t.name === 'web_search');
    expect(webSearch?.inputSchema).toMatchObject({ type: 'object', required: ['query'], additionalProperties: false });
    expect(Object.keys(webSearch?.inputSchema.properties ?? {}).sort()).toEqual([
      'cache', 'cache_max_age_s', 'contents', 'country', 'exclude_domains', 'fanout_wait_ms', 'idempotency_key', 'include_domains', 'language', 'max_chars_per_result',
      'max_cost_usd', 'max_results', 'max_total_chars', 'model', 'models', 'published_after', 'published_before', 'query', 'safesearch', 'strategy',
    ]);
    const webFetch = tools.find((t) => t.name === 'web_fetch');
    expect(webFetch?.inputSchema).toMatchObject({ type: 'object', required: ['urls'], additionalProperties: false });
    expect(webFetch?.outputSchema?.required).toEqual(expect.arrayContaining(['results', 'failed', 'attempts', 'cost_usd', 'truncated']));
    // A search answers either a fallback's body or a fan-out's (strategy "fanout"): an object's schema, one of the two.
    const answers = (webSearch?.outputSchema as { type?: string; oneOf?: { required?: string[] }[] } | undefined);
    expect(answers?.type).toBe('object');
    expect(answers?.oneOf?.[0]?.required).toEqual(expect.arrayContaining(['results', 'model', 'cost_usd', 'attempts', 'request_id']));
    expect(answers?.oneOf?.[1]?.required).toEqual(expect.arrayContaining(['results', 'models', 'strategy', 'cost_usd', 'attempts', 'request_id']));
    const models = (await client.callTool({ name: 'list_models', arguments: {} })) as CallToolResult;
    const http = await call('GET', `${gw(0)}/v1/models`);
    expect((models.structuredContent as { data: unknown }).data).toEqual(http.body.data);
    expect(texts(models)[0]).toContain('exa/fast');
  });

  it('web_search takes the filters: a model that cannot honour one is skipped, and none that can is the unsupported_filter tool error', async () => {
    const { accountId, secret } = await fundedKey(1);
    const client = await connect(gw(0), secret);
    const answered = await search(client, { query: 'mcp filters', models: ['brave/web', 'exa/fast'], include_domains: ['example.org'] });
    expect(answered.isError).toBeFalsy();
    expect((answered.structuredContent as { attempts: unknown[] }).attempts).toEqual([{ model: 'brave/web', status: 'skipped', error: 'unsupported filter: include_domains' }]);
    const before = await balanceMicros(accountId);
    const refused = await search(client, { query: 'mcp filters', model: 'brave/web', include_domains: ['example.org'] });
    expect(refused.isError).toBe(true);
    expect(texts(refused)[0]).toMatch(/^Error unsupported_filter: /);
    expect(JSON.parse(texts(refused)[1] ?? '{}').error).toMatchObject({ code: 'unsupported_filter', attempts: [{ model: 'brave/web', status: 'skipped', error: 'unsupported filter: include_domains' }] });
    expect(await balanceMicros(accountId)).toBe(before);
  });

  it('a web_search is answered and charged exactly like POST /v1/search with the same body: balance, ledger and usage', async () => {
    const { accountId, secret } = await fundedKey(1);
    const args = { query: 'mcp parity rust async', models: ['exa/fast', 'brave/web'], max_results: 3 };

    const before = await balanceMicros(accountId);
    const http = await call('POST', `${gw(0)}/v1/search`, { body: args, headers: bearer(secret) });
    expect(http.status).toBe(200);
    const afterHttp = await balanceMicros(accountId);

    const client = await connect(gw(1), secret);
    const result = await search(client, args);
    expect(result.isError).toBeFalsy();
    const answer = result.structuredContent as { request_id: string; model: string; results: unknown[]; cost_usd: number; attempts: unknown[] };
    const afterMcp = await balanceMicros(accountId);

    expect(afterMcp - afterHttp).toBe(afterHttp - before);
    expect(before - afterHttp).toBe(Math.round(http.body.cost_usd * 1_000_000));
    expect(answer.cost_usd).toBe(http.body.cost_usd);
    expect(answer.model).toBe(http.body.model);
    expect(answer.results).toEqual(http.body.results);
    expect(answer.attempts).toEqual(http.body.attempts);
    expect(answer.request_id).not.toBe(http.body.request_id);
    expect(texts(result)[0]).toContain(`${http.body.results.length} results from exa/fast`);
    expect(texts(result)[0]).toContain(http.body.results[0].url);

    // The durable side: one search_charge each, of the same amount, and the same usage rows.
    const ids = [String(http.body.request_id), answer.request_id];
    const charges = await waitFor('both settlements in the ledger', async () => {
      const rows = await suite.db.query<{ request_id: string; amount: string }>(
        "SELECT request_id, amount_micros AS amount FROM ledger_entries WHERE account_id = $1 AND kind = 'search_charge' AND request_id = ANY($2)", [accountId, ids]);
      return rows.rows.length === 2 ? rows.rows : undefined;
    }, { timeoutMs: 30_000 });
    expect(new Set(charges.map((row) => row.amount)).size).toBe(1);
    const usage = await suite.db.query<{ request_id: string; attempt_index: number; model: string; provider: string; source: string; status: string; reserved: string; charged: string; results: number }>(
      `SELECT request_id, attempt_index, model, provider, source, status, reserved_micros AS reserved, charged_micros AS charged, results
         FROM usage_events WHERE account_id = $1 AND request_id = ANY($2) ORDER BY attempt_index`, [accountId, ids]);
    const rowsOf = (id: string): unknown[] => usage.rows.filter((row) => row.request_id === id).map(({ request_id: _, ...rest }) => rest);
    expect(rowsOf(ids[0] ?? '')).toHaveLength(1);
    expect(rowsOf(ids[1] ?? '')).toEqual(rowsOf(ids[0] ?? ''));

    const credits = (await client.callTool({ name: 'get_credits', arguments: {} })) as CallToolResult;
    const httpCredits = await call('GET', `${gw(0)}/v1/credits`, { headers: bearer(secret) });
    expect(credits.structuredContent).toMatchObject({ balance_usd: httpCredits.body.balance_usd, reserved_usd: 0 });
    expect(credits.structuredContent).toMatchObject({ balance_usd: afterMcp / 1_000_000 });
  });

  it('a fallback answer lists the failed attempt; all_providers_failed is a tool error with every attempt, and charges nothing', async () => {
    const { accountId, secret } = await fundedKey(1);
    const client = await connect(gw(0), secret);
    const fallback = await search(client, { query: 'rust sim:exa=error500', models: ['exa/fast', 'brave/web'], max_results: 2 });
    expect(fallback.structuredContent).toMatchObject({ model: 'brave/web', cost_usd: 0.006, attempts: [{ model: 'exa/fast', status: 'error', error: 'provider returned 500' }] });
    expect(texts(fallback)[0]).toContain('exa/fast: error (provider returned 500)');

    const before = await balanceMicros(accountId);
    const failed = await search(client, { query: 'rust sim:*=error500', models: ['exa/fast', 'brave/web', 'tavily/basic'] });
    const error = toolError(failed);
    expect(error.code).toBe('all_providers_failed');
    expect(error.message).toBe('every attempted model failed or was unavailable');
    expect(error.attempts).toEqual(['exa/fast', 'brave/web', 'tavily/basic'].map((model) => ({ model, source: 'platform', status: 'error', error: 'provider returned 500' })));
    expect(texts(failed)[0]).toContain('Error all_providers_failed: every attempted model failed or was unavailable');
    expect(texts(failed)[0]).toContain('tavily/basic: error (provider returned 500)');
    expect(await balanceMicros(accountId)).toBe(before);
  });

  it('insufficient_credits (an account never funded) is a tool error with needed_usd', async () => {
    const account = await newAccount(gw(0), 'mcp-poor');
    const key = await newApiKey(gw(0), account.managementKey);
    const client = await connect(gw(1), key.secret);
    const result = await search(client, { query: 'rust', models: ['exa/fast', 'tavily/basic'], max_results: 50 });
    const error = toolError(result);
    expect(error).toMatchObject({ code: 'insufficient_credits', message: 'the credit balance cannot cover any of the requested models', needed_usd: 0.01 });
    expect(texts(result)[0]).toContain('Error insufficient_credits');
    expect(texts(result)[0]).toContain('needed_usd: 0.01');
  });

  it('rate_limited (key rate 1/s, burst 1) is a tool error with the wait, and the refused call charges nothing', async () => {
    const { accountId, secret } = await fundedKey(1);
    const client = await connect(gw(2), secret);
    const first = await search(client, { query: 'rate one', model: 'brave/web' });
    expect(first.isError).toBeFalsy();
    const afterFirst = await balanceMicros(accountId);
    const second = await search(client, { query: 'rate two', model: 'brave/web' });
    const error = toolError(second);
    expect(error.code).toBe('rate_limited');
    expect(error.message).toContain('limited to 1 requests per second');
    expect(error.retry_after_seconds).toBe(1);
    expect(texts(second)[0]).toContain('retry after 1 s');
    expect(await balanceMicros(accountId)).toBe(afterFirst);
  });

  it('arguments are checked by the rules of POST /v1/search, as tool errors', async () => {
    const { secret } = await fundedKey(1);
    const client = await connect(gw(0), secret);
    expect(toolError(await search(client, { query: 'rust', model: 'exa/fast', max_results: 101 }))).toMatchObject({ code: 'invalid_request', message: 'arguments field max_results must be <= 100' });
    expect(toolError(await search(client, { query: 'rust', model: 'exa/fast', region: 'us' }))).toMatchObject({ code: 'invalid_request', message: 'arguments has an unknown field "region"' });
    expect(toolError(await search(client, { query: 'rust', model: 'exa/neural' }))).toMatchObject({ code: 'unknown_model', message: 'unknown model "exa/neural"; see GET /v1/models' });
    expect(toolError(await search(client, { query: '   ', model: 'exa/fast' }))).toMatchObject({ code: 'invalid_request', message: 'query must not be empty' });
    expect(toolError(await search(client, { query: 'rust' }))).toMatchObject({ code: 'invalid_request', message: 'give a model or models' });
    expect(toolError((await client.callTool({ name: 'get_credits', arguments: { account: 'x' } })) as CallToolResult).code).toBe('invalid_request');
    await expect(client.callTool({ name: 'web_crawl', arguments: {} })).rejects.toThrow(/unknown tool "web_crawl"/);
    // web_fetch's arguments by the rules of POST /v1/extract.
    const fetch = async (args: Record<string, unknown>): Promise<CallToolResult> => (await client.callTool({ name: 'web_fetch', arguments: args })) as CallToolResult;
    expect(toolError(await fetch({ urls: [], model: 'exa/contents' }))).toMatchObject({ code: 'invalid_request', message: 'arguments field urls must NOT have fewer than 1 items' });
    expect(toolError(await fetch({ urls: ['ftp://example.com/x'], model: 'exa/contents' }))).toMatchObject({ code: 'invalid_request', message: 'urls.0 must be an http or https URL without a user or password, control characters or lone surrogates' });
    expect(toolError(await fetch({ urls: ['https://example.com/x'], model: 'exa/fast' }))).toMatchObject({ code: 'unknown_model' });
    expect(toolError(await fetch({ urls: ['https://example.com/x'], model: 'exa/contents', format: 'markdown' }))).toMatchObject({ code: 'unsupported_option' });
  });

  it('a management key is refused with 403 wrong_key_type, no key or a bad one with 401 invalid_api_key, in the platform\'s error shape', async () => {
    const account = await newAccount(gw(0), 'mcp-mgmt');
    const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
    const headers = { accept: 'application/json, text/event-stream' };
    const management = await call('POST', `${gw(0)}/mcp`, { body: initialize, headers: { ...headers, ...bearer(account.managementKey) } });
    expect(management.status).toBe(403);
    expect(management.body.error).toMatchObject({ code: 'wrong_key_type', message: 'this endpoint does not accept this kind of key' });
    const none = await call('POST', `${gw(0)}/mcp`, { body: initialize, headers });
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('invalid_api_key');
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    const unknown = await call('POST', `${gw(0)}/mcp`, { body: initialize, headers: { ...headers, ...bearer('svc-thisisnotakeythisisnotakey00') } });
    expect(unknown.status).toBe(401);
    expect(unknown.body.error.code).toBe('invalid_api_key');
    expect(unknown.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');

    // Other refusals before MCP, in the same shape.
    const key = await newApiKey(gw(0), account.managementKey);
    const get = await call('GET', `${gw(0)}/mcp`, { headers: { ...headers, ...bearer(key.secret) } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const notJson = await call('POST', `${gw(0)}/mcp`, { raw: '{"jsonrpc":', headers: { ...headers, ...bearer(key.secret) } });
    expect(notJson.status).toBe(400);
    expect(notJson.body.error).toMatchObject({ code: 'invalid_request', message: 'the body is not valid JSON' });
    const badSession = await call('POST', `${gw(0)}/mcp`, { body: initialize, headers: { ...headers, ...bearer(key.secret), 'mcp-session-id': 'x'.repeat(200) } });
    expect(badSession.status).toBe(400);
    expect(badSession.body.error).toMatchObject({ code: 'invalid_request', message: 'Mcp-Session-Id must be 1 to 128 visible ASCII characters' });

    // The same refusals as the official client sees them.
    const refused = await connect(gw(0), account.managementKey).then(() => null, (error: unknown) => error);
    expect(refused).toBeInstanceOf(StreamableHTTPError);
    expect((refused as StreamableHTTPError).code).toBe(403);
    const anonymous = await connect(gw(0), null).then(() => null, (error: unknown) => error);
    expect((anonymous as StreamableHTTPError).code).toBe(401);
  });

  it('a tool call sent again with the same session and JSON-RPC id is answered from the first and charged once; a new id runs anew', async () => {
    const { accountId, secret } = await fundedKey(1);
    const headers = { ...bearer(secret), accept: 'application/json, text/event-stream' };
    const init = await call('POST', `${gw(0)}/mcp`, {
      body: { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } },
      headers,
    });
    expect(init.status).toBe(200);
    const session = init.headers.get('mcp-session-id') ?? '';
    expect(session).toMatch(/^mcps_/);
    expect(init.headers.get('x-svc-request-id')).toMatch(/^req_/);
    const toolCall = (id: number): Promise<Awaited<ReturnType<typeof call>>> => call('POST', `${gw(id % 2)}/mcp`, {
      body: { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'web_search', arguments: { query: 'retried call', model: 'exa/fast', max_results: 1 } } },
      headers: { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
    });
    const before = await balanceMicros(accountId);
    const first = await toolCall(7);
    const again = await toolCall(7);
    expect(first.status).toBe(200);
    expect(again.body.result.structuredContent).toEqual(first.body.result.structuredContent);
    expect(before - (await balanceMicros(accountId))).toBe(9_000);
    const changed = await call('POST', `${gw(1)}/mcp`, {
      body: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'web_search', arguments: { query: 'retried call', model: 'exa/fast', max_results: 2 } } },
      headers: { ...headers, 'mcp-session-id': session },
    });
    expect(changed.body.result.isError).toBe(true);
    expect(JSON.parse(changed.body.result.content[1].text).error).toMatchObject({ code: 'invalid_request', message: 'this Idempotency-Key was used with a different request body' });
    const fresh = await toolCall(8);
    expect(fresh.body.result.structuredContent.request_id).not.toBe(first.body.result.structuredContent.request_id);
    expect(before - (await balanceMicros(accountId))).toBe(18_000);
    // Another client session reusing id 7 is a different tool call.
    const other = await call('POST', `${gw(1)}/mcp`, {
      body: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'web_search', arguments: { query: 'another session', model: 'exa/fast', max_results: 1 } } },
      headers: { ...headers, 'mcp-session-id': 'mcps_another-client-session' },
    });
    expect(other.body.result.isError).toBeUndefined();
    expect(before - (await balanceMicros(accountId))).toBe(27_000);
  });

  it('a JSON-RPC batch of two web_search calls runs two searches, each with its own request id, each charged', async () => {
    const { accountId, secret } = await fundedKey(1);
    const before = await balanceMicros(accountId);
    const batch = [1, 2].map((id) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'web_search', arguments: { query: `batch ${id}`, model: 'exa/fast', max_results: 1 } } }));
    const response = await call('POST', `${gw(0)}/mcp`, { body: batch, headers: { ...bearer(secret), accept: 'application/json, text/event-stream' } });
    expect(response.status).toBe(200);
    const ids = (response.body as { result: { structuredContent: { request_id: string } } }[]).map((r) => r.result.structuredContent.request_id);
    expect(new Set(ids).size).toBe(2);
    expect(ids).toContain(response.headers.get('x-svc-request-id'));
    expect(before - (await balanceMicros(accountId))).toBe(18_000);
  });

  describe('two gateways behind a round-robin proxy without stickiness', () => {
    let proxy: Server;
    const served: string[] = [];

    beforeAll(async () => {
      const targets = [new URL(gw(0)), new URL(gw(1))];
      let next = 0;
      proxy = createServer((incoming, outgoing) => {
        const target = targets[next++ % targets.length] as URL;
        served.push(target.port);
        const upstream = httpRequest({ host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers: incoming.headers }, (response) => {
          outgoing.writeHead(response.statusCode ?? 502, response.headers);
          response.pipe(outgoing);
        });
        upstream.on('error', () => outgoing.destroy());
        incoming.pipe(upstream);
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', () => resolve()));
    });

    afterAll(async () => {
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    });

    it('one client session is served by both replicas in turn: tools listed, searches answered and charged', async () => {
      const { accountId, secret } = await fundedKey(1);
      const port = (proxy.address() as AddressInfo).port;
      const client = await connect(`http://127.0.0.1:${port}`, secret);
      const before = await balanceMicros(accountId);
      expect((await client.listTools()).tools).toHaveLength(6);
      const answers: CallToolResult[] = [];
      for (let i = 0; i < 4; i++) answers.push(await search(client, { query: `round robin ${i}`, model: 'brave/web', max_results: 2 }));
      for (const answer of answers) expect(answer.structuredContent).toMatchObject({ model: 'brave/web', cost_usd: 0.006 });
      expect(before - (await balanceMicros(accountId))).toBe(4 * 6_000);
      const ports = new Set(served);
      expect(ports).toEqual(new Set([new URL(gw(0)).port, new URL(gw(1)).port]));
      // initialize, initialized, GET (405), tools/list, 4 tool calls: alternate replicas.
      expect(served.length).toBeGreaterThanOrEqual(7);
    });
  });
});
