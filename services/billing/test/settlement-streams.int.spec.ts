import { redisKeys, SETTLEMENT_DIRTY_SET, SETTLEMENT_STREAMS_SET } from '@svc/contracts';
import { newId } from '@svc/ids';
import { closeRedisClient, createRedisClient, keySlot, KeyspaceWalk } from '@svc/redis-client';
import type { RedisClient } from '@svc/redis-client';
import { startRedisCluster } from '@svc/test-kit';
import type { RedisCluster } from '@svc/test-kit';
import type { Redis } from 'ioredis';
import pino from 'pino';
import { BacklogService } from '../src/services/backlog/backlog.service';
import { LedgerDrainService } from '../src/services/settlement/ledger-drain.service';
import { SettlementStreamAdapter } from '../src/services/settlement/settlement-stream.adapter';
import { enqueue, freshLedgerDatabase, ledgerTotals, newRedis, openLedgerStores, settlementRecord } from './ledger-fixtures';
import type { LedgerStores } from './ledger-fixtures';

/**
 * Decision 0036: the backlog and the sweep find the settlement streams without walking the whole
 * keyspace (which holds the result cache's entries too). A drain moves the accounts it pops into
 * the set of streams being drained; the sweep's SCAN is bounded per sweep and goes on where it
 * stopped.
 */
const logger = pino({ level: 'silent' });
let stores: LedgerStores;
let redis: Redis;

beforeAll(async () => {
  stores = await openLedgerStores(await freshLedgerDatabase('streams'), newRedis());
  redis = stores.redis;
}, 60_000);

afterAll(() => stores.close());

beforeEach(() => redis.flushdb());

/** Plain string keys standing in for the result cache's entries. */
async function fillKeyspace(count: number): Promise<void> {
  for (let start = 0; start < count; start += 5_000) {
    const args: string[] = [];
    for (let i = start; i < Math.min(count, start + 5_000); i += 1) args.push(`svc:cache:{k${i}}:e`, '1|0|0|[]');
    await redis.mset(...args);
  }
}

describe('settlement streams without a SCAN of the keyspace', () => {
  it('the dirty set and the set being drained share one hash slot (the pop moves accounts in one script on a cluster)', () => {
    expect(keySlot(SETTLEMENT_STREAMS_SET)).toBe(keySlot(SETTLEMENT_DIRTY_SET));
  });

  it('an account a drain popped stays counted until its stream is found empty; a sweep re-marks it', async () => {
    const streams = new SettlementStreamAdapter(redis);
    const backlog = new BacklogService(redis);
    const drain = new LedgerDrainService(streams, stores.append, logger, { batchSize: 100 });
    const accountId = newId('account');
    await enqueue(redis, [settlementRecord(accountId, 5), settlementRecord(accountId, 6)]);

    // A worker pops the account and stops before draining it: it leaves the dirty set for the set being drained.
    expect(await streams.popDirty(10)).toEqual([accountId]);
    expect(await redis.smembers(SETTLEMENT_DIRTY_SET)).toEqual([]);
    expect(await redis.smembers(SETTLEMENT_STREAMS_SET)).toEqual([accountId]);
    expect(await backlog.measure()).toMatchObject({ pendingRecords: 2, pendingAccounts: 1 });
    expect((await drain.drain()).accounts).toBe(0);

    // The sweep finds it among the streams being drained, without a pass of its SCAN.
    expect(await drain.sweep()).toBe(1);
    expect(await drain.drain()).toMatchObject({ accounts: 1, written: 2 });
    expect(await ledgerTotals(stores.db, accountId)).toMatchObject({ settlements: 2, chargedSum: 11 });
    expect(await redis.exists(redisKeys.settlementStream(accountId))).toBe(0);
    expect(await redis.smembers(SETTLEMENT_STREAMS_SET)).toEqual([]);
    expect(await backlog.measure()).toMatchObject({ pendingRecords: 0, pendingAccounts: 0 });
  });

  it('an account in the set whose stream is gone (drained by another worker) leaves it at the next sweep', async () => {
    const streams = new SettlementStreamAdapter(redis);
    const stale = newId('account');
    await redis.sadd(SETTLEMENT_STREAMS_SET, stale);
    expect(await streams.sweepStep(1_000)).toMatchObject({ accounts: [] });
    expect(await redis.smembers(SETTLEMENT_STREAMS_SET)).toEqual([]);
  });

  it("bounds the sweep's SCAN per sweep and goes on where it stopped, finding a stream whose dirty mark was lost", async () => {
    await fillKeyspace(30_000);
    const orphan = newId('account');
    await enqueue(redis, [settlementRecord(orphan, 42)], { markDirty: false });
    const backlog = new BacklogService(redis);
    // The backlog does not walk the keyspace: the orphan counts once a sweep found it.
    expect(await backlog.measure()).toMatchObject({ pendingRecords: 0 });

    const streams = new SettlementStreamAdapter(redis);
    const scans = jest.spyOn(redis, 'scan');
    const found: string[] = [];
    let sweeps = 0;
    for (let done = false; !done; sweeps += 1) {
      const before = scans.mock.calls.length;
      const step = await streams.sweepStep(2_000);
      expect(scans.mock.calls.length - before).toBeLessThanOrEqual(2);
      found.push(...step.accounts);
      done = step.passDone;
      if (sweeps > 100) throw new Error('the pass did not end');
    }
    scans.mockRestore();
    // 30,001 keys at about 1,000 a call and 2 calls a sweep: a pass takes several sweeps.
    expect(sweeps).toBeGreaterThanOrEqual(8);
    expect(found).toEqual([orphan]);

    const drain = new LedgerDrainService(streams, stores.append, logger, { batchSize: 100, sweepScanKeys: 100_000 });
    expect(await drain.sweep()).toBe(1);
    expect(await backlog.measure()).toMatchObject({ pendingRecords: 1, pendingAccounts: 1 });
    expect(await drain.drain()).toMatchObject({ written: 1 });
    expect(await backlog.measure()).toMatchObject({ pendingRecords: 0 });
  });
});

