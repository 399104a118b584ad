import type { KeyLookup } from '@svc/contracts';
import { redisKeys } from '@svc/contracts';
import type Redis from 'ioredis';
import { parseKeyRecordJson } from './key-record-json';

/** What Redis knows about a hash: an answer, nothing (ask the owner), or a fault. */
export type StoreRead =
  | { kind: 'found'; lookup: KeyLookup }
  | { kind: 'miss' }
  | { kind: 'error'; error: unknown };

/** The seam to the Redis key-record cache written by account-admin. */
export interface KeyRecordStore {
  read(keyHash: string): Promise<StoreRead>;
}

/** One GET of redisKeys.keyRecord(hash); never throws. */
export class RedisKeyRecordStore implements KeyRecordStore {
  constructor(private readonly redis: Redis) {}

  async read(keyHash: string): Promise<StoreRead> {
    let text: string | null;
    try {
      text = await this.redis.get(redisKeys.keyRecord(keyHash));
    } catch (error) {
      return { kind: 'error', error };
    }
    if (text === null) return { kind: 'miss' };
    const lookup = parseKeyRecordJson(text);
    return lookup === undefined ? { kind: 'miss' } : { kind: 'found', lookup };
  }
}
