import { CLUSTER_SLOTS, keySlot, redisEndpoints } from '@svc/redis-client';
import type { RedisEndpoint, RedisTarget } from '@svc/redis-client';
import { encodeCommand, RespConnection } from './resp-connection';
import type { RespConnectionOptions, RespReply, RespStatus } from './resp-connection';

/**
 * Where the search batch's commands go: the connection for a key's hash slot, and the
 * nodes a redirection names. One connection for a single Redis (BatchTransport.single);
 * one per master for a Redis Cluster (ClusterTransport).
 */
export interface BatchTransport {
  /** 'ready' when a batch is written at once to every node it needs. */
  readonly status: RespStatus;
  /** The connection for a command on `key` (null: a command without keys). */
  route(key: string | null): RespConnection;
  /**
   * After `MOVED <slot> <host:port>`: the slot is served there now; returns that node's
   * connection (null: this transport does not follow redirections, the reply is an error).
   */
  moved(slot: number, address: string): RespConnection | null;
  /** After `ASK <slot> <host:port>`: the node to ask once (null: not followed). */
  asked(address: string): RespConnection | null;
  close(): void;
}

/** One Redis: every command on one connection; redirections are errors (the node is not in cluster mode, or REDIS_CLUSTER is missing). */
export class SingleNodeTransport implements BatchTransport {
  constructor(private readonly connection: RespConnection) {}

  get status(): RespStatus {
    return this.connection.status;
  }

  route(): RespConnection {
    return this.connection;
  }

  moved(): null {
    return null;
  }

  asked(): null {
    return null;
  }

  close(): void {
    this.connection.close();
  }
}

export interface ClusterTransportOptions extends RespConnectionOptions {
  /** The slot map is read again this often even without a redirection or a failure. */
  readonly refreshIntervalMs?: number;
  /** At most one refresh per this interval when failures and redirections ask for one. */
  readonly refreshMinGapMs?: number;
}

interface Node {
  readonly connection: RespConnection;
  /** Refreshes in a row that found this node serving no slot (closed after two). */
  unused: number;
}

/**
 * A Redis Cluster for the search batch: one RespConnection per master, each command sent to
 * its key's slot's master, the slot map read with `CLUSTER SLOTS` from any node that answers.
 *
 * The map is read at start, every `refreshIntervalMs`, after a MOVED (a resharding or a
 * failover moved the slot) and after a node's connection fails (a master died: its replica
 * takes over and the next map names it). Until the first map is in, commands go to a seed
 * node and a MOVED takes them where they belong. A master that no longer serves any slot
 * keeps its connection for one more refresh (commands in flight on it still get their
 * reply, a MOVED), then it is closed.
 */
export class ClusterTransport implements BatchTransport {
  private readonly slots = new Array<RespConnection | undefined>(CLUSTER_SLOTS).fill(undefined);
  private readonly nodes = new Map<string, Node>();
  private readonly seeds: RedisEndpoint[];
  private mapped = false;
  private closed = false;
  private refreshing = false;
  private refreshQueued = false;
  private lastRefreshAt = 0;
  private readonly timer: NodeJS.Timeout;
  private gapTimer: NodeJS.Timeout | null = null;

  constructor(target: RedisTarget, private readonly options: ClusterTransportOptions = {}) {
    this.seeds = redisEndpoints({ ...target, cluster: true });
    this.timer = setInterval(() => this.refresh(), options.refreshIntervalMs ?? 5_000);
    this.timer.unref();
    this.refresh();
  }

  get status(): RespStatus {
    if (this.closed) return 'closed';
    if (!this.mapped) return 'connecting';
    let status: RespStatus = 'ready';
    for (const connection of new Set(this.slots)) {
      if (connection === undefined) return 'down';
      if (connection.status === 'down' || connection.status === 'closed') return 'down';
      if (connection.status === 'connecting') status = 'connecting';
    }
    return status;
  }

  route(key: string | null): RespConnection {
    const connection = key === null ? undefined : this.slots[keySlot(key)];
    return connection ?? this.anyNode();
  }

  moved(slot: number, address: string): RespConnection | null {
    const connection = this.node(address);
    if (connection === null) return null;
    if (slot >= 0 && slot < CLUSTER_SLOTS) this.slots[slot] = connection;
    this.requestRefresh();
    return connection;
  }

  asked(address: string): RespConnection | null {
    return this.node(address);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    if (this.gapTimer !== null) clearTimeout(this.gapTimer);
    for (const { connection } of this.nodes.values()) connection.close();
    this.nodes.clear();
  }

