import { Inject, Injectable } from '@nestjs/common';
import type { OnApplicationShutdown } from '@nestjs/common';
import { closeRedisClient, createRedisClient, mgetAny } from '@svc/redis-client';
import type { RedisClient } from '@svc/redis-client';
import { KEY_CHANGES_CHANNEL, PROVIDER_KEY_CHANGES_CHANNEL, redisKeys } from '@svc/contracts';
import type { KeyChangeMessage, KeyRecord, ProviderKeyChangeMessage } from '@svc/contracts';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';

/**
 * Writes `ARGV[1]` (JSON with a numeric `version`) to `KEYS[1]` only when no value is stored,
 * the stored value is not JSON with a version, or its version is <= the incoming one
 * (`ARGV[2]`). `ARGV[3]` > 0 sets a TTL in seconds; 0 stores without TTL. Returns 1 when
 * written, 0 when a newer record was kept.
 */
const WRITE_IF_NOT_OLDER = `
local current = redis.call('GET', KEYS[1])
if current then
  local ok, stored = pcall(cjson.decode, current)
  if ok and type(stored) == 'table' and type(stored.version) == 'number' and stored.version > tonumber(ARGV[2]) then
    return 0
  end
end
local ttl = tonumber(ARGV[3])
if ttl > 0 then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ttl)
else
  redis.call('SET', KEYS[1], ARGV[1])
end
return 1
`;

/** A deleted key's record stays this long, so gateways keep answering invalid_api_key from Redis. */
export const DELETED_RECORD_TTL_SECONDS = 7 * 24 * 3600;

/**
 * The JSON stored at redisKeys.keyRecord(hash): the shared KeyRecord plus `writtenAtMs`, this
 * service's clock (Unix ms) taken before it read the record from Postgres, so the record is
 * known current as of that instant. Not part of KeyRecord: the gateway's parser ignores it
 * until it checks record age (README "Propagation bound").
 */
export type StoredKeyRecord = KeyRecord & { writtenAtMs: number };

/** What the cache holds for a hash that is no key: replaced by any real record (version >= 1). */
export interface MissMarker {
  missing: true;
  version: 0;
  writtenAtMs: number;
}

export interface UsageQuery {
  accountId: string;
  keyId: string;
  /** Start of the key's current reset period, or null when the key has no reset period. */
  periodStartMs: number | null;
  /** The key's reset period (which counter), or null. */
  reset: 'daily' | 'weekly' | 'monthly' | null;
}

export interface Usage {
  periodMicros: number;
  totalMicros: number;
}

/**
 * The Redis side of keys: the key-record cache (written only by this service), the
 * key-change channel, and the spend counters the gateway keeps (read only here).
 */
@Injectable()
export class KeyCacheRepository implements OnApplicationShutdown {
  private readonly redis: RedisClient;
  private readonly liveTtlSeconds: number;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.liveTtlSeconds = config.KEY_RECORD_TTL_SECONDS;
    this.redis = createRedisClient({ url: config.REDIS_URL, cluster: config.REDIS_CLUSTER }, {
      lazyConnect: false,
      maxRetriesPerRequest: 2,
      commandTimeout: 2_000,
    });
    // Connection errors surface on the commands; this only keeps them off stderr.
    this.redis.on('error', () => undefined);
  }

  /**
   * Writes the record unless a newer version is stored; true when written. Live records
   * expire after KEY_RECORD_TTL_SECONDS (a lost write heals by a LookupKey refill), deleted
   * ones after 7 days.
   */
  async writeRecord(keyHash: string, record: KeyRecord, writtenAtMs: number): Promise<boolean> {
    const ttl = record.deleted ? DELETED_RECORD_TTL_SECONDS : this.liveTtlSeconds;
    const stored: StoredKeyRecord = { ...record, writtenAtMs };
    const written = await this.redis.eval(WRITE_IF_NOT_OLDER, 1, redisKeys.keyRecord(keyHash), JSON.stringify(stored), record.version, ttl);
    return written === 1;
  }

  /** Stores a short-lived miss marker unless a real record is stored; true when written. */
  async writeMiss(keyHash: string, ttlSeconds: number, writtenAtMs: number): Promise<boolean> {
    const marker: MissMarker = { missing: true, version: 0, writtenAtMs };
    const written = await this.redis.eval(WRITE_IF_NOT_OLDER, 1, redisKeys.keyRecord(keyHash), JSON.stringify(marker), 0, ttlSeconds);
    return written === 1;
  }

  async publishChange(message: KeyChangeMessage): Promise<void> {
    await this.redis.publish(KEY_CHANGES_CHANNEL, JSON.stringify(message));
  }

  /** Tells every gateway that an account's provider keys changed (the message names the account only). */
  async publishProviderKeyChange(message: ProviderKeyChangeMessage): Promise<void> {
    await this.redis.publish(PROVIDER_KEY_CHANGES_CHANNEL, JSON.stringify(message));
  }

  /** Spend counters (integer micro-USD; absent = 0), in the order asked. */
  async readUsage(queries: readonly UsageQuery[]): Promise<Usage[]> {
    if (queries.length === 0) return [];
    const names: string[] = [];
    for (const q of queries) {
      names.push(redisKeys.keyTotalUsage(q.accountId, q.keyId));
      if (q.periodStartMs !== null && q.reset !== null) names.push(redisKeys.keyPeriodUsage(q.accountId, q.keyId, q.reset, q.periodStartMs));
    }
    const values = await mgetAny(this.redis, names);
    let at = 0;
    return queries.map((q) => {
      const totalMicros = toMicros(values[at++]);
      const periodMicros = q.periodStartMs === null || q.reset === null ? totalMicros : toMicros(values[at++]);
      return { periodMicros, totalMicros };
    });
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async onApplicationShutdown(): Promise<void> {
    await closeRedisClient(this.redis);
  }

}

function toMicros(value: string | null | undefined): number {
  if (value === null || value === undefined) return 0;
  const n = Number(value);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}
