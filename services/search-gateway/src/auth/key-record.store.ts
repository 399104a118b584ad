import type { KeyLookup } from '@svc/contracts';
import { redisKeys } from '@svc/contracts';
import type { RedisClient } from '@svc/redis-client';
import { parseKeyRecordJson } from './key-record-json';
import { maxRedisAgeMs } from './key-state-bound';
import type { KeyStateBound } from './key-state-bound';

/**
 * What Redis knows about a hash: an answer with its stamp (null: a tombstone, exempt from
 * the age rule), nothing usable (absent, unreadable or too old: ask the owner), or a fault.
 */
export type StoreRead =
  | { kind: 'found'; lookup: KeyLookup; writtenAtMs: number | null }
  | { kind: 'miss' }
  | { kind: 'error'; error: unknown };

/** The seam to the Redis key-record cache written by account-admin. */
export interface KeyRecordStore {
  read(keyHash: string): Promise<StoreRead>;
}

/** One GET of redisKeys.keyRecord(hash); never throws. A value older than the bound allows is a miss. */
export class RedisKeyRecordStore implements KeyRecordStore {
  private readonly now: () => number;

  constructor(
    private readonly redis: RedisClient,
    private readonly bound: KeyStateBound,
    now?: () => number,
  ) {
    this.now = now ?? Date.now;
  }

  async read(keyHash: string): Promise<StoreRead> {
    let text: string | null;
    try {
      text = await this.redis.get(redisKeys.keyRecord(keyHash));
    } catch (error) {
      return { kind: 'error', error };
    }
    if (text === null) return { kind: 'miss' };
    const parsed = parseKeyRecordJson(text, { nowMs: this.now(), maxAgeMs: maxRedisAgeMs(this.bound), clockSkewMs: this.bound.clockSkewMs });
    return parsed === undefined ? { kind: 'miss' } : { kind: 'found', lookup: parsed.lookup, writtenAtMs: parsed.writtenAtMs };
  }
}