  /** Reads the slot map again soon (at most once per `refreshMinGapMs`). */
  requestRefresh(): void {
    if (this.closed || this.gapTimer !== null) return;
    const wait = Math.max(0, this.lastRefreshAt + (this.options.refreshMinGapMs ?? 100) - Date.now());
    this.gapTimer = setTimeout(() => {
      this.gapTimer = null;
      this.refresh();
    }, wait);
    this.gapTimer.unref();
  }

  /** A connection to `host:port` (created on first use), or null for an address that is not one. */
  private node(address: string): RespConnection | null {
    const at = address.lastIndexOf(':');
    const host = address.slice(0, at);
    const port = Number(address.slice(at + 1));
    if (at <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535) return null;
    const key = `${host}:${port}`;
    const known = this.nodes.get(key);
    if (known !== undefined) {
      known.unused = 0;
      return known.connection;
    }
    const [seed] = this.seeds;
    const endpoint: RedisEndpoint = {
      host, port, db: 0,
      ...(seed?.username === undefined ? {} : { username: seed.username }),
      ...(seed?.password === undefined ? {} : { password: seed.password }),
      ...(seed?.tls === undefined ? {} : { tls: seed.tls }),
    };
    const onError = this.options.onError;
    const connection = new RespConnection(endpoint, {
      ...this.options,
      onError: (error) => {
        this.requestRefresh();
        onError?.(error);
      },
    });
    this.nodes.set(key, { connection, unused: 0 });
    return connection;
  }

  private anyNode(): RespConnection {
    for (const { connection } of this.nodes.values()) if (connection.status === 'ready') return connection;
    const first = this.nodes.values().next();
    if (first.done !== true) return first.value.connection;
    const [seed] = this.seeds;
    const connection = this.node(`${seed?.host ?? '127.0.0.1'}:${seed?.port ?? 6379}`);
    if (connection === null) throw new Error('no Redis Cluster node to send to');
    return connection;
  }

  /** Asks the nodes in turn (connected ones first, then the seeds) for CLUSTER SLOTS. */
  private refresh(): void {
    if (this.closed) return;
    if (this.refreshing) {
      this.refreshQueued = true;
      return;
    }
    this.refreshing = true;
    this.lastRefreshAt = Date.now();
    const candidates: string[] = [];
    for (const [address, { connection }] of this.nodes) if (connection.status === 'ready') candidates.push(address);
    for (const seed of this.seeds) candidates.push(`${seed.host}:${seed.port}`);
    for (const address of this.nodes.keys()) candidates.push(address);
    const tried = new Set<string>();
    const next = (): void => {
      const address = candidates.find((candidate) => !tried.has(candidate));
      if (address === undefined || this.closed) {
        this.done();
        return;
      }
      tried.add(address);
      const connection = this.node(address);
      if (connection === null) {
        next();
        return;
      }
      connection.send(encodeCommand('CLUSTER', ['SLOTS']), [(reply) => {
        if (reply instanceof Error || !Array.isArray(reply) || reply.length === 0) {
          next();
          return;
        }
        this.apply(reply, address.slice(0, address.lastIndexOf(':')));
        this.done();
      }]);
    };
    next();
  }

  private done(): void {
    this.refreshing = false;
    if (this.refreshQueued) {
      this.refreshQueued = false;
      this.requestRefresh();
    }
  }

  /** A CLUSTER SLOTS reply: [[start, end, [host, port, id], replicas...], ...]. */
  private apply(reply: RespReply[], askedHost: string): void {
    const used = new Set<RespConnection>();
    for (const range of reply) {
      if (!Array.isArray(range)) continue;
      const [start, end, master] = range;
      if (typeof start !== 'number' || typeof end !== 'number' || !Array.isArray(master)) continue;
      const [host, port] = master;
      if (typeof port !== 'number') continue;
      // An empty host means "the node you asked".
      const connection = this.node(`${typeof host === 'string' && host !== '' ? host : askedHost}:${port}`);
      if (connection === null) continue;
      used.add(connection);
      for (let slot = Math.max(0, start); slot <= Math.min(end, CLUSTER_SLOTS - 1); slot++) this.slots[slot] = connection;
    }
    this.mapped = true;
    for (const [address, node] of this.nodes) {
      if (used.has(node.connection)) {
        node.unused = 0;
        continue;
      }
      node.unused += 1;
      if (node.unused > 2) {
        node.connection.close();
        this.nodes.delete(address);
      }
    }
  }
}

/** The batch's transport for REDIS_URL and REDIS_CLUSTER. */
export function batchTransport(target: RedisTarget, options: ClusterTransportOptions = {}): BatchTransport {
  if (target.cluster) return new ClusterTransport(target, options);
  const [endpoint] = redisEndpoints(target);
  if (endpoint === undefined) throw new Error('REDIS_URL names no Redis');
  return new SingleNodeTransport(new RespConnection(endpoint, options));
}
