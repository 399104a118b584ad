import Redis from 'ioredis';
import { redisKeys, SETTLEMENT_FIELD } from '@svc/contracts';
import type { KeyRecord, Provider, SettlementRecord } from '@svc/contracts';
import { newId } from '@svc/ids';
import { redisUrl } from '@svc/test-kit';
import { MoneyRepository } from '../src/money/money.repository';
import type { FanoutAdmissionVerdict, LeaseRequest, ReserveRequest } from '../src/money/money.ops';
import { moneyScope } from '../src/money/money.scope';
import type { MoneyScope } from '../src/money/money.scope';

/**
 * A fan-out's admission on the real Redis (database 11, shared with the other money suites;
 * suites run one at a time): one admission request with every model's reservation and a lease
 * per model, in one round trip. It takes one rate token and one account in-flight lease, claims
 * the Idempotency-Key once, and reserves each model's amount by the reservation rule, in order,
 * on what the ones before left; then one settlement with every attempt charges and refunds it
 * exactly.
 */
const DB = 11;
const ADMISSION = { ratePerSecond: 0.001, burst: 5, accountCap: 3, leaseTtlMs: 60_000 };
const PROVIDERS: Provider[] = ['exa', 'brave', 'tavily'];

describe('a fan-out\'s admission and settlement (real Redis)', () => {
  let redis: Redis;
  let money: MoneyRepository;

  beforeAll(() => {
    redis = new Redis(redisUrl(DB));
    money = new MoneyRepository(redis, { url: redisUrl(DB), cluster: false }, { retainer: { maxRecords: 100_000, confirmIntervalMs: 3_600_000, epochIntervalMs: 3_600_000 } });
  });

  afterAll(async () => {
    money.close();
    for (const provider of PROVIDERS) await redis.del(redisKeys.providerLeases(provider));
    redis.disconnect();
  });

  async function account(balance: number, limitMicros: number | null = null): Promise<{ accountId: string; record: KeyRecord }> {
    const accountId = newId('account');
    await redis.set(redisKeys.accountBalance(accountId), String(balance));
    return { accountId, record: { id: newId('apiKey'), accountId, kind: 'api', disabled: false, expiresAtMs: null, limitMicros, limitReset: null, version: 1, deleted: false } };
  }

  function leasesOf(scope: MoneyScope, cap = 1_000_000): LeaseRequest[] {
    return PROVIDERS.map((provider, i) => ({ provider, leaseId: `${scope.requestId}:${i}`, cap, lifetimeMs: 60_000 }));
  }

  const reserves = (...amounts: number[]): ReserveRequest[] => amounts.map((amountMicros, index) => ({ index, amountMicros }));

  function verdicts(admission: FanoutAdmissionVerdict): string[] {
    if (admission.kind !== 'admitted') return [admission.kind];
    return admission.verdicts.map((v) => v.kind);
  }

  it('one rate token, one in-flight lease, a lease per model and every reservation in one round trip', async () => {
    const { accountId, record } = await account(100_000);
    const scope = moneyScope(record, newId('request'), null, Date.now(), 60_000);
    const answer = await money.admitFanout(scope, leasesOf(scope), reserves(9_000, 6_000, 10_000), ADMISSION);
    expect(answer.leased).toEqual([true, true, true]);
    expect(answer.admission).toEqual({ kind: 'admitted', remaining: ADMISSION.burst - 1, verdicts: [{ kind: 'ok' }, { kind: 'ok' }, { kind: 'ok' }] });
    expect(await redis.get(redisKeys.accountBalance(accountId))).toBe(String(100_000 - 25_000));
    expect(await redis.get(redisKeys.accountReserved(accountId))).toBe('25000');
    expect(await redis.get(redisKeys.keyHold(accountId, record.id))).toBe('25000');
    expect(await redis.hgetall(scope.reservationKey)).toEqual({ 0: '9000', 1: '6000', 2: '10000' });
    expect(await redis.zrange(redisKeys.accountInFlight(accountId), '0', '-1')).toEqual([scope.requestId]);
    for (const [i, provider] of PROVIDERS.entries()) expect(await redis.zscore(redisKeys.providerLeases(provider), `${scope.requestId}:${i}`)).not.toBeNull();

    // Settled as one record of three attempts: the first answered (charged 7,000 of 9,000), the
    // second failed (refunded), the third timed out (keeps its base price, 10,000 here).
    const record3: SettlementRecord = {
      v: 1, requestId: scope.requestId, accountId, keyId: record.id, settledAtMs: 1_800_000_000_000, chargedMicros: 17_000,
      attempts: [
        { index: 0, model: 'exa/fast', provider: 'exa', source: 'platform', status: 'success', error: null, reservedMicros: 9_000, chargedMicros: 7_000, timedOut: false, results: 3 },
        { index: 1, model: 'brave/web', provider: 'brave', source: 'platform', status: 'error', error: 'provider returned 500', reservedMicros: 6_000, chargedMicros: 0, timedOut: false, results: 0 },
        { index: 2, model: 'tavily/basic', provider: 'tavily', source: 'platform', status: 'error', error: 'provider did not answer', reservedMicros: 10_000, chargedMicros: 10_000, timedOut: true, results: 0 },
      ],
    };
    await money.settle(scope, [
      { kind: 'release', index: 1, keepMicros: 0 }, { kind: 'release', index: 2, keepMicros: 10_000 },
      ...PROVIDERS.map((provider, i) => ({ kind: 'unlease' as const, provider, leaseId: `${scope.requestId}:${i}` })),
    ], { record: record3, outcome: null, releaseAccountLease: true });
    expect(await money.drainSettlements(5_000)).toBe(true);
    expect(await redis.get(redisKeys.accountBalance(accountId))).toBe(String(100_000 - 17_000));
    expect(await redis.get(redisKeys.accountReserved(accountId))).toBe('0');
    expect(await redis.get(redisKeys.keyTotalUsage(accountId, record.id))).toBe('17000');
    expect(await redis.exists(redisKeys.keyHold(accountId, record.id))).toBe(0);
    expect(await redis.zcard(redisKeys.accountInFlight(accountId))).toBe(0);
    for (const provider of PROVIDERS) expect(await redis.zcard(redisKeys.providerLeases(provider))).toBe(0);
    const stream = await redis.xrange(redisKeys.settlementStream(accountId), '-', '+');
    expect(stream).toHaveLength(1);
    const written = JSON.parse(stream[0]?.[1][stream[0][1].indexOf(SETTLEMENT_FIELD) + 1] ?? '{}') as SettlementRecord;
    expect(written.attempts.map((a) => a.chargedMicros)).toEqual([7_000, 0, 10_000]);
  });

  it('each reservation is decided on what the ones before it left: the balance, then the key\'s limit', async () => {
    const poor = await account(16_000);
    const scope = moneyScope(poor.record, newId('request'), null, Date.now(), 60_000);
    expect(verdicts((await money.admitFanout(scope, leasesOf(scope), reserves(9_000, 10_000, 6_000), ADMISSION)).admission)).toEqual(['ok', 'balance', 'ok']);
    expect(await redis.hgetall(scope.reservationKey)).toEqual({ 0: '9000', 2: '6000' });
    expect(await redis.get(redisKeys.accountBalance(poor.accountId))).toBe('1000');

    const limited = await account(100_000, 12_000);
    const limitedScope = moneyScope(limited.record, newId('request'), null, Date.now(), 60_000);
    expect(verdicts((await money.admitFanout(limitedScope, leasesOf(limitedScope), reserves(6_000, 9_000, 6_000), ADMISSION)).admission)).toEqual(['ok', 'limit', 'ok']);
    expect(await redis.get(redisKeys.keyHold(limited.accountId, limited.record.id))).toBe('12000');

    // The first blocked, the others still decided.
    const first = await account(8_000);
    const firstScope = moneyScope(first.record, newId('request'), null, Date.now(), 60_000);
    expect(verdicts((await money.admitFanout(firstScope, leasesOf(firstScope), reserves(9_000, 6_000, 6_000), ADMISSION)).admission)).toEqual(['balance', 'ok', 'balance']);
  });

  it('claims the Idempotency-Key once: a repeat reserves nothing, takes no token and no in-flight lease', async () => {
    const { accountId, record } = await account(100_000);
    const claim = { value: JSON.stringify({ rid: 'req_first' }), ttlMs: 60_000 };
    const scope = moneyScope(record, newId('request'), 'same-key', Date.now(), 60_000);
    const withClaim = [{ index: 0, amountMicros: 9_000, claim }, { index: 1, amountMicros: 6_000 }];
    expect(verdicts((await money.admitFanout(scope, leasesOf(scope).slice(0, 2), withClaim, ADMISSION)).admission)).toEqual(['ok', 'ok']);
    const again = moneyScope(record, newId('request'), 'same-key', Date.now(), 60_000);
    const repeat = await money.admitFanout(again, leasesOf(again).slice(0, 2), withClaim, ADMISSION);
    expect(repeat.admission).toEqual({ kind: 'admitted', remaining: ADMISSION.burst - 1, verdicts: [{ kind: 'dup', stored: claim.value }] });
    expect(await redis.exists(again.reservationKey)).toBe(0);
    expect(await redis.zcard(redisKeys.accountInFlight(accountId))).toBe(1);
    expect(await redis.get(redisKeys.accountBalance(accountId))).toBe(String(100_000 - 15_000));
  });

  it('a fan-out and plain admissions of one account in one flush decide what they decide one at a time', async () => {
    const runs: string[][][] = [];
    const states: unknown[] = [];
    for (const together of [true, false]) {
      const { accountId, record } = await account(20_000);
      const plain = () => {
        const scope = moneyScope(record, newId('request'), null, Date.now(), 60_000);
        return money.admitFirst(scope, [], { provider: 'exa', leaseId: `${scope.requestId}:0`, cap: 1_000_000, lifetimeMs: 60_000 }, { index: 0, amountMicros: 6_000 }, ADMISSION)
          .then((a) => [a.admission.kind === 'admitted' ? a.admission.verdict.kind : a.admission.kind]);
      };
      const fanout = () => {
        const scope = moneyScope(record, newId('request'), null, Date.now(), 60_000);
        return money.admitFanout(scope, leasesOf(scope), reserves(9_000, 6_000, 10_000), ADMISSION).then((a) => verdicts(a.admission));
      };
      const calls = [plain, fanout, plain, plain];
      const out = together ? await Promise.all(calls.map((c) => c())) : await calls.reduce<Promise<string[][]>>(async (acc, c) => [...(await acc), await c()], Promise.resolve([]));
      runs.push(out);
      states.push({ balance: await redis.get(redisKeys.accountBalance(accountId)), inFlight: await redis.zcard(redisKeys.accountInFlight(accountId)) });
    }
    // 20,000: the first plain search 6,000; the fan-out 9,000 then 6,000 is over (5,000 left) then 10,000 over; the cap of 3 in flight refuses the fourth.
    expect(runs[0]).toEqual([['ok'], ['ok', 'balance', 'balance'], ['balance'], ['too_many']]);
    expect(runs[1]).toEqual(runs[0]);
    expect(states[0]).toEqual(states[1]);
  });

  it('refuses a malformed list of further reservations without writing', async () => {
    const { accountId, record } = await account(100_000);
    const scope = moneyScope(record, newId('request'), null, Date.now(), 60_000);
    await expect(money.admitFanout(scope, [null, null], [{ index: 0, amountMicros: 1_000 }, { index: 1, amountMicros: -5 }], ADMISSION)).rejects.toThrow('admit: bad arguments');
    expect(await redis.get(redisKeys.accountBalance(accountId))).toBe('100000');
    expect(await redis.zcard(redisKeys.accountInFlight(accountId))).toBe(0);
  });
});
