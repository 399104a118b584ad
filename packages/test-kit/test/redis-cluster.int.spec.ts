import { Cluster } from 'ioredis';
import { keySlot } from '@svc/redis-client';
import { startRedisCluster } from '@svc/test-kit';
import type { RedisCluster } from '@svc/test-kit';

/** The test helper's cluster is a real 3-master Redis Cluster, and a slot migrates with its keys. */
describe('startRedisCluster', () => {
  let cluster: RedisCluster;
  let client: Cluster;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    client = new Cluster(cluster.url.split(',').map((url) => ({ host: new URL(url).hostname, port: Number(new URL(url).port) })));
  }, 60_000);

  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  it('starts three masters that split the slots, and moves a slot with its keys to another master', async () => {
    expect(cluster.nodes).toHaveLength(3);
    const masters = new Set<number>();
    for (const slot of [0, 6000, 12000]) masters.add((await cluster.masterOf(slot)).port);
    expect(masters.size).toBe(3);
    const key = '{a:migrate}:bal';
    await client.set(key, '42');
    const slot = keySlot(key);
    const from = await cluster.masterOf(slot);
    const to = cluster.nodes.find((node) => node !== from);
    if (to === undefined) throw new Error('no other node');
    await cluster.migrateSlot(slot, to);
    expect((await cluster.masterOf(slot)).port).toBe(to.port);
    // The client follows the MOVED to the new owner.
    expect(await client.get(key)).toBe('42');
  });
});
