import { randomBytes } from 'node:crypto';
import { ENSURE_EPOCH_LUA, epochCreatedMs, recoveryKeys, redisKeys, SETTLE_CONFIRM_BUCKET_MS, SETTLE_CONFIRM_TTL_SECONDS, SETTLEMENT_FIELD } from '@svc/contracts';
import type { Micros } from '@svc/money';
import { integerReply, shardKeys } from '@svc/redis-client';
import type { RedisClient } from '@svc/redis-client';

/**
 * A cold account's balance key and its settlement stream, read atomically.
 * KEYS[1] bal, KEYS[2] settlement stream. ARGV[1] the stream's record field.
 * Returns {1 when bal exists else 0, last entry id or '', {rid, charged, key id, settled ms, ...}}.
 * An entry that is not a SettlementRecord comes back with rid '' (the drain dead-letters it).
 */
const READ_COLD_LUA = `
local exists = redis.call('EXISTS', KEYS[1])
local last = ''
local flat = {}
if exists == 0 then
  local tail = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
  if tail[1] then last = tail[1][1] end
  for _, entry in ipairs(redis.call('XRANGE', KEYS[2], '-', '+')) do
    local rid, charged, key, at = '', '0', '', '0'
    local fields = entry[2]
    for i = 1, #fields, 2 do
      if fields[i] == ARGV[1] then
        local ok, record = pcall(cjson.decode, fields[i + 1])
        if ok and type(record) == 'table' and type(record.requestId) == 'string' and type(record.chargedMicros) == 'number'
          and type(record.keyId) == 'string' and type(record.settledAtMs) == 'number' then
          rid = record.requestId
          charged = string.format('%d', record.chargedMicros)
          key = record.keyId
          at = string.format('%d', record.settledAtMs)
        end
      end
    end
    flat[#flat + 1] = rid
    flat[#flat + 1] = charged
    flat[#flat + 1] = key
    flat[#flat + 1] = at
  end
end
return {exists, last, flat}
`;

/**
 * Writes a cold account's rebuilt spendable side in one step, only if it is still cold and
 * its stream's last entry is still the one read (else nothing is written: 'changed', retry).
 * KEYS[1] bal, KEYS[2] settlement stream, KEYS[3..2+n] usage counters, then applied markers.
 * ARGV[1] last entry id read ('' for none), ARGV[2] balance, ARGV[3] n (counters),
 * ARGV[4] marker ttl s, then per counter: value, expire-at ms (0: never).
 * Returns 'hydrated', 'already' (bal exists: someone else rebuilt it) or 'changed'.
 */
const WRITE_HYDRATED_LUA = `
local n = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
if tonumber(ARGV[2]) == nil or n == nil or ttl == nil or ttl <= 0 then return redis.error_reply('hydrate: bad arguments') end
for i = 1, n do
  if tonumber(ARGV[3 + 2 * i]) == nil or tonumber(ARGV[4 + 2 * i]) == nil then return redis.error_reply('hydrate: bad counter') end
end
if redis.call('EXISTS', KEYS[1]) == 1 then return 'already' end
local last = ''
local tail = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
if tail[1] then last = tail[1][1] end
if last ~= ARGV[1] then return 'changed' end
redis.call('SET', KEYS[1], ARGV[2])
for i = 1, n do
  local key = KEYS[2 + i]
  redis.call('SET', key, ARGV[3 + 2 * i])
  local at = tonumber(ARGV[4 + 2 * i])
  if at > 0 then redis.call('PEXPIREAT', key, ARGV[4 + 2 * i]) end
end
for i = 3 + n, #KEYS do redis.call('SET', KEYS[i], '1', 'EX', ttl) end
return 'hydrated'
`;

export interface StreamRecordView {
  /** '' when the entry cannot be parsed. */
  requestId: string;
  chargedMicros: Micros;
  keyId: string;
  settledAtMs: number;
}

export interface ColdRead {
  /** The balance key exists: the account is not cold. */
  warm: boolean;
  lastId: string;
  records: StreamRecordView[];
}

