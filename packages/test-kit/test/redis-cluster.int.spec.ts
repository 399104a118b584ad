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

/**
 * With a replica per master: a master killed with SIGKILL is replaced by its replica, which
 * has its data; the killed node started again (empty) rejoins as a replica. Without a
 * replica, a master restarted empty keeps its slots and has lost its keys.
 */
describe('startRedisCluster with a replica per master', () => {
  let cluster: RedisCluster;
  let client: Cluster;

  beforeAll(async () => {
    cluster = await startRedisCluster({ replicasPerMaster: 1 });
    client = new Cluster(cluster.url.split(',').map((url) => ({ host: new URL(url).hostname, port: Number(new URL(url).port) })));
  }, 90_000);

  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  it('starts 3 masters with one replica each; a killed master\'s replica takes over with its data; the killed node rejoins empty as a replica', async () => {
    expect(cluster.nodes).toHaveLength(6);
    const masters = await cluster.masters();
    expect(masters).toHaveLength(3);
    for (const master of masters) expect(await cluster.replicasOf(master)).toHaveLength(1);
    const key = '{a:failover}:bal';
    await client.set(key, '42');
    const master = await cluster.masterOf(keySlot(key));
    const [replica] = await cluster.replicasOf(master);
    // The write reached the replica before the kill (replication is asynchronous).
    await client.call('WAIT', '1', '2000');
    const oldPid = master.pid;
    await cluster.kill(master);
    expect(() => process.kill(oldPid, 0)).toThrow();
    const taker = await cluster.waitForFailover(master);
    expect(taker).toBe(replica);
    expect((await cluster.masterOf(keySlot(key))).port).toBe(replica?.port);
    expect(await client.get(key)).toBe('42');
    await cluster.restart(master);
    expect(master.pid).not.toBe(oldPid);
    expect(await cluster.replicasOf(taker)).toEqual([master]);
    expect(await client.get(key)).toBe('42');
  }, 90_000);
});

describe('startRedisCluster: a master without a replica restarted empty', () => {
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

  it('keeps its slots and has lost its keys; the other masters keep theirs', async () => {
    const lost = '{a:lost}:bal';
    const master = await cluster.masterOf(keySlot(lost));
    let kept = '';
    for (let i = 0; kept === ''; i += 1) if ((await cluster.masterOf(keySlot(`{a:kept${i}}:bal`))) !== master) kept = `{a:kept${i}}:bal`;
    await client.set(lost, '1');
    await client.set(kept, '2');
    await cluster.kill(master);
    await cluster.restart(master);
    expect(await cluster.masterOf(keySlot(lost))).toBe(master);
    expect(await client.get(lost)).toBeNull();
    expect(await client.get(kept)).toBe('2');
  }, 60_000);
});
