import Redis from 'ioredis';
import { recoveryKeys, redisKeys, SETTLE_CONFIRM_BUCKET_MS, SETTLEMENT_FIELD } from '@svc/contracts';
import type { KeyRecord, SettlementRecord } from '@svc/contracts';
import { newId } from '@svc/ids';
import { redisUrl } from '@svc/test-kit';
import { MoneyRepository } from '../src/money/money.repository';
import { moneyScope } from '../src/money/money.scope';
import type { MoneyScope } from '../src/money/money.scope';
import { SETTLED_BUCKET_MS, SETTLE_RESEND_WINDOW_MS } from '../src/money/money.scripts';

/**
 * The money scripts when Redis lost its data (database 9, flushed by this suite: every
 * database 1..15 has an owner, see docs/development.md): a cold account (no balance key) is
 * refused with nothing written, a settlement still lands in the stream, and the gateway
 * re-sends what the worker has not confirmed.
 */
const DB = 9;
const PRICE = 5_000;
const ADMISSION = { ratePerSecond: 100, burst: 100, accountCap: 100, leaseTtlMs: 60_000 };

function keyRecord(accountId: string): KeyRecord {
  return { id: newId('apiKey'), accountId, kind: 'api', disabled: false, expiresAtMs: null, limitMicros: 1_000_000, limitReset: 'daily', version: 1, deleted: false };
}

function record(scope: MoneyScope, chargedMicros: number): SettlementRecord {
  return {
    v: 1, requestId: scope.requestId, accountId: scope.accountId, keyId: scope.keyId, settledAtMs: Date.now(), chargedMicros,
    attempts: [{ index: 0, model: 'exa/fast', provider: 'exa', source: 'platform', status: 'success', error: null, reservedMicros: PRICE, chargedMicros, timedOut: false, results: 10 }],
  };
}

async function streamRequestIds(redis: Redis, accountId: string): Promise<string[]> {
  const entries = await redis.xrange(redisKeys.settlementStream(accountId), '-', '+');
  return entries.map(([, fields]) => (JSON.parse(fields[fields.indexOf(SETTLEMENT_FIELD) + 1] ?? '{}') as { requestId: string }).requestId);
}

/** Settles and waits for Redis's answer (settle itself returns once the pipeline is on the socket). */
async function settled(repository: MoneyRepository, scope: MoneyScope, chargedMicros: number): Promise<void> {
  await repository.settle(scope, [], { record: record(scope, chargedMicros), outcome: null });
  expect(await repository.drainSettlements(5_000)).toBe(true);
}

