import { parsePrometheusText, sumSamples } from '@svc/metrics';
import { bearer, call, newAccount, newApiKey, waitFor, grantCredits, useStack, SETTLING_STACK } from '@svc/test-kit';

/**
 * Server-Timing on search answers, against the real stack with the simulator holding every
 * provider answer for SIM_BASE_LATENCY_MS. The only bounds are those the injected latency
 * implies: the upstream part is at least the injected latency per provider call made one
 * after the other, the gateway part is not negative, and the two add up to the answer's
 * own latency_ms (no timing threshold of the platform's speed).
 */
const INJECTED_MS = 150;

interface Timing {
  gateway: number;
  upstream: number;
}

function parseServerTiming(header: string | null): Timing {
  expect(header).toMatch(/^gateway;dur=\d+(\.\d)?, upstream;dur=\d+(\.\d)?$/);
  const out: Record<string, number> = {};
  for (const part of (header ?? '').split(',')) {
    const [name, durPart] = part.trim().split(';');
    out[name ?? ''] = Number(durPart?.replace('dur=', ''));
  }
  return { gateway: out.gateway ?? Number.NaN, upstream: out.upstream ?? Number.NaN };
}

describe('Server-Timing: the platform\'s own time and the providers\' on every search answer', () => {
  let apiKey: string;
  const suite = useStack({ ...SETTLING_STACK, name: 'servertiming', redisDb: 9, simulatorEnv: { SIM_BASE_LATENCY_MS: String(INJECTED_MS) } });

  beforeAll(async () => {
    const owner = await newAccount(suite.gw, 'timing');
    await grantCredits(suite.stack, owner.accountId, 10_000_000, { reason: 'server timing e2e' });
    await waitFor('the grant in the balance', async () => {
      const credits = await call('GET', `${suite.gw}/v1/credits`, { headers: bearer(owner.managementKey) });
      return credits.body?.balance_usd === 10 ? true : undefined;
    });
    apiKey = (await newApiKey(suite.gw, owner.managementKey, { name: 'timing' })).secret;
  });

  it('a search answered by one provider: upstream at least the injected latency; gateway + upstream is the answer\'s latency', async () => {
    const answer = await call('POST', `${suite.gw}/v1/search`, { body: { query: 'server timing', model: 'exa/fast' }, headers: bearer(apiKey) });
    expect(answer.status).toBe(200);
    const timing = parseServerTiming(answer.headers.get('server-timing'));
    expect(timing.upstream).toBeGreaterThanOrEqual(INJECTED_MS);
    expect(timing.gateway).toBeGreaterThanOrEqual(0);
    // latency_ms is read just before the header (rounded to 1 ms): the sum is never below it.
    expect(timing.gateway + timing.upstream).toBeGreaterThanOrEqual(answer.body.latency_ms - 1);
    // The upstream part is the provider call itself, so it is below the whole answer's time.
    expect(timing.upstream).toBeLessThanOrEqual(timing.gateway + timing.upstream);
  });

  it('a fallback after a failed model: two provider calls one after the other, upstream at least twice the injected latency', async () => {
    // The simulator answers Exa with a 500 (a directive in the query); Brave then answers.
    const answer = await call('POST', `${suite.gw}/v1/search`, {
      body: { query: 'fallback sim:exa=error500', models: ['exa/fast', 'brave/web'] },
      headers: bearer(apiKey),
    });
    expect(answer.status).toBe(200);
    expect(answer.body.model).toBe('brave/web');
    const timing = parseServerTiming(answer.headers.get('server-timing'));
    expect(timing.upstream).toBeGreaterThanOrEqual(2 * INJECTED_MS);
    expect(timing.gateway).toBeGreaterThanOrEqual(0);
  });

  it('an idempotent repeat (no provider call of its own) says upstream 0', async () => {
    const answer = await call('POST', `${suite.gw}/v1/search`, { body: { query: 'q', model: 'exa/fast', max_results: 1 }, headers: { ...bearer(apiKey), 'idempotency-key': 'timing-1' } });
    expect(answer.status).toBe(200);
    const repeat = await call('POST', `${suite.gw}/v1/search`, { body: { query: 'q', model: 'exa/fast', max_results: 1 }, headers: { ...bearer(apiKey), 'idempotency-key': 'timing-1' } });
    // An idempotent repeat is answered from the first reply: no provider call of its own.
    expect(repeat.status).toBe(200);
    expect(parseServerTiming(repeat.headers.get('server-timing')).upstream).toBe(0);
  });

  it('an MCP web_search call\'s HTTP answer carries Server-Timing too', async () => {
    const response = await fetch(`${suite.gw}/mcp`, {
      method: 'POST',
      headers: { ...bearer(apiKey), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'web_search', arguments: { query: 'mcp timing', model: 'exa/fast' } } }),
    });
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(text).toContain('"structuredContent"');
    const timing = parseServerTiming(response.headers.get('server-timing'));
    expect(timing.upstream).toBeGreaterThanOrEqual(INJECTED_MS);
    expect(timing.gateway).toBeGreaterThanOrEqual(0);
  });

  it('the metrics hold the platform\'s own time per search (gateway_search_overhead_seconds), below the total per search', async () => {
    const text = await (await fetch(`${suite.stack.gateways[0]?.metricsUrl}/metrics`)).text();
    const samples = parsePrometheusText(text);
    const count = sumSamples(samples, 'gateway_search_overhead_seconds_count');
    const overhead = sumSamples(samples, 'gateway_search_overhead_seconds_sum');
    const total = sumSamples(samples, 'gateway_search_duration_seconds_sum');
    expect(count).toBe(sumSamples(samples, 'gateway_search_duration_seconds_count'));
    expect(count).toBeGreaterThanOrEqual(4);
    // Every search above waited at least INJECTED_MS on a provider except the repeat: the
    // total exceeds the overhead by at least that much per provider-backed search.
    expect(total - overhead).toBeGreaterThanOrEqual((INJECTED_MS / 1000) * 3);
  });
});
