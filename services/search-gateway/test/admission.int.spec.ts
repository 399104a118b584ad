import type { FastifyInstance } from 'fastify';
import Redis from 'ioredis';
import { findModel, redisKeys } from '@svc/contracts';
import type { KeyRecord, LimitReset, ModelSpec } from '@svc/contracts';
import { newId } from '@svc/ids';
import { freePort, redisUrl, waitFor } from '@svc/test-kit';
import pino from 'pino';
import { buildSimulator } from '../../../tools/provider-sim/src/server';
import { MoneyRepository } from '../src/money/money.repository';
import type { AdmissionRequest } from '../src/money/money.ops';
import { moneyScope } from '../src/money/money.scope';
import type { MoneyScope } from '../src/money/money.scope';
import { ProviderRegistry } from '../src/providers';
import { SearchMetrics, SearchService } from '../src/search';
import type { SearchReply } from '../src/search';

/**
 * The admission script on the real Redis (database 11): the key's rate (GCRA on Redis's
 * clock), the account's in-flight leases, and that a refusal writes nothing. Then the key's
 * credit-limit periods through SearchService on a controllable clock.
 */
const DB = 11;
const PRICE = 9_000; // exa/fast, max_results 10

function keyRecord(accountId: string, limitMicros: number | null, limitReset: LimitReset | null): KeyRecord {
  return { id: newId('apiKey'), accountId, kind: 'api', disabled: false, expiresAtMs: null, limitMicros, limitReset, version: 1, deleted: false };
}

function exaFast(): ModelSpec {
  const model = findModel('exa/fast');
  if (model === undefined) throw new Error('exa/fast is not in the catalog');
  return model;
}

