import { providerHealthKeys } from '@svc/contracts';
import type { Provider } from '@svc/contracts';
import { closeRedisClient, createRedisClient } from '@svc/redis-client';
import type { RedisClient } from '@svc/redis-client';
import { REDIS_TOPOLOGIES, redisUrl, startRedisCluster } from '@svc/test-kit';
import type { RedisCluster } from '@svc/test-kit';
import pino from 'pino';
import type { ProviderOutcome, ProviderSearchRequest } from '../src/providers';
import { ProviderHealth, statusBody } from '../src/provider-health';
import type { ProviderHealthSettings } from '../src/provider-health';
import { statusInputs } from '../src/provider-health/health.status';

const SETTINGS: ProviderHealthSettings = {
  breakerEnabled: true,
  windowMs: 30_000,
  minCalls: 20,
  failurePercent: 50,
  timeoutStreak: 5,
  cooldownMs: 30_000,
  flushMs: 60_000,
  refreshMs: 60_000,
  probeQuery: 'health probe',
  probeTimeoutMs: 1_000,
  degradedFailurePercent: 10,
  degradedMinCalls: 10,
};

/** Platform keys and adapters whose answer each test sets; every probe is recorded. */
class FakeProviders {
  readonly probes: ProviderSearchRequest[] = [];
  answer: ProviderOutcome = { ok: true, results: [] };
  /** Resolves the probes only when released (to hold one while another gateway tries). */
  gate: Promise<void> = Promise.resolve();

  adapter(_provider: Provider): { search(request: ProviderSearchRequest): Promise<ProviderOutcome> } {
    return {
      search: async (request) => {
        this.probes.push(request);
        await this.gate;
        return this.answer;
      },
    };
  }

  platformKey(provider: Provider): string | undefined {
    return provider === 'tavily' ? undefined : `platform-${provider}`;
  }
}

const silent = pino({ level: 'silent' });
const TEST_DB = 13;

/**
 * Provider health on a real Redis (single and Cluster): two ProviderHealth instances are two
 * gateways sharing the window, the breaker and the probe lock. Each test has its own clock
 * range, so its time buckets are its own.
 */
