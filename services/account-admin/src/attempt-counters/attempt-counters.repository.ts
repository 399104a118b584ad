import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { OnApplicationShutdown } from '@nestjs/common';
import { closeRedisClient, createRedisClient } from '@svc/redis-client';
import type { RedisClient } from '@svc/redis-client';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';

/** One attempt counted against a fixed window: {attempts in the window, ms until it ends}. */
const COUNT_ATTEMPT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {n, ttl}`;

export interface AttemptCount {
  attempts: number;
  windowLeftMs: number;
}

/**
 * Counters of attempts in fixed windows in Redis, shared by every account-admin replica (on one
 * Redis or a Redis Cluster): the sign-in limits (per email and per client address) and the
 * OAuth endpoints' per-address limits. A counter is `<scope>:<SHA-256 of the subject>`, so
 * neither an email nor an address is stored as text; one key per counter, so no script crosses
 * slots.
 */
@Injectable()
export class AttemptCountersRepository implements OnApplicationShutdown {
  private readonly redis: RedisClient;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.redis = createRedisClient({ url: config.REDIS_URL, cluster: config.REDIS_CLUSTER }, { maxRetriesPerRequest: 1, commandTimeout: 2_000, connectionName: 'svc-account-admin-attempts' });
    this.redis.on('error', () => undefined);
  }

  /** Counts one attempt of `subject` in `scope`'s window of `windowMs`. */
  async count(scope: string, subject: string, windowMs: number): Promise<AttemptCount> {
    const reply = (await this.redis.eval(COUNT_ATTEMPT, 1, keyOf(scope, subject), String(windowMs))) as [number, number];
    return { attempts: Number(reply[0]), windowLeftMs: Number(reply[1]) };
  }

  /** Clears a counter (a successful sign-in clears its email's). */
  async forget(scope: string, subject: string): Promise<void> {
    await this.redis.del(keyOf(scope, subject));
  }

  async onApplicationShutdown(): Promise<void> {
    await closeRedisClient(this.redis);
  }
}

function keyOf(scope: string, subject: string): string {
  return `${scope}:${createHash('sha256').update(subject, 'utf8').digest('hex')}`;
}
