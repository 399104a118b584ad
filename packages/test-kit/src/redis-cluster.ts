import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { waitFor } from './wait';

/**
 * A Redis Cluster on loopback for tests: `masters` redis-server processes in cluster mode
 * (and `replicasPerMaster` replicas of each), joined with `redis-cli --cluster create`,
 * ready once every node reports cluster_state:ok and the same slot map.
 */
export interface RedisCluster {
  /** The seed list for REDIS_URL (every master), with REDIS_CLUSTER=true. */
  readonly url: string;
  readonly nodes: readonly ClusterNode[];
  /** The node currently serving `slot` as master. */
  masterOf(slot: number): Promise<ClusterNode>;
  /**
   * Moves one slot (and its keys) to another master, the way `redis-cli --cluster reshard`
   * does: IMPORTING on the target, MIGRATING on the source, MIGRATE the keys in batches of
   * `batch` (waiting `pauseMs` between batches, so clients meet ASK and TRYAGAIN meanwhile),
   * then the new owner on every node (clients meet MOVED).
   */
  migrateSlot(slot: number, to: ClusterNode, options?: { batch?: number; pauseMs?: number }): Promise<void>;
  /**
   * migrateSlot's steps, for a test that stops between them: `beginSlotMigration` marks the
   * slot IMPORTING on `to` and MIGRATING on `from`, `migrateKeys` moves keys of it (clients meet
   * ASK, and TRYAGAIN when a multi-key command's keys are split), `endSlotMigration` makes `to`
   * the slot's owner on every master (clients meet MOVED).
   */
  beginSlotMigration(slot: number, from: ClusterNode, to: ClusterNode): Promise<void>;
  migrateKeys(from: ClusterNode, to: ClusterNode, keys: readonly string[]): Promise<void>;
  endSlotMigration(slot: number, from: ClusterNode, to: ClusterNode): Promise<void>;
  /** Empties every master (FLUSHALL): a cluster that lost its data. */
  flushAll(): Promise<void>;
  /** The nodes serving slots as masters now (asked of a node that is up). */
  masters(): Promise<ClusterNode[]>;
  /** The replicas of `master` now (asked of a node that is up). */
  replicasOf(master: ClusterNode): Promise<ClusterNode[]>;
  /** Kills a node with SIGKILL (no shutdown, nothing saved) and waits for its process to end. */
  kill(node: ClusterNode): Promise<void>;
  /**
   * Waits until every slot `dead` served as a master is served by another node, and every
   * node that is up reports cluster_state:ok with that map (a replica was promoted).
   * Returns the node that took over.
   */
  waitForFailover(dead: ClusterNode, options?: { timeoutMs?: number }): Promise<ClusterNode>;
  /**
   * Starts a killed node again on its port with its cluster configuration (nodes.conf) and no
   * data (nodes never persist: no RDB, no AOF): a master restarted empty keeps its slots; one
   * that lost them in a failover rejoins as a replica. Waits until every node that is up reports
   * cluster_state:ok and knows every node.
   */
  restart(node: ClusterNode): Promise<void>;
  /** Stops every node by its PID and removes its files. */
  stop(): Promise<void>;
}

export interface ClusterNode {
  readonly port: number;
  /** The process's id (a new one after `restart`). */
  readonly pid: number;
  readonly address: string;
  /** The node's cluster id (CLUSTER MYID). */
  readonly id: string;
}

export interface RedisClusterOptions {
  masters?: number;
  replicasPerMaster?: number;
  /**
   * Ports to take the nodes' ports from, `<first>-<last>` (each node also uses port + 10000
   * for the cluster bus). Default: TEST_REDIS_CLUSTER_PORTS, else 7100-7199.
   */
  ports?: string;
}

/** The redis-server and redis-cli on PATH (Debian's redis-server package has both). */
const SERVER = process.env.REDIS_SERVER_BIN ?? 'redis-server';
const CLI = process.env.REDIS_CLI_BIN ?? 'redis-cli';
/** cluster-node-timeout of every node: a dead master is marked failed, and its replica elected, after about this long. */
const NODE_TIMEOUT_MS = 1000;

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function takePorts(count: number, range: string): Promise<number[]> {
  const [first, last] = range.split('-').map(Number);
  if (first === undefined || last === undefined || !Number.isInteger(first) || !Number.isInteger(last) || last + 10000 > 65535) {
    throw new Error(`bad port range "${range}" (want <first>-<last>, last + 10000 at most 65535)`);
  }
  const ports: number[] = [];
  for (let port = first; port <= last && ports.length < count; port++) {
    if ((await portFree(port)) && (await portFree(port + 10000))) ports.push(port);
  }
  if (ports.length < count) throw new Error(`not enough free ports for a Redis Cluster in ${range}`);
  return ports;
}

