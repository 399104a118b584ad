import { Cluster, Redis } from 'ioredis';
import type { ChainableCommander, ClusterOptions, RedisOptions } from 'ioredis';
import { keySlot } from './slots';
import type { ConnectionOptions } from 'node:tls';

/** A client of either topology: one Redis, or a Redis Cluster (ioredis routes each command to its slot's master). */
export type RedisClient = Redis | Cluster;

/**
 * Where and how to reach one Redis node, as parsed out of a `redis://` or `rediss://` URL
 * (host, port, credentials, database, TLS).
 */
export interface RedisEndpoint {
  readonly host: string;
  readonly port: number;
  readonly username?: string;
  readonly password?: string;
  readonly db: number;
  /** Set for rediss:// (an empty object: TLS with the system's trust store). */
  readonly tls?: ConnectionOptions;
}

/** What REDIS_URL and REDIS_CLUSTER say, together. */
export interface RedisTarget {
  /** One URL, or (cluster) a comma-separated list of seed nodes: any node of the cluster will do. */
  readonly url: string;
  readonly cluster: boolean;
}

/** A REDIS_URL that cannot be used; the message never contains a password. */
export class RedisUrlError extends Error {
  override readonly name = 'RedisUrlError';
}

/** The URLs of a REDIS_URL value: one, or a comma-separated list (blanks around commas ignored). */
export function splitRedisUrls(value: string): string[] {
  return value.split(',').map((part) => part.trim()).filter((part) => part !== '');
}

