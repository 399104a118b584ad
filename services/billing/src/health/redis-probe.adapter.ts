import { Redis } from 'ioredis';

/** Readiness of Redis (the ledger queue and spendable balances live there). */
export class RedisProbe {
  private readonly redis: Redis;

  constructor(url: string) {
    this.redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: true, connectTimeout: 2_000 });
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
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
