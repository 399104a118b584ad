import { recoveryKeys, redisKeys, SETTLEMENT_FIELD } from '@svc/contracts';
import type { SettlementRecord } from '@svc/contracts';
import { newId } from '@svc/ids';
import { closeRedisClient, createRedisClient, keySlot, shardKeys } from '@svc/redis-client';
import type { RedisClient } from '@svc/redis-client';
import { startRedisCluster, waitFor } from '@svc/test-kit';
import type { ClusterNode, RedisCluster } from '@svc/test-kit';
import { SettlementRetainer } from '../src/money/settlement-retainer';

/**
 * The epoch per shard (docs/decisions/0030) on a real 3-master Redis Cluster without
 * replicas: one epoch key per slot range, each on its master; a master killed and started
 * again empty loses its epoch, and the gateway's retainer notices and re-sends its
 * unconfirmed records, even when the old global epoch key lives on another master; a
 * resharding is not taken for a loss.
 */
function record(accountId: string): SettlementRecord {
  return {
    v: 1, requestId: newId('request'), accountId, keyId: newId('apiKey'), settledAtMs: Date.now(), chargedMicros: 5_000,
    attempts: [{ index: 0, model: 'exa/fast', provider: 'exa', source: 'platform', status: 'success', error: null, reservedMicros: 9_000, chargedMicros: 9_000, timedOut: false, results: 10 }],
  };
}

describe('the epoch of every shard of a Redis Cluster', () => {
  let cluster: RedisCluster;
  let redis: RedisClient;
  let retainer: SettlementRetainer;

  /** An account whose keys the node serves now. */
  const accountOn = async (node: ClusterNode): Promise<string> => {
    for (;;) {
      const accountId = newId('account');
      if ((await cluster.masterOf(keySlot(redisKeys.accountBalance(accountId)))) === node) return accountId;
    }
  };
  const streamIds = async (accountId: string): Promise<string[]> =>
    (await redis.xrange(redisKeys.settlementStream(accountId), '-', '+')).map(([, fields]) =>
      (JSON.parse(fields[fields.indexOf(SETTLEMENT_FIELD) + 1] ?? '{}') as { requestId: string }).requestId);

  beforeAll(async () => {
    cluster = await startRedisCluster();
    redis = createRedisClient({ url: cluster.url, cluster: true }, { maxRetriesPerRequest: 2 }, { retryDelayOnClusterDown: 100 });
    retainer = new SettlementRetainer(redis, { maxRecords: 100, confirmIntervalMs: 3_600_000, epochIntervalMs: 3_600_000 });
  }, 60_000);

  afterAll(async () => {
    retainer?.stop();
    if (redis !== undefined) await closeRedisClient(redis);
    await cluster?.stop();
  });

  it('keeps one epoch key per slot range, each on the master of that range', async () => {
    expect(await retainer.checkEpoch()).toBe(0);
    const keys = await shardKeys(redis, recoveryKeys.shardEpoch);
    expect(keys).toHaveLength(3);
    const holders = await Promise.all(keys.map(async (key) => (await cluster.masterOf(keySlot(key))).port));
    expect(new Set(holders).size).toBe(3);
    for (const key of keys) expect(await redis.get(key)).toMatch(/^\d+:[0-9a-f]{16}$/);
  });

  it('does not take a resharding for a loss: a slot range split by a migration gets an epoch of its own', async () => {
    const [first] = await shardKeys(redis, recoveryKeys.shardEpoch);
    if (first === undefined) throw new Error('no epoch key');
    const from = await cluster.masterOf(keySlot(first));
    const to = (await cluster.masters()).find((node) => node !== from);
    if (to === undefined) throw new Error('no other master');
    await cluster.migrateSlot(keySlot(first), to);
    expect(await retainer.checkEpoch()).toBe(0);
    expect((await shardKeys(redis, recoveryKeys.shardEpoch)).length).toBeGreaterThan(3);
    expect(await retainer.checkEpoch()).toBe(0);
  });

  it('notices a master restarted empty that does not hold the global epoch key, and re-sends every unconfirmed record', async () => {
    const globalHolder = await cluster.masterOf(keySlot(recoveryKeys.epoch));
    const victim = (await cluster.masters()).find((node) => node !== globalHolder);
    if (victim === undefined) throw new Error('no master without the global epoch');
    const lostAccount = await accountOn(victim);
    const keptAccount = await accountOn(globalHolder);
    const lost = record(lostAccount);
    const kept = record(keptAccount);
    // Both records are in their streams (the settle path wrote them) and retained, unconfirmed.
    for (const r of [lost, kept]) {
      await redis.xadd(redisKeys.settlementStream(r.accountId), '*', SETTLEMENT_FIELD, JSON.stringify(r));
      retainer.retain(r);
    }
    // The single key of before (a retainer reading only it would have read this value all along).
    if ((await redis.get(recoveryKeys.epoch)) === null) await redis.set(recoveryKeys.epoch, `${Date.now()}:0000000000000000`);
    const globalEpoch = await redis.get(recoveryKeys.epoch);
    expect(await retainer.checkEpoch()).toBe(0);

    await cluster.kill(victim);
    await cluster.restart(victim);
    expect(await streamIds(lostAccount)).toEqual([]);
    // The old single key is still there: alone it would have seen nothing.
    expect(await redis.get(recoveryKeys.epoch)).toBe(globalEpoch);

    const resent = await waitFor('the retainer to notice the lost shard', async () => {
      const n = await retainer.checkEpoch();
      return n > 0 ? n : undefined;
    }, { timeoutMs: 20_000 });
    expect(resent).toBe(2);
    expect(await streamIds(lostAccount)).toEqual([lost.requestId]);
    // A record whose stream survived is sent again too; the worker skips a settled request id.
    expect(await streamIds(keptAccount)).toEqual([kept.requestId, kept.requestId]);
    expect((await redis.smembers('svc:settle:dirty')).sort()).toEqual(expect.arrayContaining([lostAccount, keptAccount]));
    // Seen once: the next reading re-sends nothing.
    expect(await retainer.checkEpoch()).toBe(0);
  });
});
