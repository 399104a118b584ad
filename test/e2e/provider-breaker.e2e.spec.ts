import { parsePrometheusText, sumSamples } from '@svc/metrics';
import { redisKeys } from '@svc/contracts';
import { bearer, call, newAccount, newApiKey, waitFor, grantCredits, useStack, SETTLING_STACK } from '@svc/test-kit';
import type { JsonResponse } from '@svc/test-kit';

/**
 * Provider health end to end (docs/decisions/0027): two gateways, account-admin, billing, the
 * ledger worker and the provider simulator, each its own process, one Redis and one
 * PostgreSQL. Exa fails as a whole (the simulator's outage control: every call hangs); once
 * the shared breaker opens, searches listing ["exa/auto", "brave/web"] answer from Brave on
 * both gateways without calling Exa and without any Exa charge; when the outage ends one probe
 * closes the breaker, and no customer's ledger holds it.
 */
const COOLDOWN_MS = 3_000;

describe('provider breaker across two gateways (Exa failing as a whole)', () => {
  const suite = useStack({
    ...SETTLING_STACK, name: 'breaker', redisDb: 14, gateways: [{}, {}],
    gatewayEnv: {
      PROVIDER_TIMEOUT_MS: '1000', PROVIDER_BREAKER_ENABLED: 'true', PROVIDER_BREAKER_TIMEOUT_STREAK: '3', PROVIDER_BREAKER_COOLDOWN_MS: String(COOLDOWN_MS),
      PROVIDER_HEALTH_FLUSH_MS: '100', PROVIDER_HEALTH_REFRESH_MS: '100', PROVIDER_DEGRADED_MIN_CALLS: '3',
    },
  }, { db: true });

  const exaCalls = async (): Promise<number> => ((await call('GET', `${suite.sim}/_sim/stats`)).body as { exa: { total: number } }).exa.total;
  const resetSim = async (): Promise<void> => {
    await call('POST', `${suite.sim}/_sim/reset`);
  };
  interface StatusBody {
    providers: { provider: string; status: string; breaker: { state: string; reason: string | null; retry_after_seconds: number | null }; last_5m: { calls: number; timeouts: number; success_rate: number | null; p95_ms: number | null } }[];
    models: { id: string; status: string }[];
  }
  const status = async (i: number): Promise<StatusBody> => {
    const response = await call('GET', `${suite.gateway(i)}/v1/status`);
    expect(response.status).toBe(200);
    return response.body as StatusBody;
  };
  const exaState = async (i: number): Promise<string | undefined> => (await status(i)).providers.find((p) => p.provider === 'exa')?.breaker.state;

  it('opens after Exa times out, both gateways skip Exa and answer from Brave charging only Brave, one probe closes it, no ledger holds the probe', async () => {
    const account = await newAccount(suite.gateway(0), 'breaker');
    await grantCredits(suite.stack, account.accountId, 10000000, { redis: suite.redis });
    const key = await newApiKey(suite.gateway(0), account.managementKey);
    let searches = 0;
    let calledProvider = 0;
    const search = async (i: number, models: string[]): Promise<JsonResponse> => {
      searches += 1;
      const response = await call('POST', `${suite.gateway(i)}/v1/search`, { body: { query: `outage ${searches}`, models, max_results: 5 }, headers: bearer(key.secret) });
      if (response.status === 200) calledProvider += 1;
      return response;
    };

    // Healthy: Exa answers; a Brave-only search gives Brave's price.
    expect((await search(0, ['exa/auto', 'brave/web'])).body.model).toBe('exa/auto');
    const braveOnly = await search(1, ['brave/web']);
    expect(braveOnly.status).toBe(200);
    const bravePrice = braveOnly.body.cost_usd as number;
    expect((await call('GET', `${suite.gateway(0)}/v1/models`)).body.data.find((m: { id: string }) => m.id === 'exa/auto').status).toBe('operational');

    // Exa fails as a whole: its calls time out (charged its base price, as the spec says) until the breaker opens.
    expect((await call('PUT', `${suite.sim}/_sim/outage/exa`, { body: { kind: 'timeout' } })).status).toBe(200);
    const before: JsonResponse[] = [];
    const opened = await waitFor('the breaker to open', async () => {
      const response = await search(before.length % 2, ['exa/auto', 'brave/web']);
      expect(response.status).toBe(200);
      before.push(response);
      const first = response.body.attempts[0] as { status: string; error: string };
      return first.status === 'skipped' ? response : undefined;
    }, { timeoutMs: 60_000 });
    const timedOut = before.filter((r) => r.body.attempts[0].status === 'error');
    expect(timedOut.length).toBeGreaterThanOrEqual(3);
    for (const r of timedOut) expect(r.body.attempts[0]).toMatchObject({ model: 'exa/auto', status: 'error', error: 'provider did not answer within 1000 ms', cost_usd: 0.009 });
    expect(opened.body.attempts[0]).toEqual({ model: 'exa/auto', source: 'platform', status: 'skipped', error: 'provider unavailable (failing)' });

    // Open: both gateways skip Exa; Exa is not called; each search costs Brave's price alone.
    await waitFor('both gateways to see it open', async () => ((await exaState(0)) === 'open' && (await exaState(1)) === 'open' ? true : undefined));
    await resetSim();
    for (const i of [0, 1, 0, 1]) {
      const response = await search(i, ['exa/auto', 'brave/web']);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ model: 'brave/web', cost_usd: bravePrice, attempts: [{ model: 'exa/auto', status: 'skipped', error: 'provider unavailable (failing)' }] });
    }
    expect(await exaCalls()).toBe(0);
    const onlyExa = await search(1, ['exa/auto']);
    expect(onlyExa.status).toBe(503);
    expect(onlyExa.body.error.code).toBe('overloaded');
    const retryAfter = Number(onlyExa.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(COOLDOWN_MS / 1000);
    for (const i of [0, 1]) {
      const models = (await call('GET', `${suite.gateway(i)}/v1/models`)).body.data as { id: string; kind: string; status: string }[];
      // The breaker measures search and extract calls: every Exa model of those kinds is unavailable.
      const measured = models.filter((m) => m.id.startsWith('exa/') && m.kind !== 'research');
      expect(measured.map((m) => m.kind)).toEqual(expect.arrayContaining(['search', 'extract']));
      expect(measured.map((m) => m.status)).toEqual(measured.map(() => 'unavailable'));
      // A research model shows whether its provider has a platform key (docs/decisions/0065).
      const research = models.filter((m) => m.id.startsWith('exa/') && m.kind === 'research');
      expect(research.length).toBeGreaterThan(0);
      expect(research.map((m) => m.status)).toEqual(research.map(() => 'operational'));
      expect(models.find((m) => m.id === 'brave/web')?.status).toBe('operational');
      // The status page's figures are read in the background (at most a few seconds old): wait for a read after the timeouts were flushed.
      const exa = await waitFor('the status figures to count the timeouts', async () => {
        const found = (await status(i)).providers.find((p) => p.provider === 'exa');
        return found !== undefined && found.last_5m.timeouts >= 3 ? found : undefined;
      });
      expect(exa).toMatchObject({ status: 'unavailable', breaker: { state: expect.stringMatching(/^(open|half_open)$/), reason: expect.any(String) } });
      expect(exa?.last_5m.timeouts).toBeGreaterThanOrEqual(3);
      expect(exa?.last_5m.p95_ms).toBeGreaterThanOrEqual(800);
    }

    // The outage ends: one probe (the platform's, not a search) closes the breaker; then Exa answers again.
    const okProbes = async (): Promise<number> => {
      const texts = await Promise.all(suite.stack.gateways.map(async (g) => (await fetch(`${g.metricsUrl}/metrics`)).text()));
      return texts.reduce((n, text) => n + sumSamples(parsePrometheusText(text), 'gateway_provider_probes_total', { provider: 'exa', result: 'ok' }), 0);
    };
    expect(await okProbes()).toBe(0);
    await call('DELETE', `${suite.sim}/_sim/outage/exa`);
    await resetSim();
    await waitFor('the probe to close the breaker on both gateways', async () => ((await exaState(0)) === 'closed' && (await exaState(1)) === 'closed' ? true : undefined), { timeoutMs: 30_000 });
    expect(await okProbes()).toBe(1);
    // No customer search reached Exa meanwhile: the probe was the only call (or none, had it left before the reset).
    expect(await exaCalls()).toBeLessThanOrEqual(1);
    const after = await search(1, ['exa/auto', 'brave/web']);
    expect(after.body).toMatchObject({ model: 'exa/auto', attempts: [] });
    const story = await status(0);
    expect(story.providers.find((p) => p.provider === 'exa')).toMatchObject({ status: 'degraded', breaker: { state: 'closed', reason: null, retry_after_seconds: null } });

    // The ledger: one charge per search that called a provider, all this account's, none for the probe.
    const rows = await waitFor('the worker to write every settlement', async () => {
      const result = await suite.db.query<{ account_id: string; n: string; sum: string }>(
        `SELECT account_id, count(*) AS n, sum(-amount_micros) AS sum FROM ledger_entries WHERE kind = 'search_charge' GROUP BY account_id`);
      const total = result.rows.reduce((n, row) => n + Number(row.n), 0);
      return total >= calledProvider ? result.rows : undefined;
    }, { timeoutMs: 30_000 });
    expect(rows.map((row) => [row.account_id, Number(row.n)])).toEqual([[account.accountId, calledProvider]]);
    const balance = await call('GET', `${suite.gateway(0)}/v1/credits`, { headers: bearer(account.managementKey) });
    expect(balance.body.balance_usd).toBeCloseTo(10 - Number(rows[0]?.sum) / 1_000_000, 6);
  }, 180_000);
});

