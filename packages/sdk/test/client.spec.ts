import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_CODES as PLATFORM_ERROR_CODES } from '@svc/errors';
import { DEFAULT_BASE_URL, ENDPOINTS, ERROR_CODES, SearchGateway } from '@svc/sdk';
import type { ApiKey } from '@svc/sdk';
import { VERSION } from '../src/version';
import { ScriptedServer, json } from './scripted-server';

/**
 * What each method sends (method, path, query, body, which key) and how options default,
 * against a scripted server on loopback.
 */
describe('SearchGateway requests', () => {
  const server = ScriptedServer.forSuite();

  const both = (): SearchGateway => new SearchGateway({ baseUrl: server.url, apiKey: 'svc-api', managementKey: 'svc-mgmt-m' });

  type Case = [string, string, string, (c: SearchGateway) => Promise<unknown>, unknown, string | undefined];
  const cases: Case[] = [
    ['search', 'POST', '/v1/search', (c) => c.search({ query: 'q', models: ['exa/fast', 'brave/web'], max_results: 5 }), { query: 'q', models: ['exa/fast', 'brave/web'], max_results: 5 }, 'svc-api'],
    ['extract', 'POST', '/v1/extract', (c) => c.extract({ urls: ['https://example.com/a'], models: ['exa/contents', 'tavily/extract'], max_chars_per_url: 5_000 }),
      { urls: ['https://example.com/a'], models: ['exa/contents', 'tavily/extract'], max_chars_per_url: 5_000 }, 'svc-api'],
    ['models', 'GET', '/v1/models', (c) => c.models(), undefined, undefined],
    ['pricing', 'GET', '/v1/credits/pricing', (c) => c.pricing(), undefined, undefined],
    ['status', 'GET', '/v1/status', (c) => c.status(), undefined, undefined],
    ['credits', 'GET', '/v1/credits', (c) => c.credits(), undefined, 'svc-api'],
    ['key', 'GET', '/v1/key', (c) => c.key(), undefined, 'svc-api'],
    ['usage', 'GET', '/v1/usage?from=2026-11-01&to=2026-11-30&group_by=model&key_id=key_a', (c) => c.usage({ from: '2026-11-01', to: '2026-11-30', group_by: 'model', key_id: 'key_a' }), undefined, 'svc-api'],
    ['usage without a query', 'GET', '/v1/usage', (c) => c.usage(), undefined, 'svc-api'],
    ['checkout', 'POST', '/v1/credits/checkout', (c) => c.checkout({ amount_usd: 25 }), { amount_usd: 25 }, 'svc-mgmt-m'],
    ['keys.list', 'GET', '/v1/keys?limit=5&cursor=abc%3D', (c) => c.keys.list({ limit: 5, cursor: 'abc=' }), undefined, 'svc-mgmt-m'],
    ['keys.get', 'GET', '/v1/keys/key_a%2Fb', (c) => c.keys.get('key_a/b'), undefined, 'svc-mgmt-m'],
    ['keys.create', 'POST', '/v1/keys', (c) => c.keys.create({ name: 'ci', limit_usd: 10, limit_reset: 'monthly' }), { name: 'ci', limit_usd: 10, limit_reset: 'monthly' }, 'svc-mgmt-m'],
    ['keys.create without a body', 'POST', '/v1/keys', (c) => c.keys.create(), {}, 'svc-mgmt-m'],
    ['keys.update', 'PATCH', '/v1/keys/key_a', (c) => c.keys.update('key_a', { limit_usd: null, expires_at: null }), { limit_usd: null, expires_at: null }, 'svc-mgmt-m'],
    ['keys.disable', 'PATCH', '/v1/keys/key_a', (c) => c.keys.disable('key_a'), { disabled: true }, 'svc-mgmt-m'],
    ['keys.enable', 'PATCH', '/v1/keys/key_a', (c) => c.keys.enable('key_a'), { disabled: false }, 'svc-mgmt-m'],
    ['keys.delete', 'DELETE', '/v1/keys/key_a', (c) => c.keys.delete('key_a'), undefined, 'svc-mgmt-m'],
    ['providerKeys.list', 'GET', '/v1/provider-keys', (c) => c.providerKeys.list(), undefined, 'svc-mgmt-m'],
    ['providerKeys.get', 'GET', '/v1/provider-keys/exa', (c) => c.providerKeys.get('exa'), undefined, 'svc-mgmt-m'],
    ['providerKeys.set', 'PUT', '/v1/provider-keys/tavily', (c) => c.providerKeys.set('tavily', 'tvly-123'), { key: 'tvly-123' }, 'svc-mgmt-m'],
    ['providerKeys.delete', 'DELETE', '/v1/provider-keys/brave', (c) => c.providerKeys.delete('brave'), undefined, 'svc-mgmt-m'],
    ['keys.create with fences', 'POST', '/v1/keys', (c) => c.keys.create({ allowed_models: ['exa/*'], allowed_ips: ['10.0.0.0/8', '2001:db8::/32'] }), { allowed_models: ['exa/*'], allowed_ips: ['10.0.0.0/8', '2001:db8::/32'] }, 'svc-mgmt-m'],
    ['auditLog.list', 'GET', '/v1/audit-log?limit=5&cursor=c1&action=api_key.update&actor_kind=session&actor_id=usr_a&target_id=key_a&from=2026-11-01T00%3A00%3A00Z&to=2026-11-02T00%3A00%3A00Z',
      (c) => c.auditLog.list({ limit: 5, cursor: 'c1', action: 'api_key.update', actor_kind: 'session', actor_id: 'usr_a', target_id: 'key_a', from: '2026-11-01T00:00:00Z', to: '2026-11-02T00:00:00Z' }), undefined, 'svc-mgmt-m'],
    ['auditLog.list without a query', 'GET', '/v1/audit-log', (c) => c.auditLog.list(), undefined, 'svc-mgmt-m'],
    ['research.create', 'POST', '/v1/research', (c) => c.research.create({ input: 'q', models: ['exa/agent-low', 'tavily/research-mini'], max_cost_usd: 0.5, metadata: { team: 'a' } }),
      { input: 'q', models: ['exa/agent-low', 'tavily/research-mini'], max_cost_usd: 0.5, metadata: { team: 'a' } }, 'svc-api'],
    ['research.get', 'GET', '/v1/research/rsr_a%2Fb', (c) => c.research.get('rsr_a/b'), undefined, 'svc-api'],
    ['research.list', 'GET', '/v1/research?limit=5&cursor=c1&status=running', (c) => c.research.list({ limit: 5, cursor: 'c1', status: 'running' }), undefined, 'svc-api'],
    ['research.cancel', 'POST', '/v1/research/rsr_a/cancel', (c) => c.research.cancel('rsr_a'), undefined, 'svc-api'],
  ];

  it.each(cases)('%s sends %s %s with the right key and body', async (_name, method, path, call, body, key) => {
    server.script(json(200, { ok: true }));
    await expect(call(both())).resolves.toEqual({ ok: true });
    const [seen] = server.seen;
    expect(server.seen).toHaveLength(1);
    expect(seen?.method).toBe(method);
    expect(seen?.url).toBe(path);
    expect(server.bodyOf(0)).toEqual(body);
    expect(seen?.headers.authorization).toBe(key === undefined ? undefined : `Bearer ${key}`);
    expect(seen?.headers['content-type']).toBe(body === undefined ? undefined : 'application/json');
    expect(seen?.headers.accept).toBe('application/json');
  });

  it('the cases above cover ENDPOINTS exactly, each sending the key ENDPOINTS names; every type named there is declared', () => {
    const templateOf = (method: string, url: string) => ENDPOINTS.filter((e) => e.method === method
      && new RegExp(`^${e.path.replace(/\{[a-z]+\}/g, '[^/?]+')}(\\?.*)?$`).test(url));
    const covered = new Set<string>();
    for (const [name, method, path, , , key] of cases) {
      const matches = templateOf(method, path);
      expect([name, matches.length]).toEqual([name, 1]);
      const endpoint = matches[0];
      if (endpoint === undefined) continue;
      covered.add(`${endpoint.method} ${endpoint.path}`);
      const expectedKey = { none: undefined, api: 'svc-api', either: 'svc-api', management: 'svc-mgmt-m' }[endpoint.key];
      expect([name, key]).toEqual([name, expectedKey]);
    }
    expect([...covered].sort()).toEqual(ENDPOINTS.map((e) => `${e.method} ${e.path}`).sort());
    const source = readFileSync(join(__dirname, '..', 'src', 'types.ts'), 'utf8');
    for (const endpoint of ENDPOINTS) {
      for (const typeName of [endpoint.request, endpoint.query, endpoint.response]) {
        if (typeName !== null) expect(source).toMatch(new RegExp(`export (interface|type) ${typeName}\\b`));
      }
    }
  });

  it('management endpoints fall back to apiKey (a management key passed as apiKey works); either-key endpoints to managementKey', async () => {
    server.script(json(200, {}));
    await new SearchGateway({ baseUrl: server.url, apiKey: 'svc-mgmt-only' }).keys.list();
    await new SearchGateway({ baseUrl: server.url, managementKey: 'svc-mgmt-only' }).credits();
    await new SearchGateway({ baseUrl: server.url, managementKey: 'svc-mgmt-only' }).search({ query: 'q', model: 'exa/fast' });
    expect(server.seen.map((r) => r.headers.authorization)).toEqual(['Bearer svc-mgmt-only', 'Bearer svc-mgmt-only', undefined]);
  });

  describe('options from the environment', () => {
    const saved = { ...process.env };
    afterEach(() => {
      for (const name of ['SVC_API_KEY', 'SVC_MANAGEMENT_KEY', 'SVC_BASE_URL']) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    });

    it('apiKey, managementKey and baseUrl default to SVC_API_KEY, SVC_MANAGEMENT_KEY and SVC_BASE_URL', async () => {
      process.env.SVC_API_KEY = 'svc-from-env';
      process.env.SVC_MANAGEMENT_KEY = 'svc-mgmt-from-env';
      process.env.SVC_BASE_URL = `${server.url}/`;
      server.script(json(200, {}));
      const client = new SearchGateway();
      expect(client.baseUrl).toBe(server.url);
      await client.search({ query: 'q', model: 'exa/fast' });
      await client.keys.list();
      expect(server.seen.map((r) => r.headers.authorization)).toEqual(['Bearer svc-from-env', 'Bearer svc-mgmt-from-env']);
    });

    it('explicit options win over the environment; without either the base URL is http://localhost:8080', () => {
      process.env.SVC_BASE_URL = 'http://elsewhere:1';
      expect(new SearchGateway({ baseUrl: 'https://api.example.com/prefix/' }).baseUrl).toBe('https://api.example.com/prefix');
      delete process.env.SVC_BASE_URL;
      expect(new SearchGateway().baseUrl).toBe(DEFAULT_BASE_URL);
      expect(DEFAULT_BASE_URL).toBe('http://localhost:8080');
    });

    it('bad options are refused at construction', () => {
      expect(() => new SearchGateway({ baseUrl: 'localhost:8080' })).toThrow(TypeError);
      expect(() => new SearchGateway({ baseUrl: 'ftp://x' })).toThrow('http or https');
      expect(() => new SearchGateway({ maxRetries: -1 })).toThrow(RangeError);
      expect(() => new SearchGateway({ maxRetries: 1.5 })).toThrow(RangeError);
      expect(() => new SearchGateway({ timeoutMs: 0 })).toThrow(RangeError);
      expect(new SearchGateway().maxRetries).toBe(2);
    });
  });

  it('a custom fetch is used, unbound', async () => {
    const calls: string[] = [];
    const client = new SearchGateway({
      baseUrl: 'http://sdk.invalid',
      fetch: async (url, init) => {
        calls.push(`${init.method} ${url}`);
        return new Response(JSON.stringify({ data: [], request_id: 'req_x' }), { status: 200 });
      },
    });
    await expect(client.models()).resolves.toEqual({ data: [], request_id: 'req_x' });
    expect(calls).toEqual(['GET http://sdk.invalid/v1/models']);
  });

  it('keys.iterate follows next_cursor across pages and yields every key once, in order', async () => {
    const key = (id: string): Partial<ApiKey> => ({ id });
    server.script(
      json(200, { data: [key('key_1'), key('key_2')], next_cursor: 'c1', request_id: 'r1' }),
      json(200, { data: [key('key_3'), key('key_4')], next_cursor: 'c2', request_id: 'r2' }),
      json(200, { data: [key('key_5')], next_cursor: null, request_id: 'r3' }),
    );
    const ids: string[] = [];
    for await (const k of both().keys.iterate({ limit: 2 })) ids.push(k.id);
    expect(ids).toEqual(['key_1', 'key_2', 'key_3', 'key_4', 'key_5']);
    expect(server.seen.map((r) => r.url)).toEqual(['/v1/keys?limit=2', '/v1/keys?limit=2&cursor=c1', '/v1/keys?limit=2&cursor=c2']);
  });

  it('the SDK\'s error codes are exactly the platform\'s closed list', () => {
    expect([...ERROR_CODES]).toEqual([...PLATFORM_ERROR_CODES]);
  });

  it('VERSION matches package.json', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string };
    expect(VERSION).toBe(pkg.version);
  });
});