describe('settlement streams on a Redis Cluster', () => {
  let cluster: RedisCluster;
  let client: RedisClient;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    client = createRedisClient({ url: cluster.url, cluster: true }, { maxRetriesPerRequest: 2 });
  }, 120_000);

  afterAll(async () => {
    await closeRedisClient(client);
    await cluster.stop();
  });

  it('pops dirty accounts in one script, and the bounded walk covers every master', async () => {
    const accounts = Array.from({ length: 30 }, () => newId('account'));
    for (const accountId of accounts) await client.xadd(redisKeys.settlementStream(accountId), '*', 'r', '{}');
    for (let i = 0; i < 3_000; i += 1) await client.set(`svc:cache:{k${i}}:e`, '1');
    await client.sadd(SETTLEMENT_DIRTY_SET, ...accounts.slice(0, 10));

    const streams = new SettlementStreamAdapter(client);
    expect((await streams.popDirty(100)).sort()).toEqual(accounts.slice(0, 10).sort());
    expect((await client.smembers(SETTLEMENT_STREAMS_SET)).sort()).toEqual(accounts.slice(0, 10).sort());

    // Streams of 30 accounts spread over three masters, found by steps of one SCAN call each.
    const slots = new Set(accounts.map((accountId) => keySlot(redisKeys.settlementStream(accountId))));
    expect(slots.size).toBeGreaterThan(20);
    const walk = new KeyspaceWalk(client, redisKeys.settlementStream('*'), 'stream');
    const seen = new Set<string>();
    let steps = 0;
    for (let done = false; !done; steps += 1) {
      const step = await walk.step(1_000);
      for (const key of step.keys) seen.add(key);
      done = step.passDone;
    }
    expect(steps).toBeGreaterThanOrEqual(3);
    expect([...seen].sort()).toEqual(accounts.map((accountId) => redisKeys.settlementStream(accountId)).sort());
    const swept = await streams.sweepStep(1_000_000);
    expect(swept.passDone).toBe(true);
    expect(swept.accounts.sort()).toEqual([...accounts].sort());
  }, 60_000);
});