/** Starts a Redis Cluster on loopback (3 masters, no replicas unless told). */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const masters = options.masters ?? 3;
  const replicas = options.replicasPerMaster ?? 0;
  const ports = await takePorts(masters * (1 + replicas), options.ports ?? process.env.TEST_REDIS_CLUSTER_PORTS ?? '7100-7199');
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-cluster-'));
  const children: ChildProcess[] = [];
  const clients: Redis[] = [];
  const stop = async (): Promise<void> => {
    for (const client of clients) client.disconnect();
    await Promise.all(children.map((child) => new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        resolve();
        return;
      }
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    })));
    rmSync(dir, { recursive: true, force: true });
  };
  const spawnNode = (port: number): ChildProcess => spawn(SERVER, [
    '--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes',
    '--cluster-config-file', join(dir, `nodes-${port}.conf`), '--cluster-node-timeout', String(NODE_TIMEOUT_MS),
    '--dir', dir, '--save', '', '--appendonly', 'no', '--logfile', join(dir, `redis-${port}.log`),
    // A replica whose master just died takes over at once (no wait for a "better" replica).
    '--cluster-replica-validity-factor', '0',
  ], { stdio: 'ignore' });
  try {
    for (const port of ports) children.push(spawnNode(port));
    const nodeClients = ports.map((port) => new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => 50 }));
    clients.push(...nodeClients);
    for (const client of nodeClients) {
      client.on('error', () => undefined);
      await waitFor('a cluster node to answer', async () => ((await client.ping().catch(async () => {
        if (client.status === 'wait') await client.connect().catch(() => undefined);
        return undefined;
      })) === 'PONG' ? true : undefined), { timeoutMs: 10_000 });
    }
    const created = spawnSync(CLI, ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', String(replicas), '--cluster-yes'], { encoding: 'utf8', timeout: 30_000 });
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    const up = new Set<number>(ports.map((_, index) => index));
    const upClients = (): Redis[] => nodeClients.filter((_, index) => up.has(index));
    // Every node reports ok, knows every node and every master's slots; with replicas, every
    // replica has its master's data (master_link_status:up) and every master knows its replicas.
    const settled = async (): Promise<true | undefined> => {
      for (const [index, client] of nodeClients.entries()) {
        if (!up.has(index)) continue;
        const info = String(await client.cluster('INFO'));
        if (!info.includes('cluster_state:ok') || !info.includes('cluster_slots_assigned:16384')) return undefined;
        if (!info.includes(`cluster_known_nodes:${ports.length}`)) return undefined;
        const replication = String(await client.info('replication'));
        if (replication.includes('role:slave') && !replication.includes('master_link_status:up')) return undefined;
        // A master serving slots has all its replicas linked (when every node is up).
        const servesSlots = ((await client.cluster('SLOTS')) as unknown as [number, number, [string, number]][]).some((range) => range[2][1] === ports[index]);
        if (replication.includes('role:master') && replicas > 0 && servesSlots && up.size === ports.length) {
          const connected = Number(/connected_slaves:(\d+)/.exec(replication)?.[1] ?? 0);
          if (connected < replicas) return undefined;
        }
      }
      return true;
    };
    await waitFor('the cluster to be ok on every node', settled, { timeoutMs: 60_000 });
    const nodes: ClusterNode[] = [];
    for (const [index, client] of nodeClients.entries()) {
      const port = ports[index] ?? 0;
      const id = String(await client.cluster('MYID'));
      nodes.push({ port, get pid() {
        return children[index]?.pid ?? 0;
      }, address: `127.0.0.1:${port}`, id });
    }
    const indexOf = (node: ClusterNode): number => {
      const index = nodes.indexOf(node);
      if (index < 0) throw new Error('not a node of this cluster');
      return index;
    };
    const clientOf = (node: ClusterNode): Redis => nodeClients[indexOf(node)] as Redis;
    /** CLUSTER SLOTS from the first node that is up and answers. */
    const slotMap = async (): Promise<[number, number, [string, number, string], ...unknown[]][]> => {
      for (const client of upClients()) {
        const reply = await client.cluster('SLOTS').catch(() => undefined);
        if (reply !== undefined && reply.length > 0) return reply as unknown as [number, number, [string, number, string], ...unknown[]][];
      }
      throw new Error('no node of the cluster answers CLUSTER SLOTS');
    };
    const nodeAt = (port: number): ClusterNode | undefined => nodes.find((n) => n.port === port);
    const masterOf = async (slot: number): Promise<ClusterNode> => {
      const range = (await slotMap()).find(([start, end]) => slot >= start && slot <= end);
      const node = range === undefined ? undefined : nodeAt(range[2][1]);
      if (node === undefined) throw new Error(`no master serves slot ${slot}`);
      return node;
    };
    const mastersNow = async (): Promise<ClusterNode[]> => {
      const out = new Set<ClusterNode>();
      for (const range of await slotMap()) {
        const node = nodeAt(range[2][1]);
        if (node !== undefined) out.add(node);
      }
      return [...out];
    };
    const primaries = async (): Promise<Redis[]> => {
      const out: Redis[] = [];
      for (const client of upClients()) if (String(await client.info('replication')).includes('role:master')) out.push(client);
      return out;
    };
    const beginSlotMigration = async (slot: number, from: ClusterNode, to: ClusterNode): Promise<void> => {
      await clientOf(to).cluster('SETSLOT', slot, 'IMPORTING', from.id);
      await clientOf(from).cluster('SETSLOT', slot, 'MIGRATING', to.id);
    };
    const migrateKeys = async (from: ClusterNode, to: ClusterNode, keys: readonly string[]): Promise<void> => {
      await clientOf(from).call('MIGRATE', '127.0.0.1', String(to.port), '', '0', '5000', 'KEYS', ...keys);
    };
    const endSlotMigration = async (slot: number, from: ClusterNode, to: ClusterNode): Promise<void> => {
      const source = clientOf(from);
      const target = clientOf(to);
      await target.cluster('SETSLOT', slot, 'NODE', to.id);
      await source.cluster('SETSLOT', slot, 'NODE', to.id);
      for (const client of await primaries()) {
        if (client !== source && client !== target) await client.cluster('SETSLOT', slot, 'NODE', to.id);
      }
    };
    /** The first slot of each range a killed node served, by node index. */
    const servedBefore = new Map<number, number[]>();
    const exited = (child: ChildProcess): Promise<void> => new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        resolve();
        return;
      }
      child.once('exit', () => resolve());
    });
    return {
      // Every node is a seed (a client finds the cluster through any node that is up).
      url: ports.map((p) => `redis://127.0.0.1:${p}`).join(','),
      nodes,
      masterOf,
      masters: mastersNow,
      async replicasOf(master) {
        const lines = String(await (upClients()[0] as Redis).cluster('NODES')).split('\n');
        return lines.map((line) => line.split(' ')).filter((fields) => fields[3] === master.id && (fields[2] ?? '').includes('slave'))
          .map((fields) => nodes.find((n) => n.id === fields[0])).filter((n): n is ClusterNode => n !== undefined);
      },
      async kill(node) {
        const index = indexOf(node);
        const child = children[index];
        if (child === undefined) throw new Error('no process for this node');
        const served = (await slotMap()).filter((range) => range[2][1] === node.port).map(([start]) => start);
        if (served.length > 0) servedBefore.set(index, served);
        up.delete(index);
        const done = exited(child);
        child.kill('SIGKILL');
        await done;
      },
      async waitForFailover(dead, { timeoutMs = 30_000 } = {}) {
        return waitFor(`a replica to take over from ${dead.address}`, async () => {
          const map = await slotMap();
          if (map.some((range) => range[2][1] === dead.port)) return undefined;
          for (const client of upClients()) {
            const info = String(await client.cluster('INFO'));
            if (!info.includes('cluster_state:ok')) return undefined;
            const seen = (await client.cluster('SLOTS')) as unknown as [number, number, [string, number]][];
            if (seen.some((range) => range[2][1] === dead.port)) return undefined;
          }
          const [slot] = servedBefore.get(indexOf(dead)) ?? [];
          if (slot === undefined) throw new Error(`${dead.address} served no slot when it was killed`);
          return masterOf(slot);
        }, { timeoutMs, intervalMs: 50 });
      },
      async restart(node) {
        const index = indexOf(node);
        const child = children[index];
        if (child !== undefined && child.exitCode === null && child.signalCode === null) throw new Error(`${node.address} is still running`);
        children[index] = spawnNode(node.port);
        up.add(index);
        const client = clientOf(node);
        await waitFor(`${node.address} to answer again`, async () => ((await client.ping().catch(() => undefined)) === 'PONG' ? true : undefined), { timeoutMs: 10_000 });
        await waitFor('the cluster to be ok on every node after the restart', settled, { timeoutMs: 60_000 });
      },
      async migrateSlot(slot, to, { batch = 10, pauseMs = 0 } = {}) {
        const from = await masterOf(slot);
        if (from === to) return;
        await beginSlotMigration(slot, from, to);
        for (;;) {
          const keys = (await clientOf(from).cluster('GETKEYSINSLOT', slot, batch)) as string[];
          if (keys.length === 0) break;
          await migrateKeys(from, to, keys);
          if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
        }
        await endSlotMigration(slot, from, to);
      },
      beginSlotMigration,
      migrateKeys,
      endSlotMigration,
      async flushAll() {
        for (const client of await primaries()) await client.flushall();
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The Redis topologies the end-to-end suites run on. */
export type RedisTopology = 'single' | 'cluster';

/**
 * Every topology, for `describe.each`: a single Redis and a 3-master Redis Cluster.
 * TEST_REDIS_TOPOLOGIES (e.g. `single`) narrows it while working on one suite.
 */
export const REDIS_TOPOLOGIES: readonly RedisTopology[] = (() => {
  const all: RedisTopology[] = ['single', 'cluster'];
  const wanted = process.env.TEST_REDIS_TOPOLOGIES?.split(',').map((t) => t.trim()).filter((t) => t !== '');
  if (wanted === undefined || wanted.length === 0) return all;
  return all.filter((topology) => wanted.includes(topology));
})();
