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
 * Counters of sign-in and sign-up attempts per email and per client address in Redis, so
 * every account-admin replica shares them (on one Redis or a Redis Cluster). One key per
 * counter, so no script crosses slots.
 * Emails are stored as SHA-256 digests, never as text.
 */
@Injectable()
export class SignInLimitRepository implements OnApplicationShutdown {
  private readonly redis: RedisClient;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.redis = createRedisClient({ url: config.REDIS_URL, cluster: config.REDIS_CLUSTER }, { maxRetriesPerRequest: 1, commandTimeout: 2_000, connectionName: 'svc-account-admin-sign-in' });
    this.redis.on('error', () => undefined);
  }

  async countEmail(email: string, windowMs: number): Promise<AttemptCount> {
    return this.count(`sign-in:email:${digest(email)}`, windowMs);
  }

  async countAddress(address: string, windowMs: number): Promise<AttemptCount> {
    return this.count(`sign-in:addr:${digest(address)}`, windowMs);
  }

  /** A successful sign-in clears the email's counter (its owner is not locked out by their own logins). */
  async forgetEmail(email: string): Promise<void> {
    await this.redis.del(`sign-in:email:${digest(email)}`);
  }

  private async count(key: string, windowMs: number): Promise<AttemptCount> {
    const reply = (await this.redis.eval(COUNT_ATTEMPT, 1, key, String(windowMs))) as [number, number];
    return { attempts: Number(reply[0]), windowLeftMs: Number(reply[1]) };
  }

  async onApplicationShutdown(): Promise<void> {
    await closeRedisClient(this.redis);
  }
}

function digest(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
