import { Cluster } from 'ioredis';
import { keySlot } from '@svc/redis-client';
import { startRedisCluster } from '@svc/test-kit';
import type { RedisCluster, RedisClusterOptions } from '@svc/test-kit';

/** A cluster and a Cluster client of it for the calling describe, started before its tests and stopped after. */
function useCluster(options: RedisClusterOptions, timeoutMs: number): { readonly cluster: RedisCluster; readonly client: Cluster } {
  let cluster: RedisCluster | undefined;
  let client: Cluster | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster(options);
    client = new Cluster(cluster.url.split(',').map((url) => ({ host: new URL(url).hostname, port: Number(new URL(url).port) })));
  }, timeoutMs);
  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  });
  return {
    get cluster() {
      if (cluster === undefined) throw new Error('the cluster has not started');
      return cluster;
    },
    get client() {
      if (client === undefined) throw new Error('the cluster has not started');
      return client;
    },
  };
}

/** The test helper's cluster is a real 3-master Redis Cluster, and a slot migrates with its keys. */
describe('startRedisCluster', () => {
  const run = useCluster({}, 60_000);

  it('starts three masters that split the slots, and moves a slot with its keys to another master', async () => {
    expect(run.cluster.nodes).toHaveLength(3);
    const masters = new Set<number>();
    for (const slot of [0, 6000, 12000]) masters.add((await run.cluster.masterOf(slot)).port);
    expect(masters.size).toBe(3);
    const key = '{a:migrate}:bal';
    await run.client.set(key, '42');
    const slot = keySlot(key);
    const from = await run.cluster.masterOf(slot);
    const to = run.cluster.nodes.find((node) => node !== from);
    if (to === undefined) throw new Error('no other node');
    await run.cluster.migrateSlot(slot, to);
    expect((await run.cluster.masterOf(slot)).port).toBe(to.port);
    // The client follows the MOVED to the new owner.
    expect(await run.client.get(key)).toBe('42');
  });
});

/**
 * With a replica per master: a master killed with SIGKILL is replaced by its replica, which
 * has its data; the killed node started again (empty) rejoins as a replica. Without a
 * replica, a master restarted empty keeps its slots and has lost its keys.
 */
describe('startRedisCluster with a replica per master', () => {
  const run = useCluster({ replicasPerMaster: 1 }, 90_000);

  it('starts 3 masters with one replica each; a killed master\'s replica takes over with its data; the killed node rejoins empty as a replica', async () => {
    expect(run.cluster.nodes).toHaveLength(6);
    const masters = await run.cluster.masters();
    expect(masters).toHaveLength(3);
    for (const master of masters) expect(await run.cluster.replicasOf(master)).toHaveLength(1);
    const key = '{a:failover}:bal';
    await run.client.set(key, '42');
    const master = await run.cluster.masterOf(keySlot(key));
    const [replica] = await run.cluster.replicasOf(master);
    // The write reached the replica before the kill (replication is asynchronous). WAIT has no
    // key, so a Cluster client would send it to any node: it goes on the connection to the
    // key's master that carried the SET, which is what WAIT counts.
    const onMaster = run.client.nodes('master').find((node) => node.options.port === master.port);
    if (onMaster === undefined) throw new Error('no client connection to the key\'s master');
    expect(await onMaster.call('WAIT', '1', '2000')).toBe(1);
    const oldPid = master.pid;
    await run.cluster.kill(master);
    expect(() => process.kill(oldPid, 0)).toThrow();
    const taker = await run.cluster.waitForFailover(master);
    expect(taker).toBe(replica);
    expect((await run.cluster.masterOf(keySlot(key))).port).toBe(replica?.port);
    expect(await run.client.get(key)).toBe('42');
    await run.cluster.restart(master);
    expect(master.pid).not.toBe(oldPid);
    expect(await run.cluster.replicasOf(taker)).toEqual([master]);
    expect(await run.client.get(key)).toBe('42');
  }, 90_000);
});

describe('startRedisCluster: a master without a replica restarted empty', () => {
  const run = useCluster({}, 60_000);

  it('keeps its slots and has lost its keys; the other masters keep theirs', async () => {
    const lost = '{a:lost}:bal';
    const master = await run.cluster.masterOf(keySlot(lost));
    let kept = '';
    for (let i = 0; kept === ''; i += 1) if ((await run.cluster.masterOf(keySlot(`{a:kept${i}}:bal`))) !== master) kept = `{a:kept${i}}:bal`;
    await run.client.set(lost, '1');
    await run.client.set(kept, '2');
    await run.cluster.kill(master);
    await run.cluster.restart(master);
    expect(await run.cluster.masterOf(keySlot(lost))).toBe(master);
    expect(await run.client.get(lost)).toBeNull();
    expect(await run.client.get(kept)).toBe('2');
  }, 60_000);
});
