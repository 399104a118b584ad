import { closeRedisClient, createRedisClient } from '@svc/redis-client';
import type { RedisClient, RedisTarget } from '@svc/redis-client';

/** Readiness of Redis (the ledger queue and spendable balances live there). */
export class RedisProbe {
  private readonly redis: RedisClient;

  constructor(target: RedisTarget) {
    this.redis = createRedisClient(target, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: true, connectTimeout: 2_000 });
    // A failed connection is reported by ping(); the client retries on its own.
    this.redis.on('error', () => undefined);
  }

  async ping(): Promise<boolean> {
    try {
      if (this.redis.status === 'wait') await this.redis.connect();
      return (await this.redis.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.redis.status === 'wait' || this.redis.status === 'end') return;
    await closeRedisClient(this.redis);
  }
}