describe.each(REDIS_TOPOLOGIES)('provider health shared by gateways (%s Redis)', (topology) => {
  let cluster: RedisCluster | undefined;
  let redis: RedisClient;
  // Hour-aligned, and new on every run: the buckets of an earlier run (kept an hour) are not this run's.
  let clockBase = Date.UTC(2031, 0, 1) + Math.floor(Math.random() * 1_000_000) * 1_000 * 3_600_000;
  let now = 0;
  let providers: FakeProviders;

  const gateway = (settings: Partial<ProviderHealthSettings> = {}): ProviderHealth =>
    new ProviderHealth(redis, providers, { ...SETTINGS, ...settings }, silent, () => now);

  beforeAll(async () => {
    if (topology === 'cluster') cluster = await startRedisCluster();
    redis = createRedisClient(cluster === undefined ? { url: redisUrl(TEST_DB), cluster: false } : { url: cluster.url, cluster: true });
  }, 60_000);

  afterAll(async () => {
    if (redis !== undefined) await closeRedisClient(redis);
    await cluster?.stop();
  });

  beforeEach(async () => {
    clockBase += 10 * 3_600_000;
    now = clockBase;
    providers = new FakeProviders();
    for (const provider of ['brave', 'exa', 'tavily'] as const) {
      await redis.del(providerHealthKeys.breaker(provider));
      await redis.del(providerHealthKeys.probeLock(provider));
    }
  });

  const record = (health: ProviderHealth, count: number, outcome: Parameters<ProviderHealth['record']>[3], source: 'platform' | 'byok' = 'platform', latencyMs = 120): void => {
    for (let i = 0; i < count; i++) health.record('exa', source, 'exa/auto', outcome, latencyMs);
  };

  it('20 calls in the window with half failing open the breaker on every gateway; 19 do not', async () => {
    const a = gateway();
    const b = gateway();
    record(a, 9, 'ok');
    record(a, 10, 'server_error');
    await a.flush();
    await b.refresh();
    expect(a.blockedMs('exa')).toBe(-1);
    expect(b.blockedMs('exa')).toBe(-1);
    now += 5_000;
    record(b, 1, 'rate_limited');
    await b.flush();
    expect(b.blockedMs('exa')).toBe(30_000);
    expect(b.breaker('exa')).toMatchObject({ state: 'open', reason: '11 of 20 calls failed' });
    expect(a.blockedMs('exa')).toBe(-1);
    now += 1_000;
    await a.refresh();
    expect(a.blockedMs('exa')).toBe(29_000);
    expect(a.blockedMs('brave')).toBe(-1);
  });

  it('calls older than the window do not count', async () => {
    const a = gateway();
    record(a, 10, 'server_error');
    await a.flush();
    now += 40_000;
    record(a, 10, 'server_error');
    await a.flush();
    expect(a.blockedMs('exa')).toBe(-1);
  });

  it('5 timeouts in a row across two gateways open it; a success between them starts the count again', async () => {
    const a = gateway();
    const b = gateway();
    record(a, 3, 'timeout');
    await a.flush();
    record(b, 1, 'ok');
    record(b, 1, 'timeout');
    await b.flush();
    record(a, 3, 'timeout');
    await a.flush();
    expect(a.blockedMs('exa')).toBe(-1);
    record(b, 1, 'timeout');
    await b.flush();
    expect(b.breaker('exa')).toMatchObject({ state: 'open', reason: '5 timeouts in a row' });
  });

  it('an account\'s own key failing never opens the platform\'s breaker', async () => {
    const a = gateway();
    record(a, 40, 'timeout', 'byok');
    await a.flush();
    expect(a.blockedMs('exa')).toBe(-1);
    expect(await redis.hget(providerHealthKeys.breaker('exa'), 'state')).toBeNull();
  });

  it('with the breaker off nothing opens, and the outcomes are still counted', async () => {
    const a = gateway({ breakerEnabled: false });
    record(a, 30, 'timeout');
    await a.flush();
    expect(a.blockedMs('exa')).toBe(-1);
    const figures = await a.loadFigures();
    expect(figures.models.get('exa/auto')?.last5m).toMatchObject({ calls: 30, timeout: 30 });
  });

  it('after the cool-down exactly one probe goes out across gateways; its answer closes the breaker and empties the window', async () => {
    const a = gateway();
    const b = gateway();
    record(a, 5, 'timeout');
    await a.flush();
    expect(a.blockedMs('exa')).toBe(30_000);
    now += 10_000;
    await Promise.all([a.refresh(), b.refresh()]);
    expect(providers.probes).toHaveLength(0);
    now += 20_000;
    expect(a.blockedMs('exa')).toBe(0);
    let release = (): void => undefined;
    providers.gate = new Promise((resolve) => { release = resolve; });
    const probes = Promise.all([a.probe('exa'), b.probe('exa'), a.probe('exa')]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    expect((await probes).filter(Boolean)).toHaveLength(1);
    expect(providers.probes).toHaveLength(1);
    expect(providers.probes[0]).toMatchObject({ query: 'health probe', maxResults: 1, apiKey: 'platform-exa' });
    await Promise.all([a.refresh(), b.refresh()]);
    expect([a.blockedMs('exa'), b.blockedMs('exa')]).toEqual([-1, -1]);
    expect(await redis.hget(providerHealthKeys.breaker('exa'), 'state')).toBe('closed');
    // The window starts over: one more timeout does not reopen it.
    record(a, 1, 'timeout');
    await a.flush();
    expect(a.blockedMs('exa')).toBe(-1);
    expect(a.probes.exa.ok + b.probes.exa.ok).toBe(1);
  });

  it('a failed probe keeps it open for another cool-down; the next probe waits for the lock to expire', async () => {
    const a = gateway();
    record(a, 5, 'timeout');
    await a.flush();
    now += 30_000;
    providers.answer = { ok: false, kind: 'timeout', error: 'provider timed out', status: null };
    expect(await a.probe('exa')).toBe(true);
    expect(a.breaker('exa')).toMatchObject({ state: 'open', openUntilMs: now + 30_000, reason: 'the probe failed' });
    expect(await a.probe('exa')).toBe(false);
    expect(providers.probes).toHaveLength(1);
    expect(a.probes.exa).toEqual({ ok: 0, failed: 1 });
  });

  it('an operator can force it open (skipped, no probe) or closed (called, never opened)', async () => {
    const a = gateway();
    await redis.hset(providerHealthKeys.breaker('exa'), 'force', 'open');
    await a.refresh();
    expect(a.blockedMs('exa')).toBe(30_000);
    const held = statusBody(statusInputs(a, { brave: true, exa: true, tavily: true }, await a.loadFigures(), now)) as { providers: { provider: string; status: string; breaker: object }[] };
    expect(held.providers.find((p) => p.provider === 'exa')).toMatchObject({ status: 'unavailable', breaker: { state: 'open', forced: 'open', retry_after_seconds: null } });
    now += 60_000;
    await a.refresh();
    expect(providers.probes).toHaveLength(0);
    await redis.hset(providerHealthKeys.breaker('exa'), 'force', 'closed');
    record(a, 30, 'timeout');
    await a.flush();
    expect(a.blockedMs('exa')).toBe(-1);
    await redis.hdel(providerHealthKeys.breaker('exa'), 'force');
    await a.refresh();
    expect(a.blockedMs('exa')).toBe(-1);
  });

  it('the status page: per model and provider, the success rate and p50/p95 over 5 minutes and an hour', async () => {
    const a = gateway();
    for (let i = 0; i < 18; i++) a.record('exa', 'platform', 'exa/auto', 'ok', 90);
    a.record('exa', 'platform', 'exa/auto', 'ok', 700);
    a.record('exa', 'platform', 'exa/auto', 'server_error', 3_000);
    a.record('exa', 'platform', 'exa/fast', 'ok', 40);
    await a.flush();
    now += 30 * 60_000;
    a.record('exa', 'platform', 'exa/auto', 'ok', 90);
    await a.flush();
    now += 1_000;
    const figures = await a.loadFigures();
    const body = statusBody(statusInputs(a, { brave: true, exa: true, tavily: false }, figures, now)) as {
      providers: { provider: string; status: string; breaker: { state: string }; last_5m: object; last_1h: object }[];
      models: { id: string; status: string; last_5m: object; last_1h: object }[];
    };
    const auto = body.models.find((m) => m.id === 'exa/auto');
    expect(auto?.last_5m).toEqual({ calls: 1, success_rate: 1, timeouts: 0, server_errors: 0, rate_limited: 0, p50_ms: 100, p95_ms: 100 });
    expect(auto?.last_1h).toEqual({ calls: 21, success_rate: 0.9524, timeouts: 0, server_errors: 1, rate_limited: 0, p50_ms: 100, p95_ms: 800 });
    const exa = body.providers.find((p) => p.provider === 'exa');
    expect(exa).toMatchObject({ status: 'operational', breaker: { state: 'closed' } });
    expect(exa?.last_1h).toMatchObject({ calls: 22, server_errors: 1 });
    expect(body.providers.find((p) => p.provider === 'tavily')?.status).toBe('unavailable');
  });
});