describe('money scripts after Redis lost its data (real Redis)', () => {
  let redis: Redis;
  let money: MoneyRepository;

  beforeAll(async () => {
    redis = new Redis(redisUrl(DB));
    await redis.flushdb();
    money = new MoneyRepository(redis, { url: redisUrl(DB), cluster: false }, { retainer: { maxRecords: 3, confirmIntervalMs: 3_600_000, epochIntervalMs: 3_600_000 } });
  });

  afterAll(() => {
    money.retainer.stop();
    redis.disconnect();
  });

  const admit = (scope: MoneyScope) =>
    money.admitFirst(scope, [], { provider: 'exa', leaseId: `${scope.requestId}:0`, cap: 1_000, lifetimeMs: 60_000 }, { index: 0, amountMicros: PRICE }, ADMISSION);

  it('refuses a cold account (no balance key) as cold and writes nothing for it', async () => {
    const rec = keyRecord(newId('account'));
    const scope = moneyScope(rec, newId('request'), null, Date.now(), 60_000);
    const { admission } = await admit(scope);
    expect(admission).toEqual({ kind: 'cold' });
    expect(await redis.keys(`${redisKeys.accountTag(rec.accountId)}*`)).toEqual([]);
    await money.requestHydration(rec.accountId);
    expect(await redis.sismember(recoveryKeys.hydrationWanted, rec.accountId)).toBe(1);
  });

  it('records a charge settled on a cold account without touching its balance or counters, and retains it', async () => {
    const rec = keyRecord(newId('account'));
    await redis.set(redisKeys.accountBalance(rec.accountId), '100000');
    const scope = moneyScope(rec, newId('request'), null, Date.now(), 60_000);
    const { admission } = await admit(scope);
    expect(admission).toMatchObject({ kind: 'admitted', verdict: { kind: 'ok' } });
    await redis.flushdb();
    await settled(money, scope, 4_000);
    expect(await streamRequestIds(redis, rec.accountId)).toEqual([scope.requestId]);
    expect(await redis.exists(redisKeys.accountBalance(rec.accountId), scope.limitKey, scope.totalKey)).toBe(0);
    expect(money.retainer.has(scope.requestId)).toBe(true);
  });

  it('charges the whole amount to a rebuilt balance when the reservation was lost with Redis', async () => {
    const rec = keyRecord(newId('account'));
    await redis.set(redisKeys.accountBalance(rec.accountId), '100000');
    const scope = moneyScope(rec, newId('request'), null, Date.now(), 60_000);
    await admit(scope);
    expect(await redis.get(redisKeys.accountBalance(rec.accountId))).toBe(String(100_000 - PRICE));
    // Flushed, then hydrated (balance rebuilt without the reservation, counters empty).
    await redis.flushdb();
    await redis.set(redisKeys.accountBalance(rec.accountId), '100000');
    await settled(money, scope, 4_000);
    expect(await redis.get(redisKeys.accountBalance(rec.accountId))).toBe('96000');
    expect(await redis.get(scope.limitKey)).toBe('4000');
    expect(await redis.get(redisKeys.accountReserved(rec.accountId))).toBeNull();
  });

  it('re-sends every unconfirmed record when the epoch changes, drops confirmed ones, and fails closed when full', async () => {
    await redis.flushdb();
    const fresh = new MoneyRepository(redis, { url: redisUrl(DB), cluster: false }, { retainer: { maxRecords: 2, confirmIntervalMs: 3_600_000, epochIntervalMs: 3_600_000 } });
    expect(await fresh.retainer.checkEpoch()).toBe(0);
    const rec = keyRecord(newId('account'));
    const scopes = [0, 1].map(() => moneyScope(rec, newId('request'), null, Date.now(), 60_000));
    await redis.set(redisKeys.accountBalance(rec.accountId), '100000');
    for (const scope of scopes) await settled(fresh, scope, 1_000);
    expect(fresh.retainer.full).toBe(true);

    await redis.flushdb();
    expect(await fresh.retainer.checkEpoch()).toBe(2);
    expect((await streamRequestIds(redis, rec.accountId)).sort()).toEqual(scopes.map((s) => s.requestId).sort());
    expect(await redis.sismember('svc:settle:dirty', rec.accountId)).toBe(1);
    // Unchanged epoch: nothing re-sent.
    expect(await fresh.retainer.checkEpoch()).toBe(0);

    const [seconds] = await redis.time();
    const first = scopes[0];
    if (first === undefined) throw new Error('no scope');
    await redis.sadd(recoveryKeys.settleConfirmed(Math.floor((Number(seconds) * 1000) / SETTLE_CONFIRM_BUCKET_MS)), first.requestId);
    expect(await fresh.retainer.confirm()).toBe(1);
    expect(fresh.retainer.has(first.requestId)).toBe(false);
    expect(fresh.retainer.full).toBe(false);
  });

  it('a re-send that fails is made again at the next epoch check (the loss is not forgotten)', async () => {
    await redis.flushdb();
    const fresh = new MoneyRepository(redis, { url: redisUrl(DB), cluster: false }, { retainer: { maxRecords: 10, confirmIntervalMs: 3_600_000, epochIntervalMs: 3_600_000 } });
    expect(await fresh.retainer.checkEpoch()).toBe(0);
    const rec = keyRecord(newId('account'));
    const scope = moneyScope(rec, newId('request'), null, Date.now(), 60_000);
    await redis.set(redisKeys.accountBalance(rec.accountId), '100000');
    await settled(fresh, scope, 1_000);

    await redis.flushdb();
    // The stream's key holds a string: Redis refuses the re-send's XADD (WRONGTYPE).
    await redis.set(redisKeys.settlementStream(rec.accountId), 'not a stream');
    await expect(fresh.retainer.checkEpoch()).rejects.toThrow(/WRONGTYPE/);
    await redis.del(redisKeys.settlementStream(rec.accountId));
    expect(await fresh.retainer.checkEpoch()).toBe(1);
    expect(await streamRequestIds(redis, rec.accountId)).toEqual([scope.requestId]);
    expect(await redis.sismember('svc:settle:dirty', rec.accountId)).toBe(1);
    expect(await fresh.retainer.checkEpoch()).toBe(0);
    fresh.close();
  });
});

describe('a settlement sent twice (real Redis)', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(redisUrl(DB));
  });

  afterAll(() => redis.disconnect());

  it('counts once: the second send finds its request id in the bucket of the first send and changes nothing', async () => {
    const now = Date.now();
    const money = new MoneyRepository(redis, { url: redisUrl(DB), cluster: false }, { retainer: { maxRecords: 100, confirmIntervalMs: 3_600_000, epochIntervalMs: 3_600_000 }, clock: () => now });
    try {
      const rec = keyRecord(newId('account'));
      const scope = moneyScope(rec, newId('request'), null, Date.now(), 60_000);
      await redis.set(redisKeys.accountBalance(rec.accountId), '100000');
      const admitted = await money.admitFirst(scope, [], { provider: 'exa', leaseId: `${scope.requestId}:0`, cap: 1_000, lifetimeMs: 60_000 }, { index: 0, amountMicros: PRICE }, ADMISSION);
      expect(admitted.admission).toMatchObject({ kind: 'admitted', verdict: { kind: 'ok' } });
      const after = async () => ({
        balance: await redis.get(redisKeys.accountBalance(rec.accountId)),
        reserved: await redis.get(redisKeys.accountReserved(rec.accountId)),
        usage: await redis.get(scope.limitKey),
        inFlight: await redis.zcard(redisKeys.accountInFlight(rec.accountId)),
        stream: await streamRequestIds(redis, rec.accountId),
      });
      // As SearchService settles: the account in-flight lease goes back in the settle script.
      const send = async (): Promise<void> => {
        await money.settle(scope, [{ kind: 'unleaseAccount' }], { record: record(scope, 4_000), outcome: null });
        expect(await money.drainSettlements(5_000)).toBe(true);
      };
      await send();
      const once = await after();
      expect(once).toEqual({ balance: '96000', reserved: '0', usage: '4000', inFlight: 0, stream: [scope.requestId] });
      await send();
      expect(await after()).toEqual(once);
      // One marker set per account and bucket, expiring after the re-send window.
      const bucket = redisKeys.settledMarkers(rec.accountId, now - (now % SETTLED_BUCKET_MS));
      expect(await redis.sismember(bucket, scope.requestId)).toBe(1);
      const ttl = await redis.pttl(bucket);
      expect(ttl).toBeGreaterThan(SETTLE_RESEND_WINDOW_MS - (Date.now() - now));
    } finally {
      money.close();
    }
  });
});
