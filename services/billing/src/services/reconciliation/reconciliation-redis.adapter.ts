import { RESERVATION_TTL_GRACE_MS, redisKeys, SETTLEMENT_FIELD } from '@svc/contracts';
import type { Micros } from '@svc/money';
import { integerReply, KeyspaceWalk, masters, pipelineEach, scanKeys } from '@svc/redis-client';
import type { RedisClient } from '@svc/redis-client';

/**
 * The account's spendable side, read atomically (one script, all keys under the account's
 * hash tag): spendable balance, reserved total, every settlement record still in the
 * stream (request id, charge), and which of the given ledger entries carry an applied marker.
 * KEYS[1] bal, KEYS[2] reserved, KEYS[3] settlement stream, KEYS[4..] applied markers.
 * ARGV[1] the stream's record field.
 * Returns {bal or false, reserved or false, {rid1, charged1, rid2, charged2, ...}, {0|1 per marker}}.
 * A record that is not JSON or has no request id comes back as rid '' (the drain dead-letters it).
 */
const READ_SPENDABLE_LUA = `
local bal = redis.call('GET', KEYS[1])
local reserved = redis.call('GET', KEYS[2])
local pending = {}
if redis.call('EXISTS', KEYS[3]) == 1 then
  for _, entry in ipairs(redis.call('XRANGE', KEYS[3], '-', '+')) do
    local fields = entry[2]
    local rid, charged = '', '0'
    for i = 1, #fields, 2 do
      if fields[i] == ARGV[1] then
        local ok, record = pcall(cjson.decode, fields[i + 1])
        if ok and type(record) == 'table' and type(record.requestId) == 'string' and type(record.chargedMicros) == 'number' then
          rid = record.requestId
          charged = string.format('%d', record.chargedMicros)
        end
      end
    end
    pending[#pending + 1] = rid
    pending[#pending + 1] = charged
  end
end
local markers = {}
for i = 4, #KEYS do markers[#markers + 1] = redis.call('EXISTS', KEYS[i]) end
return {bal or false, reserved or false, pending, markers}
`;

/**
 * Releases one stale reservation back to the spendable balance, only if its hash still
 * exists: everything it holds moves from reserved to bal and the hash is deleted.
 * KEYS[1] bal, KEYS[2] reserved, KEYS[3] reservation hash. Returns the micro-USD released
 * (0 when the hash was gone: settled or released meanwhile).
 */
const RELEASE_STALE_LUA = `
if redis.call('EXISTS', KEYS[3]) == 0 then return 0 end
local held = 0
for _, value in ipairs(redis.call('HVALS', KEYS[3])) do
  local n = tonumber(value)
  if n == nil or n < 0 or n % 1 ~= 0 then return redis.error_reply('release-stale: held amount is not an integer') end
  held = held + n
end
redis.call('DEL', KEYS[3])
if held > 0 then
  local amount = string.format('%d', held)
  redis.call('INCRBY', KEYS[1], amount)
  redis.call('DECRBY', KEYS[2], amount)
end
return held
`;

/** Adds ARGV[1] (may be negative) to the balance only if the balance key exists. Returns {1, new} or {0}. */
const ADJUST_BALANCE_LUA = `
local amount = tonumber(ARGV[1])
if amount == nil or amount % 1 ~= 0 then return redis.error_reply('adjust: bad amount') end
if redis.call('EXISTS', KEYS[1]) == 0 then return {0} end
return {1, redis.call('INCRBY', KEYS[1], ARGV[1])}
`;

export interface PendingRecord {
  /** '' when the entry cannot be parsed. */
  requestId: string;
  chargedMicros: Micros;
}

export interface SpendableSnapshot {
  /** null when the key does not exist (Redis lost it and has not been rebuilt yet). */
  balanceMicros: Micros | null;
  reservedMicros: Micros;
  pending: PendingRecord[];
  /** Ledger entry ids whose applied marker exists (their amount is in bal). */
  appliedEntryIds: Set<string>;
}

export interface OpenReservation {
  accountId: string;
  requestId: string;
  key: string;
  heldMicros: Micros;
  /** How long the search has run past its own running bound (negative: still within it); null without a TTL. */
  overdueMs: number | null;
}

const RSV_MARKER = ':rsv:';

/** The account and request of a reservation hash's key (`{a:<account>}:rsv:<request id>`); null for any other key. */
function reservationOfKey(key: string): { accountId: string; requestId: string } | null {
  const close = key.indexOf('}');
  const at = key.indexOf(RSV_MARKER);
  if (!key.startsWith('{a:') || close < 0 || at !== close + 1) return null;
  return { accountId: key.slice(3, close), requestId: key.slice(at + RSV_MARKER.length) };
}