describe('the admission script (real Redis)', () => {
  let redis: Redis;
  let money: MoneyRepository;

  beforeAll(() => {
    redis = new Redis(redisUrl(DB));
    money = new MoneyRepository(redis, { url: redisUrl(DB), cluster: false });
  });

  afterAll(() => redis.disconnect());

  async function fundedScope(record: KeyRecord, requestId = newId('request')): Promise<MoneyScope> {
    await redis.set(redisKeys.accountBalance(record.accountId), '1000000');
    return moneyScope(record, requestId, null, Date.now(), 60_000);
  }

  const admitOnce = (scope: MoneyScope, admission: AdmissionRequest) =>
    money.admitFirst(scope, [], { provider: 'exa', leaseId: `${scope.requestId}:0`, cap: 100_000, lifetimeMs: 60_000 }, { index: 0, amountMicros: PRICE }, admission);

  /** Every account key the scripts may write, with its value, to show that a refusal wrote nothing. */
  async function accountState(accountId: string): Promise<Record<string, string>> {
    const keys = (await redis.keys(`${redisKeys.accountTag(accountId)}*`)).sort();
    const state: Record<string, string> = {};
    for (const key of keys) {
      const type = await redis.type(key);
      state[key] = type === 'zset' ? JSON.stringify(await redis.zrange(key, '0', '-1')) : type === 'hash' ? JSON.stringify(await redis.hgetall(key)) : String(await redis.get(key));
    }
    return state;
  }

  it('admits exactly the burst, counting remaining down to 0, then refuses with the delay to the next token and writes nothing', async () => {
    const record = keyRecord(newId('account'), null, null);
    const admission = { ratePerSecond: 1, burst: 5, accountCap: 1_000, leaseTtlMs: 60_000 };
    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) {
      const { admission: verdict } = await admitOnce(await fundedScope(record), admission);
      if (verdict.kind !== 'admitted') throw new Error(`request ${i} was refused: ${verdict.kind}`);
      expect(verdict.verdict.kind).toBe('ok');
      remaining.push(verdict.remaining);
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
    const before = await accountState(record.accountId);
    const refusedScope = moneyScope(record, newId('request'), null, Date.now(), 60_000);
    const { admission: refused } = await admitOnce(refusedScope, admission);
    expect(refused.kind).toBe('rate_limited');
    if (refused.kind !== 'rate_limited') return;
    expect(refused.retryAfterMs).toBeGreaterThan(0);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(1_000);
    expect(await accountState(record.accountId)).toEqual(before);
    expect(await redis.zscore(redisKeys.providerLeases('exa'), `${refusedScope.requestId}:0`)).not.toBeNull();
  });

  it('refuses past the account cap without taking a rate token, and admits again once a lease is given back', async () => {
    const accountId = newId('account');
    const first = keyRecord(accountId, null, null);
    const other = keyRecord(accountId, null, null);
    const admission = { ratePerSecond: 1, burst: 10, accountCap: 3, leaseTtlMs: 60_000 };
    const scopes: MoneyScope[] = [];
    for (let i = 0; i < 3; i++) {
      const scope = await fundedScope(i === 0 ? first : other);
      expect((await admitOnce(scope, admission)).admission.kind).toBe('admitted');
      scopes.push(scope);
    }
    expect(await redis.zcard(redisKeys.accountInFlight(accountId))).toBe(3);
    const before = await accountState(accountId);
    const { admission: busy } = await admitOnce(moneyScope(first, newId('request'), null, Date.now(), 60_000), admission);
    expect(busy.kind).toBe('too_many');
    // Nothing written: not even the rate token of the key that was refused.
    expect(await accountState(accountId)).toEqual(before);

    const done = scopes[0];
    if (done === undefined) throw new Error('no scope');
    await money.finish(done, [{ kind: 'release', index: 0, keepMicros: 0 }, { kind: 'unleaseAccount' }], null);
    const { admission: again } = await admitOnce(moneyScope(first, newId('request'), null, Date.now(), 60_000), admission);
    expect(again).toMatchObject({ kind: 'admitted', remaining: 8 });
  });

  it('a lease nobody gives back expires on its own after the lease lifetime (Redis clock)', async () => {
    const record = keyRecord(newId('account'), null, null);
    const admission = { ratePerSecond: 1_000, burst: 1_000, accountCap: 1, leaseTtlMs: 300 };
    const held = await fundedScope(record);
    expect((await admitOnce(held, admission)).admission.kind).toBe('admitted');
    const [score] = await redis.zmscore(redisKeys.accountInFlight(record.accountId), held.requestId);
    const [seconds, micros] = await redis.time();
    const nowMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    expect(Number(score)).toBeGreaterThan(nowMs);
    expect(Number(score)).toBeLessThanOrEqual(nowMs + 300);
    expect((await admitOnce(moneyScope(record, newId('request'), null, Date.now(), 60_000), admission)).admission.kind).toBe('too_many');
    await waitFor('the abandoned lease to expire', async () =>
      (await admitOnce(moneyScope(record, newId('request'), null, Date.now(), 60_000), admission)).admission.kind === 'admitted' ? true : undefined);
  });

  it('the next attempt extends the lease by the lease lifetime, in the same round trip as its reservation', async () => {
    const record = keyRecord(newId('account'), null, null);
    const scope = await fundedScope(record);
    expect((await admitOnce(scope, { ratePerSecond: 10, burst: 10, accountCap: 10, leaseTtlMs: 1_000 })).admission.kind).toBe('admitted');
    const key = redisKeys.accountInFlight(record.accountId);
    const before = Number(await redis.zscore(key, scope.requestId));
    const { verdict } = await money.admit(scope, [], { provider: 'exa', leaseId: `${scope.requestId}:1`, cap: 100_000, lifetimeMs: 60_000 }, { index: 1, amountMicros: PRICE }, 60_000);
    expect(verdict.kind).toBe('ok');
    expect(Number(await redis.zscore(key, scope.requestId))).toBeGreaterThan(before + 50_000);
  });
});

