import { createRedisClient, closeRedisClient } from '@svc/redis-client';
import type { RedisClient } from '@svc/redis-client';
import { recreateDatabase, startRedisCluster, waitFor } from '@svc/test-kit';
import type { RedisCluster } from '@svc/test-kit';
import pino from 'pino';
import { migrateBillingDatabase } from '../src/db/migrate';
import { createBillingDatabase } from '../src/db/prisma.repository';
import type { BillingDatabase } from '../src/db/prisma.repository';
import { HydrationLoop } from '../src/services/hydration/hydration-loop';
import { HydrationRedisAdapter } from '../src/services/hydration/hydration-redis.adapter';
import { HydrationRepository } from '../src/stores/hydration.repository';
import { HydrationService } from '../src/services/hydration/hydration.service';

/**
 * The ledger worker's recovery loop on a real 3-master Redis Cluster without replicas
 * (docs/decisions/0030): it reads one epoch per shard; a master killed and started again
 * empty changes that shard's epoch only, the loop calls its epoch-change hook (the job
 * schedulers are re-created), again at the next round when that call failed and then no
 * more, and the grace period runs from the new epoch.
 */
const logger = pino({ level: 'silent' });

describe('hydration loop: an epoch per shard of a Redis Cluster', () => {
  let cluster: RedisCluster;
  let redis: RedisClient;
  let database: BillingDatabase;
  let adapter: HydrationRedisAdapter;
  let loop: HydrationLoop;
  let changes = 0;
  /** How many of the hook's next calls fail (as a schedule refused while the cluster is down in part). */
  let failures = 0;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    redis = createRedisClient({ url: cluster.url, cluster: true }, { maxRetriesPerRequest: 2 }, { retryDelayOnClusterDown: 100 });
    const url = await recreateDatabase('svc_billing_test_hydration_shards');
    await migrateBillingDatabase(url);
    database = createBillingDatabase(url, () => undefined);
    adapter = new HydrationRedisAdapter(redis);
    const service = new HydrationService(new HydrationRepository(database.prisma), adapter, logger, { graceMs: 2_000 });
    loop = new HydrationLoop(service, adapter, logger, { intervalMs: 3_600_000, batch: 10, onEpochChange: async () => {
      changes += 1;
      if (failures > 0) {
        failures -= 1;
        throw new Error('the job schedulers could not be written');
      }
    } });
  }, 90_000);

  afterAll(async () => {
    loop?.stop();
    await database?.close();
    if (redis !== undefined) await closeRedisClient(redis);
    await cluster?.stop();
  });

  it('calls its epoch-change hook when one master comes back empty, again after a failed call and then never again; the grace period starts again', async () => {
    expect(await loop.round()).toBe(0);
    const before = await adapter.ensureEpoch();
    expect(before.values.size).toBe(3);
    expect(await loop.round()).toBe(0);
    expect(changes).toBe(0);

    const [victim] = await cluster.masters();
    if (victim === undefined) throw new Error('no master');
    failures = 1;
    await cluster.kill(victim);
    await cluster.restart(victim);
    // The first call fails (that round throws); the loss is not forgotten: the next round calls it again.
    await waitFor('a round to run after the restart', async () => (await loop.round()) >= 0 ? true : undefined, { timeoutMs: 20_000 });
    expect([changes, failures]).toEqual([2, 0]);
    const after = await adapter.ensureEpoch();
    const changed = [...after.values].filter(([key, value]) => before.values.get(key) !== value);
    expect(changed).toHaveLength(1);
    // The newest epoch is the one written again: the grace period runs from it.
    expect(after.createdMs).toBeGreaterThan(before.createdMs ?? Number.POSITIVE_INFINITY);
    await loop.round();
    expect(changes).toBe(2);
  });
});
