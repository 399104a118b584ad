import { Cluster, Redis } from 'ioredis';
import { keySlot, parseRedisEndpoint } from '@svc/redis-client';
import { startRedisCluster, waitFor } from '@svc/test-kit';
import type { ClusterNode, RedisCluster } from '@svc/test-kit';
import { ClusterTransport } from '../src/redis/batch-transport';
import { RedisBatch } from '../src/redis/redis-batch';
import { RespConnection } from '../src/redis/resp-connection';
import type { MeasuredText } from '../src/redis/resp-connection';

/** A value sent as the result cache sends an entry: its UTF-8 length measured once. */
function measured(text: string): MeasuredText {
  return { text, byteLength: Buffer.byteLength(text) };
}

/** The search batch on a real 3-master Redis Cluster: routing by slot, and redirections followed. */
describe('RedisBatch on a Redis Cluster', () => {
  let cluster: RedisCluster;
  let client: Cluster;
  let batch: RedisBatch;
  const nodeClients = new Map<number, Redis>();
  const nodeClient = (node: ClusterNode): Redis => {
    let c = nodeClients.get(node.port);
    if (c === undefined) {
      c = new Redis({ host: '127.0.0.1', port: node.port });
      nodeClients.set(node.port, c);
    }
    return c;
  };
  /** A key whose slot the given node serves now. */
  const keyOn = async (node: ClusterNode, prefix: string): Promise<string> => {
    for (let i = 0; ; i++) {
      const key = `{${prefix}${i}}:k`;
      if ((await cluster.masterOf(keySlot(key))) === node) return key;
    }
  };

  beforeAll(async () => {
    cluster = await startRedisCluster();
    client = new Cluster(cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })));
    batch = new RedisBatch(new ClusterTransport({ url: cluster.url, cluster: true }, { clientName: 'svc-test-cluster-batch', refreshMinGapMs: 10 }));
    batch.defineScript('testPair', { numberOfKeys: 2, lua: "return {redis.call('GET', KEYS[1]) or false, redis.call('GET', KEYS[2]) or false}" });
    await waitFor('the batch to know the slot map', () => (batch.status === 'ready' ? true : undefined));
  }, 60_000);

  afterAll(async () => {
    batch?.close();
    client?.disconnect();
    for (const c of nodeClients.values()) c.disconnect();
    await cluster?.stop();
  });

  it('sends each command of one flush to its slot\'s master, one connection per master, and answers each pipeline in order', async () => {
    const keys = await Promise.all(cluster.nodes.map((node, i) => keyOn(node, `route${i}-`)));
    const replies = await Promise.all(keys.map((key, i) => batch.pipeline().add('set', key, `v${i}`).add('get', key).exec()));
    replies.forEach((reply, i) => expect(reply).toEqual([[null, 'OK'], [null, `v${i}`]]));
    for (const [i, node] of cluster.nodes.entries()) {
      expect(await nodeClient(node).get(keys[i] ?? '')).toBe(`v${i}`);
      const clients = String(await nodeClient(node).client('LIST'));
      expect(clients.split('\n').filter((line) => line.includes('name=svc-test-cluster-batch'))).toHaveLength(1);
    }
  });

  it('follows MOVED after a slot moved to another master, and ASK while it is being moved', async () => {
    const [first, second] = cluster.nodes;
    if (first === undefined || second === undefined) throw new Error('three nodes expected');
    const key = await keyOn(first, 'moved-');
    await client.set(key, 'before');
    expect(await batch.pipeline().add('get', key).exec()).toEqual([[null, 'before']]);
    await cluster.migrateSlot(keySlot(key), second);
    // The batch still routes to the old master: MOVED takes it to the new one (a measured text too).
    expect(await batch.pipeline().add('get', key).add('set', key, measured('après'), 'PX', 60_000).exec()).toEqual([[null, 'before'], [null, 'OK']]);
    expect(await client.get(key)).toBe('après');

    // Half-moved: the key already on the importing node, the slot still owned by the source: ASK.
    const askKey = await keyOn(first, 'ask-');
    const slot = keySlot(askKey);
    await client.set(askKey, 'asked');
    await cluster.beginSlotMigration(slot, first, second);
    await cluster.migrateKeys(first, second, [askKey]);
    expect(await batch.pipeline().add('get', askKey).exec()).toEqual([[null, 'asked']]);
    // ASKING and a command with a measured text, written together to the importing node.
    expect(await batch.pipeline().add('set', askKey, measured('asked é')).add('get', askKey).exec()).toEqual([[null, 'OK'], [null, 'asked é']]);
    await cluster.endSlotMigration(slot, first, second);
  });

  it('sends a multi-key script again after TRYAGAIN (its keys split by a migration in progress), once the slot has moved', async () => {
    const [first, , third] = cluster.nodes;
    if (first === undefined || third === undefined) throw new Error('three nodes expected');
    const a = await keyOn(first, 'pair-');
    const b = a.replace(':k', ':other');
    const slot = keySlot(a);
    await client.set(a, 'A');
    await client.set(b, 'B');
    await cluster.beginSlotMigration(slot, first, third);
    await cluster.migrateKeys(first, third, [a]);
    const pending = batch.pipeline().add('testPair', a, b).exec();
    // The script keeps getting TRYAGAIN until the other key has moved too and the slot is owned.
    await new Promise((resolve) => setTimeout(resolve, 50));
    await cluster.migrateKeys(first, third, [b]);
    await cluster.endSlotMigration(slot, first, third);
    expect(await pending).toEqual([[null, ['A', 'B']]]);
  });

  it('on a single-node connection pointed at a cluster node, gives MOVED to the caller instead of following it', async () => {
    const [first, second] = cluster.nodes;
    if (first === undefined || second === undefined) throw new Error('three nodes expected');
    const key = await keyOn(second, 'single-');
    const single = new RedisBatch(new RespConnection(parseRedisEndpoint(`redis://127.0.0.1:${first.port}`)));
    try {
      const [[error]] = await single.pipeline().add('get', key).exec() as [[Error | null, unknown]];
      expect(error?.message).toMatch(/^MOVED \d+ 127\.0\.0\.1:\d+$/);
    } finally {
      single.close();
    }
  });
});