/**
 * Only timeouts the provider caused count for the breaker (issue 45): a call whose timeout was
 * cut short by the search's own time (SEARCH_MAX_DURATION_MS) did not get PROVIDER_TIMEOUT_MS,
 * so its silence says nothing about the provider, and it is not a provider timeout for the
 * money either (refunded, no cost_usd: docs/api.md, "Money").
 */
describe('a provider call cut short by the search\'s own time limit', () => {
  const suite = useStack({
    ...SETTLING_STACK, name: 'breaker_cut', redisDb: 14,
    gatewayEnv: {
      // 1.6 s for the whole search: the first attempt gets its full 1 s, the fallback the 0.6 s left.
      PROVIDER_TIMEOUT_MS: '1000', SEARCH_MAX_DURATION_MS: '1600', HTTP_REQUEST_TIMEOUT_MS: '500',
      PROVIDER_BREAKER_ENABLED: 'true', PROVIDER_BREAKER_TIMEOUT_STREAK: '3', PROVIDER_HEALTH_FLUSH_MS: '100', PROVIDER_HEALTH_REFRESH_MS: '100',
    },
  }, { db: true });

  const providerStatus = async (provider: string): Promise<{ breaker: { state: string }; last_5m: { calls: number; timeouts: number } } | undefined> =>
    ((await call('GET', `${suite.gw}/v1/status`)).body.providers as { provider: string; breaker: { state: string }; last_5m: { calls: number; timeouts: number } }[]).find((p) => p.provider === provider);

  it('never opens the provider\'s breaker and is refunded; the provider timeouts before it open theirs and keep their base price', async () => {
    const account = await newAccount(suite.gw, 'cut');
    await grantCredits(suite.stack, account.accountId, 1_000_000, { redis: suite.redis });
    const key = await newApiKey(suite.gw, account.managementKey);
    const search = (query: string, models: string[]): Promise<JsonResponse> =>
      call('POST', `${suite.gw}/v1/search`, { body: { query, models, max_results: 5 }, headers: bearer(key.secret) });
    // Every provider hangs: Exa times out after its whole second, Brave's call gets what is left of the search's time.
    const replies = await Promise.all([1, 2, 3, 4].map((i) => search(`cut ${i} sim:*=timeout`, ['exa/auto', 'brave/web'])));
    for (const reply of replies) {
      expect(reply.status).toBe(502);
      const [exa, brave] = reply.body.error.attempts as Record<string, unknown>[];
      expect(exa).toEqual({ model: 'exa/auto', source: 'platform', status: 'error', error: 'provider did not answer within 1000 ms', cost_usd: 0.009 });
      expect(brave).toMatchObject({ model: 'brave/web', source: 'platform', status: 'error', error: expect.stringMatching(/^provider did not answer within \d+ ms$/) });
      expect(brave).not.toHaveProperty('cost_usd');
    }
    // Only Exa's base price was kept.
    await waitFor('the settlements to land', async () => (await suite.redis.get(redisKeys.accountBalance(account.accountId))) === String(1_000_000 - 4 * 9_000) ? true : undefined);
    // A call after them reaches the status page: every outcome recorded before it was flushed too.
    expect((await search('marker sim:tavily=error500', ['tavily/basic'])).status).toBe(502);
    const brave = await waitFor('a flush after the cut calls', async () => ((await providerStatus('tavily'))?.last_5m.calls ?? 0) >= 1 ? providerStatus('brave') : undefined);
    expect(brave).toMatchObject({ breaker: { state: 'closed' }, last_5m: { timeouts: 0 } });
    expect((await providerStatus('exa'))?.breaker.state).toMatch(/^(open|half_open)$/);
    const served = await search('after the cut calls', ['brave/web']);
    expect([served.status, served.body.model]).toEqual([200, 'brave/web']);
  }, 60_000);
});
