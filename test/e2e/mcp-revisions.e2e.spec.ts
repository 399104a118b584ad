import { createMCPClient } from '@ai-sdk/mcp';
import type { MCPClient } from '@ai-sdk/mcp';
import { Client as McpClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { redisKeys } from '@svc/contracts';
import { bearer, call, newAccount, newApiKey, grantCredits, useStack, SETTLING_STACK } from '@svc/test-kit';

/**
 * /mcp on both protocol eras (decision 0024), against a real stack (gateway, billing with
 * its ledger worker, account-admin, provider simulator): the official SDK v2 client pinned
 * to 2026-07-28 and on the 2025-11-25 handshake, the Vercel AI SDK's MCP client, and raw
 * 2026-07-28 requests for the header checks. Every web_search is compared with the same
 * POST /v1/search on the account's balance.
 */
describe('/mcp on the 2026-07-28 revision and the 2025 ones, with the official v2 client and the AI SDK', () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const close of closers) await close().catch(() => undefined);
  });
  const suite = useStack({ ...SETTLING_STACK, name: 'mcp_rev', redisDb: 9 });

  async function fundedKey(usd: number): Promise<{ accountId: string; secret: string }> {
    const account = await newAccount(suite.gw, 'mcp-rev');
    await grantCredits(suite.stack, account.accountId, Math.round(usd * 1_000_000), { redis: suite.redis });
    const key = await newApiKey(suite.gw, account.managementKey);
    return { accountId: account.accountId, secret: key.secret };
  }

  const balanceMicros = async (accountId: string): Promise<number> => Number(await suite.redis.get(redisKeys.accountBalance(accountId)));

  async function official(secret: string, revision: '2026-07-28' | '2025-11-25'): Promise<McpClient> {
    const transport = new StreamableHTTPClientTransport(new URL(`${suite.gw}/mcp`), { requestInit: { headers: bearer(secret) } });
    const client = new McpClient(
      { name: 'e2e-v2', version: '1.0.0' },
      { versionNegotiation: { mode: revision === '2026-07-28' ? { pin: '2026-07-28' } : 'legacy' } },
    );
    await client.connect(transport);
    closers.push(() => client.close());
    return client;
  }

  /** The charge of one POST /v1/search with these arguments, on the same account. */
  async function httpCharge(accountId: string, secret: string, args: Record<string, unknown>): Promise<{ micros: number; body: Record<string, unknown> }> {
    const before = await balanceMicros(accountId);
    const http = await call('POST', `${suite.gw}/v1/search`, { body: args, headers: bearer(secret) });
    expect(http.status).toBe(200);
    return { micros: before - (await balanceMicros(accountId)), body: http.body as Record<string, unknown> };
  }

  const errorOf = (result: CallToolResult): { code: string; message: string } => {
    expect(result.isError).toBe(true);
    const block = result.content[1];
    return (JSON.parse(block?.type === 'text' ? block.text : '') as { error: { code: string; message: string } }).error;
  };

  for (const revision of ['2026-07-28', '2025-11-25'] as const) {
    it(`the official SDK v2 client on ${revision}: tools listed, a web_search charged exactly like POST /v1/search`, async () => {
      const { accountId, secret } = await fundedKey(1);
      const client = await official(secret, revision);
      expect(client.getNegotiatedProtocolVersion()).toBe(revision);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['deep_research', 'get_credits', 'get_research', 'list_models', 'web_fetch', 'web_search']);
      expect(Object.keys(tools.find((t) => t.name === 'web_search')?.inputSchema.properties ?? {}).sort()).toEqual([
        'cache', 'cache_max_age_s', 'contents', 'country', 'exclude_domains', 'fanout_wait_ms', 'idempotency_key', 'include_domains', 'language', 'max_chars_per_result',
        'max_cost_usd', 'max_results', 'max_total_chars', 'model', 'models', 'published_after', 'published_before', 'query', 'safesearch', 'strategy',
      ]);
      expect(Object.keys(tools.find((t) => t.name === 'web_fetch')?.inputSchema.properties ?? {}).sort()).toEqual([
        'cache', 'cache_max_age_s', 'format', 'idempotency_key', 'max_age_s', 'max_chars_per_url', 'max_cost_usd', 'max_total_chars', 'model', 'models', 'query', 'urls',
      ]);

      const args = { query: `mcp ${revision} parity`, models: ['exa/fast', 'brave/web'], max_results: 3 };
      const http = await httpCharge(accountId, secret, args);
      const before = await balanceMicros(accountId);
      const result = (await client.callTool({ name: 'web_search', arguments: args })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      const answer = result.structuredContent as { cost_usd: number; model: string; results: unknown[]; request_id: string };
      expect(before - (await balanceMicros(accountId))).toBe(http.micros);
      expect(http.micros).toBe(Math.round(Number(http.body.cost_usd) * 1_000_000));
      expect(answer).toMatchObject({ cost_usd: http.body.cost_usd, model: http.body.model, results: http.body.results });
      expect(answer.request_id).not.toBe(http.body.request_id);
    });

    it(`the official SDK v2 client on ${revision}: a web_fetch charged exactly like POST /v1/extract, a retry with its idempotency_key charged once`, async () => {
      const { accountId, secret } = await fundedKey(1);
      const client = await official(secret, revision);
      const args = { urls: [`https://example.org/${revision}/page`, 'https://example.com/sim-fail-exa/page'], models: ['exa/contents', 'tavily/extract'] };
      const before = await balanceMicros(accountId);
      const http = await call('POST', `${suite.gw}/v1/extract`, { body: args, headers: bearer(secret) });
      expect(http.status).toBe(200);
      const httpMicros = before - (await balanceMicros(accountId));
      const keyed = { ...args, idempotency_key: `fetch-${revision}-${Date.now()}` };
      const result = (await client.callTool({ name: 'web_fetch', arguments: keyed })) as CallToolResult;
      const again = (await client.callTool({ name: 'web_fetch', arguments: keyed })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(again.structuredContent).toEqual(result.structuredContent);
      const answer = result.structuredContent as { cost_usd: number; results: { url: string; model: string; text: string }[] };
      expect(before - (await balanceMicros(accountId))).toBe(2 * httpMicros);
      expect(answer.cost_usd).toBe(http.body.cost_usd);
      expect(answer.results).toEqual(http.body.results);
    });

    it(`on ${revision}, a web_search retried with the same idempotency_key is answered from the first and charged once; other arguments are an error naming it`, async () => {
      const { accountId, secret } = await fundedKey(1);
      const client = await official(secret, revision);
      const key = `retry-${revision}-${Date.now()}`;
      const args = { query: 'retried with a key', model: 'exa/fast', max_results: 1, idempotency_key: key };
      const before = await balanceMicros(accountId);
      const first = (await client.callTool({ name: 'web_search', arguments: args })) as CallToolResult;
      const again = (await client.callTool({ name: 'web_search', arguments: args })) as CallToolResult;
      expect(first.isError).toBeFalsy();
      expect(again.structuredContent).toEqual(first.structuredContent);
      expect(before - (await balanceMicros(accountId))).toBe(9_000);

      const other = (await client.callTool({ name: 'web_search', arguments: { ...args, max_results: 2 } })) as CallToolResult;
      expect(errorOf(other)).toMatchObject({ code: 'invalid_request', message: 'this idempotency_key was used with different arguments' });
      const fresh = (await client.callTool({ name: 'web_search', arguments: { ...args, idempotency_key: `${key}-2` } })) as CallToolResult;
      expect((fresh.structuredContent as { request_id: string }).request_id).not.toBe((first.structuredContent as { request_id: string }).request_id);
      expect(before - (await balanceMicros(accountId))).toBe(18_000);

      const bad = (await client.callTool({ name: 'web_search', arguments: { ...args, idempotency_key: '   ' } })) as CallToolResult;
      expect(errorOf(bad)).toMatchObject({ code: 'invalid_request', message: 'idempotency_key must be 1 to 255 printable ASCII characters' });
      expect(before - (await balanceMicros(accountId))).toBe(18_000);
    });
  }

  it('the Vercel AI SDK MCP client (HTTP transport, bearer header): tools listed, a web_search charged like POST /v1/search, a retry with its idempotency_key charged once', async () => {
    const { accountId, secret } = await fundedKey(1);
    const client: MCPClient = await createMCPClient({ transport: { type: 'http', url: `${suite.gw}/mcp`, headers: bearer(secret) } });
    closers.push(() => client.close());
    const listed = await client.listTools();
    expect(listed.tools.map((t) => t.name).sort()).toEqual(['deep_research', 'get_credits', 'get_research', 'list_models', 'web_fetch', 'web_search']);
    const tools = await client.tools();
    const webSearch = tools.web_search;
    if (webSearch?.execute === undefined) throw new Error('web_search has no execute');

    const args = { query: 'ai sdk parity', model: 'brave/web', max_results: 2 };
    const http = await httpCharge(accountId, secret, args);
    const before = await balanceMicros(accountId);
    const options = { toolCallId: 'call_1', messages: [] };
    const withKey = { ...args, idempotency_key: `ai-sdk-${Date.now()}` };
    const first = (await webSearch.execute(withKey, options)) as CallToolResult;
    const again = (await webSearch.execute(withKey, options)) as CallToolResult;
    expect(first.isError).toBeFalsy();
    expect((first.structuredContent as { cost_usd: number }).cost_usd).toBe(http.body.cost_usd);
    expect(again.structuredContent).toEqual(first.structuredContent);
    expect(before - (await balanceMicros(accountId))).toBe(http.micros);
  });

  describe('raw 2026-07-28 requests', () => {
    const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' } };
    const modernHeaders = (secret: string, method: string, name?: string): Record<string, string> => ({
      ...bearer(secret),
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(name === undefined ? {} : { 'mcp-name': name }),
    });
    let secret = '';
    let accountId = '';

    beforeAll(async () => {
      ({ secret, accountId } = await fundedKey(1));
    });

    it('tools/list without initialize or a session: the tools with ttlMs; server/discover names the revision and the capabilities', async () => {
      const list = await call('POST', `${suite.gw}/mcp`, { body: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } }, headers: modernHeaders(secret, 'tools/list') });
      expect(list.status).toBe(200);
      expect(list.headers.get('mcp-session-id')).toBeNull();
      expect(list.body.result.tools.map((t: { name: string }) => t.name).sort()).toEqual(['deep_research', 'get_credits', 'get_research', 'list_models', 'web_fetch', 'web_search']);
      expect(list.body.result).toMatchObject({ ttlMs: 3_600_000, cacheScope: 'public' });

      const discover = await call('POST', `${suite.gw}/mcp`, { body: { jsonrpc: '2.0', id: 2, method: 'server/discover', params: { _meta: envelope } }, headers: modernHeaders(secret, 'server/discover') });
      expect(discover.status).toBe(200);
      // server/discover lists the envelope revisions; the 2025 ones are negotiated by initialize (the tests above).
      expect(discover.body.result.supportedVersions).toEqual(['2026-07-28']);
      expect(discover.body.result.capabilities).toHaveProperty('tools');
      expect(discover.body.result.instructions).toContain('web_search');
      expect(discover.body.result._meta['io.modelcontextprotocol/serverInfo']).toMatchObject({ name: 'search-gateway' });
    });

    it('Mcp-Method or Mcp-Name that disagree with the body are 400, and nothing is charged', async () => {
      const before = await balanceMicros(accountId);
      const body = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'web_search', arguments: { query: 'mismatch', model: 'exa/fast' }, _meta: envelope } };
      const wrongMethod = await call('POST', `${suite.gw}/mcp`, { body, headers: modernHeaders(secret, 'tools/list', 'web_search') });
      expect(wrongMethod.status).toBe(400);
      expect(wrongMethod.body.error.code).toBe(-32020);
      const wrongName = await call('POST', `${suite.gw}/mcp`, { body, headers: modernHeaders(secret, 'tools/call', 'get_credits') });
      expect(wrongName.status).toBe(400);
      expect(wrongName.body.error.code).toBe(-32020);
      const noName = await call('POST', `${suite.gw}/mcp`, { body, headers: modernHeaders(secret, 'tools/call') });
      expect(noName.status).toBe(400);
      expect(await balanceMicros(accountId)).toBe(before);
      const right = await call('POST', `${suite.gw}/mcp`, { body, headers: modernHeaders(secret, 'tools/call', 'web_search') });
      expect(right.status).toBe(200);
      expect(right.body.result.structuredContent).toMatchObject({ model: 'exa/fast', cost_usd: 0.009 });
      expect(before - (await balanceMicros(accountId))).toBe(9_000);
    });

    it('hostile bodies and headers are a 4xx or a JSON-RPC error, never a 500, and charge nothing', async () => {
      const before = await balanceMicros(accountId);
      const headers = modernHeaders(secret, 'tools/call', 'web_search');
      const call200 = { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'web_search', arguments: { query: 'x', model: 'exa/fast' }, _meta: envelope } };
      const cases: { body?: unknown; raw?: string; headers?: Record<string, string> }[] = [
        { body: { foo: 1 } },
        { body: [] },
        { body: 'a string' },
        { body: null },
        { raw: '[1,2,' },
        { body: [call200, call200] },
        { body: { ...call200, params: { ...call200.params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } }, headers: { 'mcp-protocol-version': '2099-01-01' } },
        { body: { ...call200, params: { ...call200.params, _meta: { 'io.modelcontextprotocol/protocolVersion': 42 } } } },
        { body: { ...call200, params: { ...call200.params, arguments: 'not an object' } } },
        { body: { ...call200, params: { ...call200.params, name: 'x'.repeat(5000) } }, headers: { 'mcp-name': 'x'.repeat(5000) } },
        { body: call200, headers: { 'mcp-name': '=?base64?####?=' } },
        { body: call200, headers: { 'mcp-method': '' } },
        { body: { jsonrpc: '2.0', id: { nested: true }, method: 'tools/list', params: { _meta: envelope } }, headers: { 'mcp-method': 'tools/list' } },
      ];
      for (const [index, hostile] of cases.entries()) {
        const answer = await call('POST', `${suite.gw}/mcp`, { ...(hostile.raw === undefined ? { body: hostile.body } : { raw: hostile.raw }), headers: { ...headers, ...hostile.headers, ...(hostile.raw === undefined ? {} : { 'content-type': 'application/json' }) } });
        expect({ index, status: answer.status < 500 }).toEqual({ index, status: true });
      }
      // The batch of two well-formed calls is not a 2026-07-28 request (no batches there): it must not run either call.
      expect(await balanceMicros(accountId)).toBe(before);
    });

    it('subscriptions/listen is answered at once with method not found (no stream is held open)', async () => {
      const listen = await call('POST', `${suite.gw}/mcp`, {
        body: { jsonrpc: '2.0', id: 5, method: 'subscriptions/listen', params: { _meta: envelope, notifications: { toolsListChanged: true } } },
        headers: modernHeaders(secret, 'subscriptions/listen'),
      });
      expect(listen.status).toBe(200);
      expect(listen.body).toMatchObject({ jsonrpc: '2.0', id: 5, error: { code: -32601 } });
    });

    it('a 401 says WWW-Authenticate: Bearer, with error="invalid_token" when a token was sent, and no OAuth discovery', async () => {
      const body = { jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: envelope } };
      const none = await call('POST', `${suite.gw}/mcp`, { body, headers: { accept: 'application/json, text/event-stream' } });
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toBe('Bearer');
      const wrong = await call('POST', `${suite.gw}/mcp`, { body, headers: { ...bearer('svc-thisisnotakeythisisnotakey00'), accept: 'application/json, text/event-stream' } });
      expect(wrong.status).toBe(401);
      expect(wrong.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
      expect(wrong.headers.get('www-authenticate')).not.toContain('resource_metadata');
    });
  });
});