export interface CounterWrite {
  key: string;
  value: Micros;
  /** 0: never expires. */
  expireAtMs: number;
}

export interface EpochView {
  /** The epoch of every shard (key to value; one key on a single Redis): docs/decisions/0030. */
  values: Map<string, string>;
  /** When the newest of them was created (Redis ms): the last loss of data anywhere; null when none is one we wrote. */
  createdMs: number | null;
  nowMs: number;
}

/** Redis side of hydration, the wanted set, the epoch and the drain confirmations. */
export class HydrationRedisAdapter {
  constructor(private readonly redis: RedisClient) {}

  async readCold(accountId: string): Promise<ColdRead> {
    const reply = (await this.redis.eval(READ_COLD_LUA, 2, redisKeys.accountBalance(accountId), redisKeys.settlementStream(accountId), SETTLEMENT_FIELD)) as [number, string, string[]];
    const [exists, lastId, flat] = reply;
    const records: StreamRecordView[] = [];
    for (let i = 0; i + 3 < flat.length; i += 4) {
      records.push({
        requestId: flat[i] ?? '',
        chargedMicros: integerReply(flat[i + 1], 'a pending charge'),
        keyId: flat[i + 2] ?? '',
        settledAtMs: integerReply(flat[i + 3], 'a settlement time'),
      });
    }
    return { warm: exists === 1, lastId, records };
  }

  async writeHydrated(accountId: string, lastId: string, balanceMicros: Micros, counters: readonly CounterWrite[], markerEntryIds: readonly string[], markerTtlSeconds: number): Promise<'hydrated' | 'already' | 'changed'> {
    const keys = [
      redisKeys.accountBalance(accountId), redisKeys.settlementStream(accountId),
      ...counters.map((c) => c.key), ...markerEntryIds.map((id) => redisKeys.appliedEntry(accountId, id)),
    ];
    const args = [lastId, String(balanceMicros), String(counters.length), String(markerTtlSeconds), ...counters.flatMap((c) => [String(c.value), String(c.expireAtMs)])];
    const reply = await this.redis.eval(WRITE_HYDRATED_LUA, keys.length, ...keys, ...args);
    if (reply === 'hydrated' || reply === 'already' || reply === 'changed') return reply;
    throw new Error('unexpected hydrate reply');
  }

  /** Reads the epoch of every shard, creating the missing ones (Redis clock). */
  async ensureEpoch(): Promise<EpochView> {
    const keys = await shardKeys(this.redis, recoveryKeys.shardEpoch);
    const replies = await Promise.all(keys.map(async (key) =>
      [key, (await this.redis.eval(ENSURE_EPOCH_LUA, 1, key, randomBytes(8).toString('hex'))) as [string, number]] as const));
    const values = new Map<string, string>();
    let createdMs: number | null = null;
    let nowMs = 0;
    for (const [key, [value, now]] of replies) {
      values.set(key, value);
      const created = epochCreatedMs(value);
      if (created !== null && (createdMs === null || created > createdMs)) createdMs = created;
      nowMs = Math.max(nowMs, integerReply(now, 'the redis time'));
    }
    return { values, createdMs, nowMs };
  }

  async wanted(count: number): Promise<string[]> {
    return this.redis.srandmember(recoveryKeys.hydrationWanted, count);
  }

  async requestHydration(accountId: string): Promise<void> {
    await this.redis.sadd(recoveryKeys.hydrationWanted, accountId);
  }

  async done(accountId: string): Promise<void> {
    await this.redis.srem(recoveryKeys.hydrationWanted, accountId);
  }

  /** Tells the gateways these request ids are durable (or dead-lettered): they stop retaining them. */
  async confirm(requestIds: readonly string[]): Promise<void> {
    if (requestIds.length === 0) return;
    const [seconds] = await this.redis.time();
    const key = recoveryKeys.settleConfirmed(Math.floor((Number(seconds) * 1000) / SETTLE_CONFIRM_BUCKET_MS));
    await this.redis.pipeline().sadd(key, ...requestIds).expire(key, SETTLE_CONFIRM_TTL_SECONDS).exec();
  }
}