/** One `redis://[user[:password]@]host[:port][/db]` (or `rediss://`) as an endpoint. */
export function parseRedisEndpoint(value: string): RedisEndpoint {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new RedisUrlError('a Redis URL is not a URL');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new RedisUrlError('a Redis URL must use redis:// or rediss://');
  const path = url.pathname.replace(/^\/+/, '');
  const db = path === '' ? 0 : Number(path);
  if (!Number.isSafeInteger(db) || db < 0) throw new RedisUrlError('a Redis URL\'s database must be a non-negative integer');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1';
  const port = url.port === '' ? 6379 : Number(url.port);
  const username = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  return {
    host,
    port,
    db,
    ...(username === '' ? {} : { username }),
    ...(password === '' ? {} : { password }),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/**
 * The endpoints of a target: the one node, or the cluster's seed nodes. Throws
 * RedisUrlError on a list without cluster mode, on a database other than 0 in cluster mode
 * (a Redis Cluster has database 0 only), and on seeds that differ in credentials or TLS.
 */
export function redisEndpoints(target: RedisTarget): RedisEndpoint[] {
  const urls = splitRedisUrls(target.url);
  if (urls.length === 0) throw new RedisUrlError('REDIS_URL names no Redis');
  const endpoints = urls.map(parseRedisEndpoint);
  if (!target.cluster) {
    if (endpoints.length > 1) throw new RedisUrlError('REDIS_URL lists several nodes: set REDIS_CLUSTER=true for a Redis Cluster');
    return endpoints;
  }
  const [first] = endpoints;
  for (const endpoint of endpoints) {
    if (endpoint.db !== 0) throw new RedisUrlError('a Redis Cluster has database 0 only: remove the /<db> from REDIS_URL');
    if (first !== undefined && (endpoint.username !== first.username || endpoint.password !== first.password || (endpoint.tls === undefined) !== (first.tls === undefined))) {
      throw new RedisUrlError('every seed node in REDIS_URL must use the same credentials and scheme');
    }
  }
  return endpoints;
}

/**
 * Options for one node's connection (a single Redis, or each node of a cluster). The
 * cluster-wide ones (`enableOfflineQueue`, `lazyConnect`, `enableAutoPipelining`) apply to
 * the Cluster object as well.
 */
export type RedisClientOptions = Omit<RedisOptions, 'host' | 'port' | 'path' | 'username' | 'password' | 'db' | 'tls' | 'sentinels'>;

/** Cluster-only settings on top (slot-map refresh, redirections); ignored for a single node. */
export type ClusterOnlyOptions = Pick<ClusterOptions, 'slotsRefreshInterval' | 'slotsRefreshTimeout' | 'maxRedirections' | 'retryDelayOnFailover' | 'retryDelayOnClusterDown' | 'retryDelayOnTryAgain' | 'retryDelayOnMoved'>;

/**
 * ioredis's own periodic slot-map refresh is off by default: it re-reads the map on every
 * MOVED and when a node's connection closes (a failover), which is what these clients need,
 * and its timer, re-armed by a refresh that ends after disconnect(), held a process open
 * after shutdown.
 */
export const DEFAULT_SLOTS_REFRESH_INTERVAL_MS = 0;

/**
 * An ioredis client for REDIS_URL and REDIS_CLUSTER: `new Redis(...)` for one node, or
 * `new Cluster(seeds, ...)` that routes each command to its slot's master, follows MOVED
 * and ASK and refreshes its slot map (on a redirection, and when a node's connection
 * closes). Every service builds its clients here, so both
 * topologies behave the same everywhere.
 */
export function createRedisClient(target: RedisTarget, options: RedisClientOptions = {}, clusterOptions: ClusterOnlyOptions = {}): RedisClient {
  const endpoints = redisEndpoints(target);
  const [first] = endpoints;
  if (first === undefined) throw new RedisUrlError('REDIS_URL names no Redis');
  const auth: RedisOptions = {
    ...(first.username === undefined ? {} : { username: first.username }),
    ...(first.password === undefined ? {} : { password: first.password }),
    ...(first.tls === undefined ? {} : { tls: first.tls }),
  };
  if (!target.cluster) {
    return new Redis({ ...options, ...auth, host: first.host, port: first.port, db: first.db });
  }
  const { enableOfflineQueue, lazyConnect, enableAutoPipelining, ...nodeOptions } = options;
  return new Cluster(endpoints.map((e) => ({ host: e.host, port: e.port })), {
    slotsRefreshInterval: DEFAULT_SLOTS_REFRESH_INTERVAL_MS,
    ...clusterOptions,
    ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
    ...(lazyConnect === undefined ? {} : { lazyConnect }),
    ...(enableAutoPipelining === undefined ? {} : { enableAutoPipelining }),
    scaleReads: 'master',
    redisOptions: { ...nodeOptions, ...auth },
  });
}

/** True for a Cluster client. */
export function isCluster(client: RedisClient): client is Cluster {
  return client instanceof Cluster;
}

/**
 * The clients a keyspace-wide command must run on: the node itself, or every master of the
 * cluster (SCAN, DBSIZE and the like see one node's keys only).
 */
export function masters(client: RedisClient): Redis[] {
  return isCluster(client) ? client.nodes('master') : [client];
}

/**
 * Every key matching `pattern` (and `type`, when given), on every master, in batches as
 * SCAN returns them. SCAN never blocks Redis; a key may be seen twice, so callers must be
 * idempotent per key.
 */
export async function* scanKeys(client: RedisClient, pattern: string, type?: string, count = 1000): AsyncGenerator<string[]> {
  const walk = new KeyspaceWalk(client, pattern, type, count);
  for (let done = false; !done;) {
    const step = await walk.step(count);
    if (step.keys.length > 0) yield step.keys;
    done = step.passDone;
  }
}

/** What one step of a KeyspaceWalk found. */
export interface WalkStep {
  /** The keys matching the walk's pattern (and type) that this step's SCAN calls returned. */
  readonly keys: string[];
  /** This step finished a pass over every master: the next step starts a new pass. */
  readonly passDone: boolean;
}

/**
 * A SCAN over the keyspace that goes on where it stopped: each step walks about a given number
 * of keys (in SCAN calls of `count` keys each, at least one), so a walk's cost per step is
 * bounded however many keys Redis holds (the result cache's entries can be millions:
 * docs/decisions/0036).
 * A pass covers every master in turn; an error ends the pass (the next step starts again).
 * As with scanKeys, a key may be seen twice, and one added during a pass may be missed.
 */
export class KeyspaceWalk {
  private nodes: Redis[] = [];
  private node = 0;
  private cursor = '0';
  private fresh = true;

  constructor(
    private readonly client: RedisClient,
    private readonly pattern: string,
    private readonly type?: string,
    private readonly count = 1000,
  ) {}

  /** Walks about `keys` keys (SCAN calls of `count` keys, at least one) from where the last step stopped. */
  async step(keys: number): Promise<WalkStep> {
    const calls = Math.max(1, Math.ceil(keys / this.count));
    if (this.fresh) {
      this.nodes = masters(this.client);
      this.node = 0;
      this.cursor = '0';
      this.fresh = false;
    }
    const found: string[] = [];
    try {
      for (let made = 0; made < calls; made += 1) {
        const node = this.nodes[this.node];
        if (node === undefined) return this.passEnded(found);
        const [next, batch] = this.type === undefined
          ? await node.scan(this.cursor, 'MATCH', this.pattern, 'COUNT', this.count)
          : await node.scan(this.cursor, 'MATCH', this.pattern, 'COUNT', this.count, 'TYPE', this.type);
        found.push(...batch);
        this.cursor = next;
        if (next === '0') {
          this.node += 1;
          if (this.node >= this.nodes.length) return this.passEnded(found);
        }
      }
    } catch (error) {
      this.fresh = true;
      throw error;
    }
    return { keys: found, passDone: false };
  }

  private passEnded(keys: string[]): WalkStep {
    this.fresh = true;
    return { keys, passDone: true };
  }
}

/** Closes a client: QUIT when connected, else drop the sockets at once. */
export async function closeRedisClient(client: RedisClient): Promise<void> {
  await client.quit().catch(() => client.disconnect());
}

/**
 * MGET in the order asked. On a Redis Cluster keys of different hash slots cannot share a
 * command (CROSSSLOT), so there it is one MGET per slot, sent together.
 */
export async function mgetAny(client: RedisClient, keys: readonly string[]): Promise<(string | null)[]> {
  if (keys.length === 0) return [];
  if (!isCluster(client)) return client.mget([...keys]);
  const bySlot = groupBySlot(keys.map((key, index) => ({ key, index })), (entry) => entry.key);
  const values = new Array<string | null>(keys.length).fill(null);
  await Promise.all(bySlot.map(async (entries) => {
    const got = await client.mget(entries.map((entry) => entry.key));
    entries.forEach((entry, k) => {
      values[entry.index] = got[k] ?? null;
    });
  }));
  return values;
}

/** One item's replies out of a pipeline: [error, reply] per command it added. */
export type PipelineReplies = [Error | null, unknown][];

/**
 * Commands about many keys, each item's commands on its own key (or keys of one slot): one
 * pipeline on a single Redis; on a Redis Cluster, where one pipeline must stay on one node,
 * one pipeline per hash slot, sent together. Resolves with each item's replies, in order.
 */
export async function pipelineEach<T>(client: RedisClient, items: readonly T[], keyOf: (item: T) => string, add: (pipeline: ChainableCommander, item: T) => void): Promise<PipelineReplies[]> {
  if (items.length === 0) return [];
  const groups = isCluster(client) ? groupBySlot(items.map((item, index) => ({ item, index })), (entry) => keyOf(entry.item)) : [items.map((item, index) => ({ item, index }))];
  const out = new Array<PipelineReplies>(items.length);
  await Promise.all(groups.map(async (entries) => {
    const pipeline = client.pipeline();
    const counts = entries.map((entry) => {
      const before = pipeline.length;
      add(pipeline, entry.item);
      return pipeline.length - before;
    });
    const results = ((await pipeline.exec()) ?? []) as PipelineReplies;
    let at = 0;
    entries.forEach((entry, k) => {
      const count = counts[k] ?? 0;
      out[entry.index] = results.slice(at, at + count);
      at += count;
    });
  }));
  return out;
}

function groupBySlot<T>(entries: readonly T[], keyOf: (entry: T) => string): T[][] {
  const bySlot = new Map<number, T[]>();
  for (const entry of entries) {
    const slot = keySlot(keyOf(entry));
    const group = bySlot.get(slot);
    if (group === undefined) bySlot.set(slot, [entry]);
    else group.push(entry);
  }
  return [...bySlot.values()];
}
