import { createRedisClient } from '@svc/redis-client';
import type { RedisClient, RedisTarget } from '@svc/redis-client';
import type { Logger } from 'pino';

const PING_TIMEOUT_MS = 1000;

/**
 * How long ioredis waits, after ending a connection, for its socket to close before it
 * destroys it (its default is 2 s). A socket whose connect was refused never closes again,
 * so with the default a gateway that never reached Redis kept the process alive for 2 s
 * after shutdown. A live connection is closed with QUIT, which does not use this timeout.
 */
export const REDIS_DISCONNECT_TIMEOUT_MS = 200;

/**
 * A command connection to Redis (ioredis, or its Cluster client). Without an offline queue
 * a command fails at once while Redis is unreachable, so the auth chain falls through to
 * account-admin instead of waiting.
 */
export class RedisCommandClient {
  readonly client: RedisClient;

  /** `target`: REDIS_URL and REDIS_CLUSTER (a single Redis, or a Redis Cluster's seed nodes). */
  constructor(readonly target: RedisTarget, private readonly log: Logger) {
    this.client = createRedisClient(target, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1, disconnectTimeout: REDIS_DISCONNECT_TIMEOUT_MS });
    this.client.on('error', (error: Error) => this.log.warn({ err: error.message }, 'redis connection error'));
  }

  /** Connects; a Redis that is down does not stop the start (readyz reports it). */
  async connect(): Promise<void> {
    try {
      await this.client.connect();
    } catch (error) {
      this.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'redis not reachable at start');
    }
  }

  async isReachable(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
    });
    const ping = this.client.ping().then((answer) => answer === 'PONG', () => false);
    try {
      return await Promise.race([ping, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    // Not connected: nothing to say goodbye to, and no reconnect attempt may be left behind.
    if (this.client.status !== 'ready') {
      this.client.disconnect();
      return;
    }
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }
}

/**
 * The gateway's main Redis client (REDIS_URL, REDIS_CLUSTER), one per process: the key
 * records the auth chain reads, provider health and its breaker, readiness, the money
 * path's retained settlements and idempotency reads, and the result cache unless
 * CACHE_REDIS_URL gives the cache a RedisCommandClient of its own. The search's admission
 * and settlement batches do not use it: they go on MoneyRepository's own connections
 * (src/redis/batch-transport.ts). Its class is its Nest provider token.
 */
export class MainRedisClient extends RedisCommandClient {}
