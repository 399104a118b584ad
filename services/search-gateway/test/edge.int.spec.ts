import { MODELS, RESEARCH_MODELS, RESEARCH_RULES } from '@svc/contracts';
import { isId } from '@svc/ids';
import { freePort } from '@svc/test-kit';
import { FakeAccountAdminGrpc, startGateway } from './harness';
import type { RunningGateway } from './harness';

describe('gateway edge: public routes, request ids, 404/405/400 (real Redis, in-process gateway)', () => {
  let grpc: FakeAccountAdminGrpc;
  let gateway: RunningGateway;

  beforeAll(async () => {
    grpc = new FakeAccountAdminGrpc();
    await grpc.start();
    gateway = await startGateway({
      ACCOUNT_ADMIN_GRPC_URL: `127.0.0.1:${grpc.port}`,
      ACCOUNT_ADMIN_HTTP_URL: `http://127.0.0.1:${await freePort()}`,
      BILLING_HTTP_URL: `http://127.0.0.1:${await freePort()}`,
      EXA_API_KEY: 'exa-platform-key',
      BYOK_FEE_PERCENT: '7',
    });
  });

  afterAll(async () => {
    await gateway.close();
    await grpc.stop();
  });

  async function getJson(path: string, init?: RequestInit): Promise<{ response: Response; body: Record<string, unknown> }> {
    const response = await fetch(gateway.url + path, init);
    return { response, body: (await response.json()) as Record<string, unknown> };
  }

  function expectRequestId(response: Response, bodyId: unknown): void {
    const header = response.headers.get('x-svc-request-id');
    expect(isId('request', header)).toBe(true);
    expect(bodyId).toBe(header);
  }

  it('GET /v1/models lists the whole catalog (search models, then extract models) with USD prices and availability from the platform keys', async () => {
    const { response, body } = await getJson('/v1/models');
    expect(response.status).toBe(200);
    expectRequestId(response, body.request_id);
    const data = body.data as Record<string, unknown>[];
    // Every search and extract model, then every research model (kind "research", decision 0065).
    expect(data.map((model) => model.id)).toEqual([...MODELS.map((model) => model.id), ...RESEARCH_MODELS.map((model) => model.id)]);
    expect(data.map((model) => model.kind)).toEqual([...MODELS.map((model) => model.kind), ...RESEARCH_MODELS.map(() => 'research')]);
    expect(data.find((model) => model.id === 'exa/auto')).toEqual({
      id: 'exa/auto', kind: 'search', provider: 'exa', variant: 'auto', description: 'Exa search, automatic mode', max_results: 100,
      pricing: { base_usd: 0.009, included_results: 10, per_result_usd: 0.00125, cache_price_usd: null, contents_usd: 0 }, available: true, status: 'operational',
      supported_filters: ['include_domains', 'exclude_domains', 'country', 'published_after', 'published_before'], supported_contents: ['none', 'text', 'highlights'],
    });
    expect(data.find((model) => model.id === 'exa/contents')).toEqual({
      id: 'exa/contents', kind: 'extract', provider: 'exa', variant: 'contents', description: expect.any(String), max_results: 20,
      pricing: { base_usd: 0, included_results: null, per_result_usd: 0, cache_price_usd: null, per_url_usd: 0.00125, url_block: 1 }, available: true, status: 'operational',
      supported_filters: [], supported_formats: ['text'], supported_options: ['max_age_s', 'query'],
    });
    expect(data.find((model) => model.id === 'brave/web')).toMatchObject({ pricing: { base_usd: 0.006, included_results: null, per_result_usd: 0 }, available: false, status: 'unavailable' });
    expect(data.filter((model) => model.available === true).map((model) => model.provider))
      .toEqual([...MODELS, ...RESEARCH_MODELS].filter((model) => model.provider === 'exa').map(() => 'exa'));
    expect(data.find((model) => model.id === 'exa/agent-auto')).toEqual({
      id: 'exa/agent-auto', kind: 'research', provider: 'exa', variant: 'agent-auto', description: RESEARCH_MODELS.find((m) => m.id === 'exa/agent-auto')?.description, max_results: 0,
      pricing: { base_usd: 0, included_results: null, per_result_usd: 0, cache_price_usd: null, metering: 'usage', unit_usd: 1.25, max_cost_usd: 125, min_cap_usd: 1.25 },
      available: true, supported_filters: [], status: 'operational', research_rules: RESEARCH_RULES.exa,
    });
    expect(data.find((model) => model.id === 'tavily/research-pro')).toMatchObject({
      kind: 'research', available: false, status: 'unavailable',
      pricing: { metering: 'credits', unit_usd: 0.01, max_cost_usd: 2.5, min_cap_usd: 2.5 }, research_rules: { not_started: expect.stringContaining('nothing') },
    });
    expect(data.find((model) => model.id === 'exa/agent-medium')).toMatchObject({ pricing: { metering: 'per_run', unit_usd: 0.125, max_cost_usd: 0.125, min_cap_usd: 0.125 } });
  });

  it('GET /v1/credits/pricing gives prices, purchase bounds and the BYOK settings', async () => {
    const { response, body } = await getJson('/v1/credits/pricing');
    expect(response.status).toBe(200);
    expectRequestId(response, body.request_id);
    expect(body.currency).toBe('USD');
    expect(body.purchase).toEqual({ min_usd: 5, max_usd: 10000 });
    expect(body.byok).toEqual({ enabled: true, fee_percent: 7 });
    expect((body.models as { id: string }[]).find((model) => model.id === 'tavily/basic')).toEqual({ id: 'tavily/basic', kind: 'search', base_usd: 0.01, included_results: null, per_result_usd: 0, cache_price_usd: null, contents_usd: 0 });
    expect((body.models as { id: string }[]).find((model) => model.id === 'tavily/research-mini')).toEqual({
      id: 'tavily/research-mini', kind: 'research', base_usd: 0, included_results: null, per_result_usd: 0, cache_price_usd: null, metering: 'credits', unit_usd: 0.01, max_cost_usd: 1.1, min_cap_usd: 1.1,
    });
    expect((body.models as { id: string }[]).find((model) => model.id === 'tavily/extract')).toEqual({
      id: 'tavily/extract', kind: 'extract', base_usd: 0, included_results: null, per_result_usd: 0, cache_price_usd: null, per_url_usd: 0.002, url_block: 5,
    });
  });

  it('every response gets a fresh request id, also in error bodies', async () => {
    const first = await getJson('/healthz');
    const second = await getJson('/healthz');
    expectRequestId(first.response, first.body.request_id);
    expect(second.body.request_id).not.toBe(first.body.request_id);
    const unauthorized = await getJson('/v1/credits', { headers: { 'x-svc-request-id': 'req_spoofed' } });
    expect(unauthorized.response.status).toBe(401);
    expectRequestId(unauthorized.response, (unauthorized.body.error as Record<string, unknown>).request_id);
  });

  it('an unknown path is a JSON 404 with a request id', async () => {
    const { response, body } = await getJson('/v1/nothing-here');
    expect(response.status).toBe(404);
    expect(body.error).toMatchObject({ code: 'not_found' });
    expectRequestId(response, (body.error as Record<string, unknown>).request_id);
  });

  it('a wrong method on a known path is a 405 naming the allowed methods', async () => {
    const { response, body } = await getJson('/v1/keys/key_1', { method: 'POST' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('DELETE, GET, HEAD, PATCH');
    expect(body.error).toMatchObject({ code: 'invalid_request' });
    expectRequestId(response, (body.error as Record<string, unknown>).request_id);
    const models = await fetch(`${gateway.url}/v1/models`, { method: 'DELETE' });
    expect(models.status).toBe(405);
    expect(models.headers.get('allow')).toBe('GET, HEAD');
  });

  it('a malformed query string is 400 invalid_request before anything else', async () => {
    const { response, body } = await getJson('/v1/models?limit=%E0%A4%A');
    expect(response.status).toBe(400);
    expect(body.error).toMatchObject({ code: 'invalid_request', message: 'the query string is malformed' });
  });

  it('readyz answers 200 while Redis and the search batch connection are up; healthz answers 200', async () => {
    // The batch connection opens beside the Redis client at start: a probe may see it still connecting.
    let ready = await getJson('/readyz');
    for (let i = 0; i < 50 && ready.response.status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      ready = await getJson('/readyz');
    }
    expect(ready.response.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready', checks: { redis: 'ok', search_batch: 'ok' } });
    expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
  });

  it('starts while Redis cannot be reached: readyz answers 503 naming both Redis checks, healthz 200', async () => {
    const unreachable = await startGateway({
      REDIS_URL: 'redis://127.0.0.1:1',
      ACCOUNT_ADMIN_GRPC_URL: `127.0.0.1:${grpc.port}`,
      ACCOUNT_ADMIN_HTTP_URL: `http://127.0.0.1:${await freePort()}`,
      BILLING_HTTP_URL: `http://127.0.0.1:${await freePort()}`,
      EXA_API_KEY: 'exa-platform-key',
    });
    try {
      const response = await fetch(`${unreachable.url}/readyz`);
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ status: 'unavailable', checks: { redis: 'down', search_batch: 'down' } });
      expect((await fetch(`${unreachable.url}/healthz`)).status).toBe(200);
    } finally {
      await unreachable.close();
    }
  });
});
