import Redis from 'ioredis';
import { redisKeys, SETTLEMENT_FIELD } from '@svc/contracts';
import type { KeyRecord, SettlementRecord } from '@svc/contracts';
import { newId } from '@svc/ids';
import { freePort, redisUrl, TcpProxy, waitFor } from '@svc/test-kit';
import { MoneyRepository } from '../src/money/money.repository';
import { moneyScope } from '../src/money/money.scope';
import type { MoneyScope } from '../src/money/money.scope';

/**
 * A search's settlement when its Redis connection is down, as during a master's failover
 * (docs/decisions/0030): with `settleOutageWaitMs` it keeps being tried and lands, charged
 * once, when Redis is reachable again; without, it is given up after a few immediate tries
 * (the search answers 500). Real Redis (database 9, shared with redis-flush.int, which runs
 * at another time; nothing is flushed here) behind a TCP relay the test cuts.
 */
const DB = 9;
const PRICE = 5_000;
const ADMISSION = { ratePerSecond: 100, burst: 100, accountCap: 100, leaseTtlMs: 60_000 };
const QUIET = { maxRecords: 100, confirmIntervalMs: 3_600_000, epochIntervalMs: 3_600_000 };

function keyRecord(accountId: string): KeyRecord {
  return { id: newId('apiKey'), accountId, kind: 'api', disabled: false, expiresAtMs: null, limitMicros: 1_000_000, limitReset: 'daily', version: 1, deleted: false };
}

function record(scope: MoneyScope): SettlementRecord {
  return {
    v: 1, requestId: scope.requestId, accountId: scope.accountId, keyId: scope.keyId, settledAtMs: Date.now(), chargedMicros: PRICE,
    attempts: [{ index: 0, model: 'exa/fast', provider: 'exa', source: 'platform', status: 'success', error: null, reservedMicros: PRICE, chargedMicros: PRICE, timedOut: false, results: 10 }],
  };
}

describe('a settlement while its Redis connection is down (real Redis behind a TCP relay)', () => {
  let redis: Redis;
  let proxy: TcpProxy;
  const repositories: MoneyRepository[] = [];

  beforeAll(async () => {
    redis = new Redis(redisUrl(DB));
    const target = new URL(redisUrl(DB));
    proxy = new TcpProxy(await freePort(), { host: target.hostname, port: Number(target.port || 6379) });
    await proxy.open();
  });

  afterAll(async () => {
    for (const money of repositories) {
      money.retainer.stop();
      money.close();
    }
    await proxy.cut();
    redis.disconnect();
  });

  /** A repository whose batch goes through the relay, and a search admitted through it (the connection was up). */
  async function admitted(settleOutageWaitMs: number): Promise<{ money: MoneyRepository; scope: MoneyScope }> {
    const money = new MoneyRepository(redis, { url: `redis://127.0.0.1:${proxy.port}/${DB}`, cluster: false }, { retainer: QUIET, settleOutageWaitMs });
    repositories.push(money);
    const rec = keyRecord(newId('account'));
    await redis.set(redisKeys.accountBalance(rec.accountId), '100000');
    const scope = moneyScope(rec, newId('request'), null, Date.now(), 60_000);
    const { admission } = await money.admitFirst(scope, [], { provider: 'exa', leaseId: `${scope.requestId}:0`, cap: 1_000, lifetimeMs: 60_000 }, { index: 0, amountMicros: PRICE }, ADMISSION);
    expect(admission).toMatchObject({ kind: 'admitted', verdict: { kind: 'ok' } });
    return { money, scope };
  }

  it('keeps trying for the outage wait and lands, charged once, when Redis is reachable again', async () => {
    const { money, scope } = await admitted(5_000);
    await proxy.cut();
    await waitFor('the batch to see its connection down', () => (money.batchStatus === 'ready' ? undefined : true));
    const settling = money.settle(scope, [], { record: record(scope), outcome: null });
    // The outage lasts 400 ms (a failover is over in about cluster-node-timeout plus a second).
    await new Promise((resolve) => setTimeout(resolve, 400));
    await proxy.open();
    await expect(settling).resolves.toBeUndefined();
    expect(await money.drainSettlements(5_000)).toBe(true);
    const entries = await redis.xrange(redisKeys.settlementStream(scope.accountId), '-', '+');
    expect(entries.map(([, fields]) => (JSON.parse(fields[fields.indexOf(SETTLEMENT_FIELD) + 1] ?? '{}') as { requestId: string }).requestId)).toEqual([scope.requestId]);
    expect(await redis.get(redisKeys.accountBalance(scope.accountId))).toBe(String(100_000 - PRICE));
    expect(Number((await redis.get(redisKeys.accountReserved(scope.accountId))) ?? '0')).toBe(0);
  });

  it('without the wait, gives up after its immediate tries and charges nothing', async () => {
    const { money, scope } = await admitted(0);
    await proxy.cut();
    await waitFor('the batch to see its connection down', () => (money.batchStatus === 'ready' ? undefined : true));
    try {
      await expect(money.settle(scope, [], { record: record(scope), outcome: null })).rejects.toThrow();
    } finally {
      await proxy.open();
    }
    expect(await redis.xlen(redisKeys.settlementStream(scope.accountId))).toBe(0);
    // The reservation is still held (reconciliation releases it); nothing was charged.
    expect(await redis.get(redisKeys.accountReserved(scope.accountId))).toBe(String(PRICE));
  });
});
