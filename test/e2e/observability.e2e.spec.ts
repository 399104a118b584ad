import { checkLogLine } from '@svc/logging';
import { parsePrometheusText, sumSamples } from '@svc/metrics';
import type { Sample } from '@svc/metrics';
import { bearer, call, newAccount, newApiKey, waitFor, grantCredits, useStack, SETTLING_STACK } from '@svc/test-kit';
import type { JsonResponse } from '@svc/test-kit';

/**
 * Metrics after a mixed run: every process of the stack is scraped on its own METRICS_PORT,
 * and the counters must equal what the run's replies said (searches by outcome, charges,
 * refusals, settlements in the ledger). exa/fast with max_results 10 costs 9,000 micro-USD.
 */
const PRICE_MICROS = 9_000;
/** ACCOUNT_MAX_IN_FLIGHT of the third gateway. */
const IN_FLIGHT_CAP = 2;

async function scrape(url: string): Promise<Sample[]> {
  const response = await fetch(`${url}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return parsePrometheusText(await response.text());
}

describe('metrics of every service after a mixed run', () => {
  /** Every secret and query text the run used: none may appear in any log line. */
  const mustNotLog: string[] = [];
  const suite = useStack({
    ...SETTLING_STACK, name: 'observability', redisDb: 12,
    // debug: every line any service writes during the run is checked against the log schema.
    logLevel: 'debug',
    gateways: [
      { env: { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' } },
      // A tight rate limit (429s) and no Tavily capacity (503 overloaded) on the second gateway.
      { env: { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '2', PROVIDER_MAX_IN_FLIGHT_TAVILY: '0' } },
      // A small account in-flight cap on the third (429 too_many_concurrent_requests); used
      // only by the last test, so the counts of the first are those of gateways 0 and 1.
      { env: { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000', ACCOUNT_MAX_IN_FLIGHT: String(IN_FLIGHT_CAP) } },
    ],
  }, { db: true });

  it('counts searches, charges, refusals and settlements exactly as the run did', async () => {
    const [gw0, gw1] = suite.stack.gateways.map((g) => g.url) as [string, string];
    const account = await newAccount(gw0, 'obs');
    await grantCredits(suite.stack, account.accountId, 12 * PRICE_MICROS, { redis: suite.redis });
    const key = await newApiKey(gw0, account.managementKey);
    // The rate limit is per key (kept in Redis): gateway 1's burst uses a key of its own.
    const burstKey = await newApiKey(gw0, account.managementKey);
    mustNotLog.push(key.secret, burstKey.secret, account.managementKey, suite.stack.operatorToken, 'plain 0', 'fallback', 'no capacity', 'burst 1', 'spend', 'broke');
    const replies: JsonResponse[] = [];
    const search = async (gateway: string, body: Record<string, unknown>): Promise<JsonResponse> => {
      const secret = gateway === gw1 ? burstKey.secret : key.secret;
      const reply = await call('POST', `${gateway}/v1/search`, { body: { max_results: 10, ...body }, headers: bearer(secret) });
      replies.push(reply);
      return reply;
    };

    // 6 answered searches on gateway 0, one of them after a failed first model (refunded).
    for (let i = 0; i < 5; i++) expect((await search(gw0, { query: `plain ${i}`, model: 'exa/fast' })).status).toBe(200);
    const fallback = await search(gw0, { query: 'sim:brave=error500 fallback', models: ['brave/web', 'exa/fast'] });
    expect(fallback.status).toBe(200);
    // Every provider failing: 502 all_providers_failed, nothing charged.
    expect((await search(gw0, { query: 'sim:*=error500 fails', model: 'exa/fast' })).body.error.code).toBe('all_providers_failed');
    // Tavily at zero capacity on gateway 1: 503 overloaded (a capacity refusal).
    const capacity = await search(gw1, { query: 'no capacity', model: 'tavily/basic' });
    expect(capacity.status).toBe(503);
    // A burst on gateway 1's limit of 2: some pass, the rest are 429 rate_limited.
    await Promise.all(Array.from({ length: 6 }, (_, i) => search(gw1, { query: `burst ${i}`, model: 'exa/fast' })));
    // Spend the rest of the balance on gateway 0, then 402 insufficient_credits.
    let paid = replies.filter((r) => r.status === 200).length;
    while (paid < 12) {
      expect((await search(gw0, { query: `spend ${paid}`, model: 'exa/fast' })).status).toBe(200);
      paid++;
    }
    expect((await search(gw0, { query: 'broke', model: 'exa/fast' })).body.error.code).toBe('insufficient_credits');
    // A webhook on a deployment without Stripe: 503 payment_disabled, counted as a webhook outcome.
    const webhook = await call('POST', `${gw0}/v1/credits/webhook`, { body: { id: 'evt_1' }, headers: { 'stripe-signature': 't=1,v1=00' } });
    expect(webhook.status).toBe(503);

    const byCode = (code: string): number => replies.filter((r) => r.status !== 200 && r.body?.error?.code === code).length;
    const ok = replies.filter((r) => r.status === 200);
    const chargedMicros = ok.reduce((sum, r) => sum + Math.round(Number(r.body.cost_usd) * 1_000_000), 0);
    expect(chargedMicros).toBe(12 * PRICE_MICROS);
    const rateLimited = byCode('rate_limited');
    expect(rateLimited).toBeGreaterThan(0);

    const gateways = (await Promise.all(suite.stack.gateways.map((g) => scrape(g.metricsUrl)))).flat();
    const g = (name: string, labels: Record<string, string> = {}): number => sumSamples(gateways, name, labels);
    expect(g('gateway_searches_total', { outcome: 'ok' })).toBe(ok.length);
    expect(g('gateway_searches_total', { outcome: 'ok', model: 'exa/fast' })).toBe(ok.length);
    expect(g('gateway_searches_total', { outcome: 'all_providers_failed', model: 'none' })).toBe(byCode('all_providers_failed'));
    expect(g('gateway_searches_total', { outcome: 'insufficient_credits' })).toBe(byCode('insufficient_credits'));
    expect(g('gateway_searches_total', { outcome: 'rate_limited' })).toBe(rateLimited);
    expect(g('gateway_searches_total')).toBe(replies.length);
    expect(g('gateway_search_duration_seconds_count')).toBe(replies.length);
    expect(g('gateway_search_refusals_total', { reason: 'rate_limit' })).toBe(rateLimited);
    expect(g('gateway_search_refusals_total', { reason: 'capacity' })).toBe(1);
    expect(g('gateway_search_refusals_total', { reason: 'in_flight' })).toBe(0);
    expect(g('gateway_charged_micros_total')).toBe(chargedMicros);
    expect(g('gateway_search_attempts_total', { provider: 'brave', source: 'platform', status: 'error', reason: 'server_error' })).toBe(1);
    expect(g('gateway_search_attempts_total', { provider: 'tavily', status: 'skipped', reason: 'capacity' })).toBe(1);
    expect(g('gateway_search_attempts_total', { provider: 'exa', status: 'success' })).toBe(ok.length);
    // Provider calls: the successes, the fallback's brave failure and the failed search's exa call.
    expect(g('gateway_provider_request_duration_seconds_count', { provider: 'exa', outcome: 'ok' })).toBe(ok.length);
    expect(g('gateway_provider_request_duration_seconds_count', { provider: 'brave', outcome: 'server_error' })).toBe(1);
    expect(g('http_requests_total', { route: '/v1/search', status: '429' })).toBe(rateLimited);
    expect(g('http_requests_total', { route: '/v1/search' })).toBe(replies.length);
    expect(g('gateway_key_cache_total', { result: 'hit' }) + g('gateway_key_cache_total', { result: 'miss' })).toBeGreaterThanOrEqual(replies.length);
    expect(g('gateway_key_cache_total', { result: 'fill' })).toBeGreaterThan(0);
    expect(g('gateway_redis_round_trips_total', { kind: 'awaited' })).toBeGreaterThanOrEqual(replies.length - rateLimited);
    // No account or key id is ever a label.
    for (const sample of gateways) {
      for (const value of Object.values(sample.labels)) {
        expect(value).not.toContain(account.accountId);
        expect(value).not.toContain(key.id);
        expect(value).not.toContain(burstKey.id);
      }
    }

    // The ledger worker: every charged search written once, the same money, nothing left over.
    const settledSearches = ok.length + byCode('all_providers_failed');
    await waitFor('every settlement in the ledger', async () => {
      const rows = await suite.db.query<{ n: string }>('SELECT count(*) AS n FROM settlements WHERE account_id = $1', [account.accountId]);
      return Number(rows.rows[0]?.n) >= settledSearches ? true : undefined;
    }, { timeoutMs: 30_000 });
    const worker = await scrape(suite.stack.worker?.metricsUrl ?? '');
    expect(sumSamples(worker, 'ledger_settlements_total', { result: 'written' })).toBe(settledSearches);
    expect(sumSamples(worker, 'ledger_charged_micros_total')).toBe(chargedMicros);
    expect(sumSamples(worker, 'ledger_drain_lag_seconds_count')).toBeGreaterThanOrEqual(settledSearches);
    expect(sumSamples(worker, 'ledger_backlog_records')).toBe(0);
    expect(sumSamples(worker, 'ledger_backlog_oldest_age_seconds')).toBe(0);
    expect(worker.some((s) => s.name === 'reconciliation_drift_micros')).toBe(true);

    const billing = await scrape(suite.stack.billing.metricsUrl);
    expect(sumSamples(billing, 'http_requests_total', { route: '/operator/accounts/:account_id/grants', status: '201' })).toBe(1);
    expect(sumSamples(billing, 'billing_stripe_webhooks_total', { outcome: 'payment_disabled' })).toBe(1);
    expect(sumSamples(billing, 'billing_refunded_micros_total')).toBe(0);

    const accountAdmin = await scrape(suite.stack.accountAdmin.metricsUrl);
    expect(sumSamples(accountAdmin, 'grpc_server_handled_total', { code: 'OK' })).toBeGreaterThan(0);
    expect(sumSamples(accountAdmin, 'http_requests_total', { route: '/dashboard/api/signup', status: '201' })).toBe(1);
    for (const samples of [gateways, worker, billing, accountAdmin]) {
      expect(samples.some((s) => s.name === 'process_cpu_seconds_total')).toBe(true);
    }
  }, 120_000);

  it('writes every log line of every service in the one schema, a search line with its account, key, models, outcome and cost', () => {
    const sections = suite.stack.logs().split(/^--- /m).filter((section) => section !== '');
    const problems: string[] = [];
    const searchLines: Record<string, unknown>[] = [];
    let lines = 0;
    for (const section of sections) {
      const [name = '', ...rest] = section.split('\n');
      if (name === 'provider-sim') continue;
      for (const line of rest) {
        if (line.trim() === '') continue;
        lines++;
        const problem = checkLogLine(line);
        for (const text of mustNotLog) if (line.includes(text)) problems.push(`${name}: a secret or query text in: ${line.slice(0, 300)}`);
        if (problem !== null) {
          problems.push(`${name}: ${problem}: ${line.slice(0, 300)}`);
          continue;
        }
        const parsed = JSON.parse(line) as Record<string, unknown>;
        if (parsed.route === '/v1/search' && parsed.msg === 'request') searchLines.push(parsed);
      }
    }
    expect(problems).toEqual([]);
    expect(lines).toBeGreaterThan(40);
    const services = new Set(sections.map((s) => s.split('\n')[0]));
    expect([...services].sort()).toEqual(['account-admin', 'billing', 'ledger-worker', 'provider-sim', 'search-gateway-0', 'search-gateway-1', 'search-gateway-2']);
    const answered = searchLines.filter((line) => line.status === 200);
    expect(answered.length).toBe(12);
    for (const line of answered) {
      expect(line).toMatchObject({ account_id: expect.any(String), key_id: expect.any(String), model: expect.any(String), outcome: 'ok', cost_usd: 0.009 });
      expect((line.models as string[]).length).toBeGreaterThan(0);
    }
    const fallback = answered.find((line) => (line.models as string[]).length === 2);
    expect(fallback?.models).toEqual(['brave/web', 'exa/fast']);
    const refused = searchLines.filter((line) => line.outcome === 'rate_limited');
    expect(refused.length).toBeGreaterThan(0);
    for (const line of refused) expect(line).toMatchObject({ status: 429, account_id: expect.any(String), key_id: expect.any(String), cost_usd: 0 });
  });

  it('counts the account in-flight cap\'s refusals: gateway_search_refusals_total{reason="in_flight"} is the number of 429 too_many_concurrent_requests', async () => {
    const gw2 = suite.stack.gateways[2];
    if (gw2 === undefined) throw new Error('no third gateway');
    const gw0 = suite.stack.gateways[0]?.url ?? '';
    // An account of its own: the cap counts the account's searches in flight on every gateway.
    const account = await newAccount(gw0, 'obs-in-flight');
    await grantCredits(suite.stack, account.accountId, 1000000, { redis: suite.redis, reason: 'e2e in-flight cap' });
    const key = await newApiKey(gw0, account.managementKey);
    const before = sumSamples(await scrape(gw2.metricsUrl), 'gateway_search_refusals_total', { reason: 'in_flight' });
    expect(before).toBe(0);

    // Six searches at once, each held 300 ms by Exa (the simulator's slow300): the first
    // IN_FLIGHT_CAP are admitted, the others find the account at its cap.
    const replies = await Promise.all(Array.from({ length: 3 * IN_FLIGHT_CAP }, (_, i) =>
      call('POST', `${gw2.url}/v1/search`, { body: { query: `sim:exa=slow300 concurrent ${i}`, model: 'exa/fast', max_results: 10 }, headers: bearer(key.secret) })));
    const refused = replies.filter((r) => r.status === 429 && r.body?.error?.code === 'too_many_concurrent_requests');
    const answered = replies.filter((r) => r.status === 200);
    expect(refused.length + answered.length).toBe(replies.length);
    expect(refused.length).toBeGreaterThan(0);
    expect(answered.length).toBeGreaterThan(0);
    expect(answered.length).toBeLessThanOrEqual(IN_FLIGHT_CAP);
    for (const reply of refused) expect(reply.headers.get('retry-after')).toBe('1');

    const samples = await scrape(gw2.metricsUrl);
    expect(sumSamples(samples, 'gateway_search_refusals_total', { reason: 'in_flight' })).toBe(refused.length);
    expect(sumSamples(samples, 'gateway_searches_total', { outcome: 'too_many_concurrent_requests' })).toBe(refused.length);
    expect(sumSamples(samples, 'gateway_searches_total', { outcome: 'ok' })).toBe(answered.length);
    expect(sumSamples(samples, 'http_requests_total', { route: '/v1/search', status: '429' })).toBe(refused.length);
    // The other refusals stay at zero: the cap is the only reason here.
    for (const reason of ['rate_limit', 'capacity', 'overloaded']) {
      expect([reason, sumSamples(samples, 'gateway_search_refusals_total', { reason })]).toEqual([reason, 0]);
    }
  });

  it('serves metrics only on the metrics port, and nothing else there', async () => {
    const gateway = suite.stack.gateways[0];
    if (gateway === undefined) throw new Error('no gateway');
    expect((await call('GET', `${gateway.url}/metrics`)).status).toBe(404);
    expect((await call('GET', `${suite.stack.billing.operatorUrl}/metrics`)).status).toBe(404);
    expect((await fetch(`${gateway.metricsUrl}/v1/search`)).status).toBe(404);
  });
});