/** The reconciliation's view of, and repairs to, the spendable side in Redis. */
export class ReconciliationRedisAdapter {
  constructor(private readonly redis: RedisClient) {}

  async readSpendable(accountId: string, entryIds: readonly string[]): Promise<SpendableSnapshot> {
    const keys = [
      redisKeys.accountBalance(accountId), redisKeys.accountReserved(accountId), redisKeys.settlementStream(accountId),
      ...entryIds.map((id) => redisKeys.appliedEntry(accountId, id)),
    ];
    const reply = (await this.redis.eval(READ_SPENDABLE_LUA, keys.length, ...keys, SETTLEMENT_FIELD)) as [string | null, string | null, string[], number[]];
    const [bal, reserved, flat, markers] = reply;
    const pending: PendingRecord[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      pending.push({ requestId: flat[i] ?? '', chargedMicros: integerReply(flat[i + 1], 'a pending charge') });
    }
    const appliedEntryIds = new Set<string>();
    entryIds.forEach((id, i) => {
      if (markers[i] === 1) appliedEntryIds.add(id);
    });
    return {
      balanceMicros: bal === null ? null : integerReply(bal, 'the spendable balance'),
      reservedMicros: reserved === null ? 0 : integerReply(reserved, 'the reserved total'),
      pending,
      appliedEntryIds,
    };
  }

  /**
   * Open reservation hashes of the given accounts: from `known` (reservation hash keys a
   * ReservationWalk found, decision 0036) when given, else from one SCAN over the keyspace
   * (an operator's request for one page or one account). Each with what it holds and how far
   * past its bound it is; one gone meanwhile is left out.
   */
  async openReservations(accountIds: readonly string[], known?: Iterable<string>): Promise<OpenReservation[]> {
    const wanted = new Set(accountIds);
    const keys: { key: string; accountId: string; requestId: string }[] = [];
    const seen = new Set<string>();
    const consider = (key: string): void => {
      if (seen.has(key)) return;
      seen.add(key);
      const parsed = reservationOfKey(key);
      if (parsed !== null && wanted.has(parsed.accountId)) keys.push({ key, ...parsed });
    };
    if (known !== undefined) {
      for (const key of known) consider(key);
    } else {
      const pattern = accountIds.length === 1 ? `${redisKeys.accountTag(accountIds[0] ?? '')}${RSV_MARKER}*` : `{a:*}${RSV_MARKER}*`;
      for await (const batch of scanKeys(this.redis, pattern, 'hash')) for (const key of batch) consider(key);
    }
    if (keys.length === 0) return [];
    const results = await pipelineEach(this.redis, keys, (k) => k.key, (pipeline, { key }) => {
      pipeline.hvals(key).pttl(key);
    });
    const out: OpenReservation[] = [];
    keys.forEach((k, i) => {
      const [valsError, vals] = results[i]?.[0] ?? [null, []];
      const [ttlError, ttl] = results[i]?.[1] ?? [null, -2];
      if (valsError !== null || ttlError !== null) throw valsError ?? ttlError;
      const pttl = Number(ttl);
      if (pttl === -2) return; // gone since it was found
      const held = (vals as string[]).reduce((sum, v) => sum + integerReply(v, 'a held amount'), 0);
      out.push({ ...k, heldMicros: held, overdueMs: pttl < 0 ? null : RESERVATION_TTL_GRACE_MS - pttl });
    });
    return out;
  }

  /** How many keys Redis holds, over every master (DBSIZE: constant time). */
  async keyCount(): Promise<number> {
    const sizes = await Promise.all(masters(this.redis).map((node) => node.dbsize()));
    return sizes.reduce((sum, size) => sum + size, 0);
  }

  /** A walk over the keyspace for reservation hashes, resumed step by step (ReservationWalk). */
  reservationWalk(): KeyspaceWalk {
    return new KeyspaceWalk(this.redis, `{a:*}${RSV_MARKER}*`, 'hash');
  }

  /** Micro-USD released (0 when the hash was gone). */
  async releaseReservation(accountId: string, key: string): Promise<Micros> {
    const released = await this.redis.eval(RELEASE_STALE_LUA, 3, redisKeys.accountBalance(accountId), redisKeys.accountReserved(accountId), key);
    return integerReply(released, 'the released amount');
  }

  /** INCRBY on the balance, only if it exists; returns the new balance or null when it did not. */
  async adjustBalance(accountId: string, amountMicros: Micros): Promise<Micros | null> {
    const reply = (await this.redis.eval(ADJUST_BALANCE_LUA, 1, redisKeys.accountBalance(accountId), String(amountMicros))) as [number, number?];
    return reply[0] === 1 ? integerReply(reply[1], 'the adjusted balance') : null;
  }
}
