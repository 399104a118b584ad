import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { LIMITS, redisKeys } from '@svc/contracts';
import { bearer, call, grantCredits, newAccount, newApiKey, parseRaw, rawExchange, useStack, waitFor } from '@svc/test-kit';

/**
 * Key fences end to end (docs/api.md, "Key fences"; issue 27), through the real gateway,
 * account-admin, billing, Redis and Postgres:
 * - allowed_models: a fallback list with a disallowed model skips it (charged nothing), none
 *   allowed is 403 model_not_allowed;
 * - allowed_ips: IPv4 and IPv6 CIDRs, X-Forwarded-For with and without trusted proxies,
 *   refused before the body is read;
 * - both propagate like every key change: at once on the handling gateway, within the bound
 *   on a peer that hears pub/sub and on one that lost every message.
 *
 * Gateway 0 handles changes; it listens on `::` (IPv4 and IPv6 loopback) and trusts
 * 127.0.0.1 as a proxy. Gateway 1 hears pub/sub and trusts no proxy. Gateway 2 is cut off
 * from pub/sub (KEY_CHANGES_SUBSCRIBE=false) and trusts 127.0.0.1.
 */
const BOUND_MS = 15_000;
const CACHE_TTL_MS = 3_000;

describe('key fences: allowed_models and allowed_ips, TRUSTED_PROXIES', () => {
  const suite = useStack({
    name: 'key_fences',
    redisDb: 9,
    simulator: true,
    logLevel: 'warn',
    gatewayEnv: { KEY_CACHE_TTL_MS: String(CACHE_TTL_MS), RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000' },
    gateways: [
      { env: { HOST: '::', TRUSTED_PROXIES: '127.0.0.1/32' } },
      { env: { TRUSTED_PROXIES: '' } },
      { env: { KEY_CHANGES_SUBSCRIBE: 'false', TRUSTED_PROXIES: '127.0.0.1/32' } },
    ],
  }, { timeoutMs: 180_000 });
  let handler: string;
  let handlerV6: string;
  let untrusting: string;
  let lost: string;
  let account: Awaited<ReturnType<typeof newAccount>>;

  beforeAll(async () => {
    const [g0, g1, g2] = suite.stack.gateways;
    if (g0 === undefined || g1 === undefined || g2 === undefined) throw new Error('three gateways expected');
    handler = g0.url;
    handlerV6 = g0.url.replace('127.0.0.1', '[::1]');
    untrusting = g1.url;
    lost = g2.url;
    account = await newAccount(handler, 'fences');
    await grantCredits(suite.stack, account.accountId, 10_000_000, { redis: suite.redis });
  }, 60_000);

  const balance = async (): Promise<number> => Number(await suite.redis.get(redisKeys.accountBalance(account.accountId)));
  const search = (url: string, secret: string, models: string[], headers: Record<string, string> = {}) =>
    call('POST', `${url}/v1/search`, { body: { query: 'fences', models, max_results: 3 }, headers: { ...bearer(secret), ...headers } });
  const patch = async (id: string, body: Record<string, unknown>): Promise<void> => {
    const response = await call('PATCH', `${handler}/v1/keys/${id}`, { body, headers: bearer(account.managementKey) });
    expect(response.status).toBe(200);
  };

  describe('allowed_models', () => {
    it('skips a disallowed model of a fallback list, charges it nothing, and answers from an allowed one', async () => {
      const key = await newApiKey(handler, account.managementKey, { allowed_models: ['exa/*', 'tavily/basic'] });
      const before = await balance();
      const response = await search(handler, key.secret, ['brave/web', 'brave/news', 'exa/fast']);
      expect(response.status).toBe(200);
      expect(response.body.model).toBe('exa/fast');
      expect(response.body.attempts).toEqual([
        { model: 'brave/web', status: 'skipped', error: 'model not allowed for this key' },
        { model: 'brave/news', status: 'skipped', error: 'model not allowed for this key' },
      ]);
      // Only exa/fast's price for 3 results (its base price covers up to 10).
      expect(response.body.cost_usd).toBe(0.009);
      await waitFor('the settlement', async () => (before - (await balance()) === 9_000 ? true : undefined));
    });

    it('answers 403 model_not_allowed, reserving and charging nothing, when no requested model is allowed', async () => {
      const key = await newApiKey(handler, account.managementKey, { allowed_models: ['exa/fast'] });
      const before = await balance();
      const response = await search(handler, key.secret, ['brave/web', 'tavily/basic']);
      expect(response.status).toBe(403);
      expect(response.body.error.code).toBe('model_not_allowed');
      expect(response.body.error).not.toHaveProperty('attempts');
      expect(await balance()).toBe(before);
      // The key itself shows its fence.
      const shown = await call('GET', `${handler}/v1/keys/${key.id}`, { headers: bearer(account.managementKey) });
      expect(shown.body).toMatchObject({ allowed_models: ['exa/fast'], allowed_ips: null });
    });

    it('refuses entries outside the catalog, duplicates, an empty list and too many entries with 400', async () => {
      for (const allowed of [['nope/web'], ['exa/*', 'exa/*'], [], ['acme/*'], Array.from({ length: LIMITS.allowedModels.max + 1 }, () => 'exa/fast')]) {
        const response = await call('POST', `${handler}/v1/keys`, { body: { allowed_models: allowed }, headers: bearer(account.managementKey) });
        expect(response.status).toBe(400);
        expect(response.body.error.code).toBe('invalid_request');
      }
    });
  });

  describe('allowed_ips and TRUSTED_PROXIES', () => {
    it('admits an IPv4 CIDR through a trusted proxy\'s X-Forwarded-For, and nothing else', async () => {
      const key = await newApiKey(handler, account.managementKey, { allowed_ips: ['203.0.113.0/24'] });
      const from = async (url: string, forwardedFor?: string) =>
        (await search(url, key.secret, ['exa/fast'], forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor })).body?.error?.code ?? 'ok';
      // 127.0.0.1 is a trusted proxy on gateway 0: the nearest hop that is not one is the client.
      expect(await from(handler, '203.0.113.7')).toBe('ok');
      expect(await from(handler, '198.51.100.1, 203.0.113.7')).toBe('ok');
      expect(await from(handler, '203.0.113.7, 198.51.100.1')).toBe('ip_not_allowed');
      expect(await from(handler)).toBe('ip_not_allowed');
      // Gateway 1 trusts no proxy: X-Forwarded-For is ignored, the client is 127.0.0.1.
      expect(await from(untrusting, '203.0.113.7')).toBe('ip_not_allowed');
      const refused = await search(handler, key.secret, ['exa/fast'], { 'x-forwarded-for': '198.51.100.1' });
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toBe('this key may not be used from this client address');
      // The forwarded routes an API key may use are fenced too.
      expect((await call('GET', `${handler}/v1/credits`, { headers: { ...bearer(key.secret), 'x-forwarded-for': '198.51.100.1' } })).body.error.code).toBe('ip_not_allowed');
      expect((await call('GET', `${handler}/v1/credits`, { headers: { ...bearer(key.secret), 'x-forwarded-for': '203.0.113.9' } })).status).toBe(200);
    });

    it('admits IPv6 CIDRs: the socket\'s own address, and an X-Forwarded-For hop', async () => {
      const loopback = await newApiKey(handler, account.managementKey, { allowed_ips: ['::1/128'] });
      expect((await search(handlerV6, loopback.secret, ['exa/fast'])).status).toBe(200);
      // From 127.0.0.1 (a trusted proxy, no X-Forwarded-For): the client is 127.0.0.1.
      expect((await search(handler, loopback.secret, ['exa/fast'])).body.error.code).toBe('ip_not_allowed');
      // ::1 is not a trusted proxy: its X-Forwarded-For is ignored.
      expect((await search(handlerV6, loopback.secret, ['exa/fast'], { 'x-forwarded-for': '2001:db8::5' })).status).toBe(200);

      const documentation = await newApiKey(handler, account.managementKey, { allowed_ips: ['2001:db8::/32', '192.0.2.1'] });
      expect((await search(handler, documentation.secret, ['exa/fast'], { 'x-forwarded-for': '2001:db8:ff::1' })).status).toBe(200);
      expect((await search(handler, documentation.secret, ['exa/fast'], { 'x-forwarded-for': '[2001:db8::7]:443' })).status).toBe(200);
      expect((await search(handler, documentation.secret, ['exa/fast'], { 'x-forwarded-for': '192.0.2.1' })).status).toBe(200);
      expect((await search(handler, documentation.secret, ['exa/fast'], { 'x-forwarded-for': '2001:db9::1' })).body.error.code).toBe('ip_not_allowed');
    });

    it('refuses a request from outside before its body is read (a body over the limit is never read)', async () => {
      const key = await newApiKey(handler, account.managementKey, { allowed_ips: ['192.0.2.0/24'] });
      const huge = JSON.stringify({ query: 'x'.repeat(2 * 1024 * 1024), models: ['exa/fast'] });
      // On a raw socket, the headers and only the first 64 KiB of the body: the answer comes
      // without the rest. (A client that writes the whole body may meet the closed socket
      // first and never read the answer.)
      const head = `POST /v1/search HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${key.secret}\r\nContent-Type: application/json\r\nContent-Length: ${huge.length}\r\n\r\n`;
      const refused = parseRaw((await rawExchange(handler, head + huge.slice(0, 64 * 1024))).text);
      expect(refused.status).toBe(403);
      expect(refused.body?.error?.code).toBe('ip_not_allowed');
      // The same body from an allowed address is read, and refused for its size.
      const tooLarge = await call('POST', `${handler}/v1/search`, { raw: huge, headers: { ...bearer(key.secret), 'x-forwarded-for': '192.0.2.10' } });
      expect(tooLarge.status).toBe(413);
    });

    it('refuses malformed CIDRs, duplicates and more than the bound with 400', async () => {
      const tooMany = Array.from({ length: LIMITS.allowedIps.max + 1 }, (_, i) => `10.0.${i}.0/24`);
      for (const allowed of [['10.0.0.0/33'], ['example.com'], ['10.0.0.1', '10.0.0.1'], [], tooMany, ['fe80::1%eth0']]) {
        const response = await call('POST', `${handler}/v1/keys`, { body: { allowed_ips: allowed }, headers: bearer(account.managementKey) });
        expect(response.status).toBe(400);
        expect(response.body.error.code).toBe('invalid_request');
      }
      const atTheBound = await call('POST', `${handler}/v1/keys`, { body: { allowed_ips: tooMany.slice(0, LIMITS.allowedIps.max) }, headers: bearer(account.managementKey) });
      expect(atTheBound.status).toBe(201);
    });
  });

  describe('over MCP (the official client)', () => {
    const connect = async (secret: string, headers: Record<string, string> = {}): Promise<McpClient> => {
      const transport = new StreamableHTTPClientTransport(new URL(`${handler}/mcp`), { requestInit: { headers: { ...bearer(secret), ...headers } } });
      const client = new McpClient({ name: 'fences-e2e', version: '1.0.0' });
      await client.connect(transport);
      return client;
    };

    it('a model fence makes web_search a model_not_allowed tool error, or a skipped attempt', async () => {
      const key = await newApiKey(handler, account.managementKey, { allowed_models: ['exa/fast'] });
      const client = await connect(key.secret);
      try {
        const refused = (await client.callTool({ name: 'web_search', arguments: { query: 'fences', models: ['brave/web'] } })) as CallToolResult;
        expect(refused.isError).toBe(true);
        const body = JSON.parse(refused.content[1]?.type === 'text' ? refused.content[1].text : '{}') as { error: { code: string } };
        expect(body.error.code).toBe('model_not_allowed');
        const answered = (await client.callTool({ name: 'web_search', arguments: { query: 'fences', models: ['brave/web', 'exa/fast'], max_results: 3 } })) as CallToolResult;
        expect(answered.isError).not.toBe(true);
        expect(answered.structuredContent).toMatchObject({ model: 'exa/fast', attempts: [{ model: 'brave/web', status: 'skipped', error: 'model not allowed for this key' }] });
      } finally {
        await client.close();
      }
    });

    it('an address fence refuses /mcp with 403 ip_not_allowed before MCP starts, and admits an allowed address', async () => {
      const key = await newApiKey(handler, account.managementKey, { allowed_ips: ['192.0.2.0/24'] });
      const refused = await call('POST', `${handler}/mcp`, {
        body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        headers: { ...bearer(key.secret), accept: 'application/json, text/event-stream' },
      });
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('ip_not_allowed');
      const client = await connect(key.secret, { 'x-forwarded-for': '192.0.2.44' });
      try {
        expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('web_search');
      } finally {
        await client.close();
      }
    });
  });

  describe('propagation', () => {
    const peers = () => [{ name: 'with pub/sub', url: untrusting }, { name: 'pub/sub lost', url: lost }];

    /** Warms every gateway's cache with `before`, changes the key through the handler, then waits for each peer to answer `after`. */
    async function propagate(probe: (url: string) => Promise<string>, before: string, change: () => Promise<void>, after: string): Promise<void> {
      for (const peer of [{ name: 'handler', url: handler }, ...peers()]) expect(await probe(peer.url)).toBe(before);
      const changedAt = Date.now();
      await change();
      expect(await probe(handler)).toBe(after);
      await Promise.all(peers().map(async (peer) => {
        const seenAt = await waitFor(`${after} on the gateway ${peer.name}`, async () =>
          (await probe(peer.url)) === after ? Date.now() : undefined, { timeoutMs: BOUND_MS + 5_000, intervalMs: 25 });
        expect(seenAt - changedAt).toBeLessThanOrEqual(BOUND_MS);
      }));
    }

    it('an address fence set and removed reaches every gateway within the bound, pub/sub or not', async () => {
      const key = await newApiKey(handler, account.managementKey);
      // GET /v1/credits from 127.0.0.1 (no X-Forwarded-For: the client is 127.0.0.1 on every gateway).
      const probe = async (url: string) => {
        const response = await call('GET', `${url}/v1/credits`, { headers: bearer(key.secret) });
        return response.status === 200 ? 'ok' : String(response.body?.error?.code);
      };
      await propagate(probe, 'ok', () => patch(key.id, { allowed_ips: ['192.0.2.0/24'] }), 'ip_not_allowed');
      await propagate(probe, 'ip_not_allowed', () => patch(key.id, { allowed_ips: ['127.0.0.0/8', '::1'] }), 'ok');
      await propagate(probe, 'ok', () => patch(key.id, { allowed_ips: ['192.0.2.0/24'] }), 'ip_not_allowed');
      await propagate(probe, 'ip_not_allowed', () => patch(key.id, { allowed_ips: null }), 'ok');
    });

    it('a model fence reaches every gateway within the bound, pub/sub or not', async () => {
      const key = await newApiKey(handler, account.managementKey);
      const probe = async (url: string) => {
        const response = await search(url, key.secret, ['brave/web']);
        return response.status === 200 ? 'ok' : String(response.body?.error?.code);
      };
      await propagate(probe, 'ok', () => patch(key.id, { allowed_models: ['exa/*'] }), 'model_not_allowed');
      await propagate(probe, 'model_not_allowed', () => patch(key.id, { allowed_models: ['brave/*'] }), 'ok');
    });
  });
});