describe('key credit-limit periods on a controllable clock (SearchService, real Redis, simulator)', () => {
  let redis: Redis;
  let sim: FastifyInstance;
  let providers: ProviderRegistry;
  let nowMs = 0;
  let service: SearchService;

  beforeAll(async () => {
    redis = new Redis(redisUrl(DB));
    sim = buildSimulator();
    const port = await freePort();
    await sim.listen({ port, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${port}`;
    providers = new ProviderRegistry({
      brave: { baseUrl: `${base}/brave/res/v1` },
      exa: { baseUrl: `${base}/exa`, apiKey: 'sim-exa-key' },
      tavily: { baseUrl: `${base}/tavily` },
    });
    service = new SearchService(
      providers,
      new MoneyRepository(redis, { url: redisUrl(DB), cluster: false }),
      {
        providerTimeoutMs: 5_000,
        maxInFlight: { brave: 100, exa: 100, tavily: 100 },
        leaseMarginMs: 5_000,
        idempotencyPollMs: 25,
        admission: { ratePerSecond: 1_000, burst: 1_000, accountCap: 100, leaseTtlMs: 10_000 },
        now: () => nowMs,
      },
      new SearchMetrics(),
      pino({ level: 'silent' }),
    );
  });

  afterAll(async () => {
    await providers.close();
    await sim.close();
    redis.disconnect();
  });

  const searchAt = async (record: KeyRecord, atMs: number): Promise<SearchReply> => {
    nowMs = atMs;
    const result = await service.search({ record, requestId: newId('request'), request: { query: 'period', models: [exaFast()], maxResults: 10, cache: 'default', cacheMaxAgeS: null, contents: 'none', maxCharsPerResult: 5_000, maxTotalChars: null }, idempotency: null, elapsedMs: () => 1 });
    if (result.kind !== 'reply') throw new Error(`refused: ${result.code}`);
    return result;
  };

  const usage = async (record: KeyRecord, periodStartMs: number): Promise<number> =>
    Number((await redis.get(redisKeys.keyPeriodUsage(record.accountId, record.id, record.limitReset ?? 'daily', periodStartMs))) ?? '0');

  // Years ahead of the real clock: a period counter expires (PEXPIREAT, Redis clock) a week
  // after its period ends, so a period in the real past would be deleted as it is written.
  const cases: { name: string; reset: LimitReset; oldStart: number; newStart: number }[] = [
    { name: 'daily: the last millisecond of 2031-06-30', reset: 'daily', oldStart: Date.UTC(2031, 5, 30), newStart: Date.UTC(2031, 6, 1) },
    { name: 'weekly: the last millisecond of Sunday 2031-11-23 (weeks start on Monday)', reset: 'weekly', oldStart: Date.UTC(2031, 10, 17), newStart: Date.UTC(2031, 10, 24) },
    { name: 'monthly: the last millisecond of December 2031 (into a new year)', reset: 'monthly', oldStart: Date.UTC(2031, 11, 1), newStart: Date.UTC(2032, 0, 1) },
    { name: 'monthly: February 2032 (leap year, 29 days)', reset: 'monthly', oldStart: Date.UTC(2032, 1, 1), newStart: Date.UTC(2032, 2, 1) },
    { name: 'monthly: February 2031 (common year, 28 days)', reset: 'monthly', oldStart: Date.UTC(2031, 1, 1), newStart: Date.UTC(2031, 2, 1) },
    { name: 'daily: 2032-02-29, the leap day, into March 1st', reset: 'daily', oldStart: Date.UTC(2032, 1, 29), newStart: Date.UTC(2032, 2, 1) },
    { name: 'daily: 2031-02-28 into March 1st', reset: 'daily', oldStart: Date.UTC(2031, 1, 28), newStart: Date.UTC(2031, 2, 1) },
  ];

  it.each(cases)('$name counts in the old period, the next millisecond in the new one, and the key limit resets', async ({ reset, oldStart, newStart }) => {
    const record = keyRecord(newId('account'), PRICE, reset);
    await redis.set(redisKeys.accountBalance(record.accountId), '1000000');
    const last = newStart - 1;
    expect((await searchAt(record, last)).status).toBe(200);
    expect(await usage(record, oldStart)).toBe(PRICE);
    const blocked = await searchAt(record, last);
    expect(blocked.status).toBe(402);
    expect(JSON.parse(blocked.body).error.code).toBe('key_limit_exceeded');
    expect(await usage(record, newStart)).toBe(0);
    expect((await searchAt(record, newStart)).status).toBe(200);
    expect(await usage(record, newStart)).toBe(PRICE);
    expect(await usage(record, oldStart)).toBe(PRICE);
    expect(Number(await redis.get(redisKeys.keyTotalUsage(record.accountId, record.id)))).toBe(2 * PRICE);
    expect(await redis.zcard(redisKeys.accountInFlight(record.accountId))).toBe(0);
  });
});
