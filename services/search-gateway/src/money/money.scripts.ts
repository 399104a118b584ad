import { RESERVATION_RULE_LUA, redisKeys, SETTLEMENT_FIELD } from '@svc/contracts';
import type { Micros } from '@svc/money';
import { NO_MEMBER_KEYS, pickElement } from '../redis/redis-batch';
import type { MergedCall, MergedCommand, ScriptCall } from '../redis/redis-batch';
import type { AdmissionRequest, LeaseRequest, ReserveRequest } from './money.ops';
import type { MoneyScope } from './money.scope';

/**
 * The Lua scripts of the search hot path, and beside each the one function that encodes its
 * KEYS and ARGV (`encode…Args`): the layout a script's comment describes is written in
 * exactly one place, and MoneyRepository only chooses which script to call. Each script
 * validates every argument and every value it reads before its first write: a Lua error
 * does not roll back what was already written. All keys of one script share one hash slot
 * (the account tag, or the provider tag for the lease), so every script runs unchanged on
 * Redis Cluster. Amounts are integer micro-USD passed as decimal strings.
 *
 * The encoders take objects the search already holds (its scope, its lease and reserve
 * requests, its outgoing settlement) and return the pipeline item itself: encoding a call
 * allocates its argument arrays and nothing else.
 */

/** Idempotent outcomes live this long (docs/api.md 10.7: 24 hours). */
export const OUTCOME_TTL_MS = 24 * 3_600_000;
/**
 * Settled markers (what makes a settlement sent twice count once) are request ids in one set
 * per account and bucket of this length, by the settlement's first send; docs/decisions/0004.
 */
export const SETTLED_BUCKET_MS = 5 * 60_000;
/** A settlement is sent again for at most this long after its first send; then it is logged as lost to Redis. */
export const SETTLE_RESEND_WINDOW_MS = 20 * 60_000;
/** A marker bucket lives this long past its end: longer than any re-send of a settlement first sent in it. */
export const SETTLED_BUCKET_GRACE_MS = SETTLE_RESEND_WINDOW_MS + 5 * 60_000;

/** The names the scripts are defined under on the batch connection. */
export const SCRIPT = {
  lease: 'svcLease',
  reserve: 'svcReserve',
  release: 'svcRelease',
  settle: 'svcSettle',
  idempotencyStore: 'svcIdemStore',
  idempotencyRelease: 'svcIdemRelease',
  admit: 'svcAdmit',
  leaseExtend: 'svcLeaseExtend',
} as const;

/**
 * Provider leases of every search in one flush, one script call per provider: the reply
 * holds one 1 (taken) or 0 (at capacity) per lease id, in order.
 */
export const MERGED_LEASE: MergedCommand = { command: SCRIPT.lease, stage: 'tail', order: 1, dynamicKeys: false, unique: false, pick: pickElement };
/** First admissions of the searches of one account in one flush: one ADMIT_LUA call. */
export const MERGED_ADMIT: MergedCommand = { command: SCRIPT.admit, stage: 'tail', order: 1, dynamicKeys: true, unique: false, pick: pickElement };
/** Settlements of one account in one flush: one SETTLE_LUA call (before the dirty mark, order 9). */
export const MERGED_SETTLE: MergedCommand = { command: SCRIPT.settle, stage: 'tail', order: 1, dynamicKeys: true, unique: false, pick: pickElement };

/**
 * Takes provider-capacity leases for the searches of one flush (RedisBatch merges every
 * search's lease on the same provider into one call), expiring by Redis's own clock. Leases
 * are granted in order while the provider has room.
 * KEYS[1] provider lease sorted set (member: lease id, score: expiry ms).
 * ARGV[1] cap (0 refuses every lease), ARGV[2] lifetime ms, ARGV[3..] lease ids (at least one).
 * Returns one 1 (taken) or 0 (at capacity) per lease id, in order.
 */
export const LEASE_LUA = `
local cap = tonumber(ARGV[1])
local life = tonumber(ARGV[2])
if cap == nil or life == nil or life <= 0 or #ARGV < 3 then return redis.error_reply('lease: bad arguments') end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- Only live leases count. One a gateway never gave back (it died) expires at its score, and
-- is removed now and then (about one call in 16) so the set does not keep it.
local live = redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
if now % 16 == 0 then redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now) end
local granted = {}
local taken = {}
for i = 3, #ARGV do
  if live < cap then
    live = live + 1
    granted[i - 2] = 1
    taken[#taken + 1] = now + life
    taken[#taken + 1] = ARGV[i]
    if #taken >= 1000 then
      redis.call('ZADD', KEYS[1], unpack(taken))
      taken = {}
    end
  else
    granted[i - 2] = 0
  end
end
if #taken > 0 then redis.call('ZADD', KEYS[1], unpack(taken)) end
if live > 0 then redis.call('PEXPIRE', KEYS[1], life) end
return granted
`;

/** LEASE_LUA's input: the lease a search's attempt asks for (its LeaseRequest). */
export type LeaseInput = LeaseRequest;

/** LEASE_LUA, merged per provider: KEYS the provider's lease set; ARGV cap and lifetime, then this lease's id. */
export function encodeLeaseArgs(input: LeaseInput): MergedCall {
  return {
    kind: 'merged',
    merged: MERGED_LEASE,
    keys: [redisKeys.providerLeases(input.provider)],
    fixed: [input.cap, input.lifetimeMs],
    memberKeys: NO_MEMBER_KEYS,
    memberArgs: [input.leaseId],
  };
}

/** The reservation rule (key limit, then balance), declared once in @svc/contracts: RESERVE_LUA and ADMIT_LUA both start with it. */
export { RESERVATION_RULE_LUA };

/**
 * Reserves an attempt's most possible cost, and (on the search's first call) claims its
 * Idempotency-Key.
 * KEYS[1] spendable balance, KEYS[2] account reserved total, KEYS[3] the key's limit
 * counter (what it was charged in its current period, or in all time for a limit without
 * reset; any account key when the key has no limit), KEYS[4] the search's reservation hash
 * (field: attempt index, value: micro-USD held), KEYS[5] idempotency key (any account key
 * when unused), KEYS[6] the key's hold (what its open searches hold: redisKeys.keyHold).
 * ARGV[1] amount (>= 0), ARGV[2] key limit (-1: none), ARGV[3] attempt index,
 * ARGV[4] reservation hash ttl ms (also the hold's), ARGV[5] unused, ARGV[6] claim '1'/'0',
 * ARGV[7] claim value, ARGV[8] claim ttl ms.
 * Returns {'cold'} (nothing written) when the account's spendable side has not been rebuilt
 * since Redis lost its data (its balance key is missing: only a loss of Redis data removes
 * it; an account with no history gets a balance of 0 from billing), {'dup', stored value} (nothing written) when the idempotency
 * key is taken, else {'ok'} (reserved), {'limit'} (charged in the period + held + amount
 * would pass the key limit) or {'balance'} (balance too low); the claim is written in all
 * three. The key limit is checked first.
 */
export const RESERVE_LUA = `${RESERVATION_RULE_LUA}
local amount = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
if amount == nil or amount < 0 or amount % 1 ~= 0 or limit == nil
  or tonumber(ARGV[4]) == nil or tonumber(ARGV[8]) == nil then
  return redis.error_reply('reserve: bad arguments')
end
local balanceText = redis.call('GET', KEYS[1])
if not balanceText then return {'cold'} end
local claim = ARGV[6] == '1'
if claim then
  local existing = redis.call('GET', KEYS[5])
  if existing then return {'dup', existing} end
end
local balance = tonumber(balanceText)
if balance == nil or tonumber(redis.call('GET', KEYS[2]) or '0') == nil then
  return redis.error_reply('reserve: balance is not an integer')
end
local held = tonumber(redis.call('GET', KEYS[6]) or '0')
if held == nil then return redis.error_reply('reserve: key hold is not an integer') end
local used = 0
if limit >= 0 then
  used = tonumber(redis.call('GET', KEYS[3]) or '0')
  if used == nil then return redis.error_reply('reserve: key usage is not an integer') end
end
local verdict = reservationVerdict(amount, limit, used, held, balance)
if claim then redis.call('SET', KEYS[5], ARGV[7], 'PX', ARGV[8]) end
if verdict ~= 'ok' then return {verdict} end
redis.call('DECRBY', KEYS[1], ARGV[1])
redis.call('INCRBY', KEYS[2], ARGV[1])
redis.call('INCRBY', KEYS[6], ARGV[1])
redis.call('PEXPIRE', KEYS[6], ARGV[4])
redis.call('HSET', KEYS[4], ARGV[3], ARGV[1])
redis.call('PEXPIRE', KEYS[4], ARGV[4])
return {'ok'}
`;

/** RESERVE_LUA's input: a later attempt's reservation in its search's scope. */
export interface ReserveInput {
  readonly scope: MoneyScope;
  readonly reserve: ReserveRequest;
}

/** RESERVE_LUA: 6 KEYS and 8 ARGV as its comment lists; without a claim, the idempotency key slot holds the reservation hash. */
export function encodeReserveArgs(input: ReserveInput): ScriptCall {
  const { scope, reserve } = input;
  const claim = reserve.claim;
  return {
    kind: 'script',
    name: SCRIPT.reserve,
    keys: [scope.balanceKey, scope.reservedKey, scope.limitKey, scope.reservationKey, scope.idempotencyKey ?? scope.reservationKey, scope.holdKey],
    args: [reserve.amountMicros, scope.limitMicros, reserve.index, scope.reservationTtlMs, 0, claim === undefined ? '0' : '1', claim?.value ?? '', claim?.ttlMs ?? 0],
  };
}

/**
 * Lowers what one attempt holds to \`keep\`, giving the difference back (a refund, or the
 * undo of a reservation whose lease was refused), to the balance and from the key's hold.
 * Idempotent: a repeat finds nothing above \`keep\` and does nothing; an attempt it does not
 * hold is not touched.
 * KEYS[1] balance, KEYS[2] reserved total, KEYS[3] the key's hold, KEYS[4] reservation hash.
 * ARGV[1] attempt index, ARGV[2] keep (micro-USD), ARGV[3] unused.
 * Returns the micro-USD given back.
 */
export const RELEASE_LUA = `
local keep = tonumber(ARGV[2])
if keep == nil or keep < 0 or keep % 1 ~= 0 then return redis.error_reply('release: bad arguments') end
local held = tonumber(redis.call('HGET', KEYS[4], ARGV[1]) or '0')
if held == nil then return redis.error_reply('release: held amount is not an integer') end
if held <= keep then return 0 end
local back = string.format('%d', held - keep)
redis.call('INCRBY', KEYS[1], back)
redis.call('DECRBY', KEYS[2], back)
if redis.call('DECRBY', KEYS[3], back) <= 0 then redis.call('DEL', KEYS[3]) end
if keep == 0 then redis.call('HDEL', KEYS[4], ARGV[1]) else redis.call('HSET', KEYS[4], ARGV[1], ARGV[2]) end
return held - keep
`;

/** RELEASE_LUA's input: one attempt of a search, and what it keeps. */
export interface ReleaseInput {
  readonly scope: MoneyScope;
  readonly index: number;
  readonly keepMicros: Micros;
}

/** RELEASE_LUA: KEYS balance, reserved total, the key's hold, the reservation hash; ARGV index, keep, unused. */
export function encodeReleaseArgs(input: ReleaseInput): ScriptCall {
  const { scope } = input;
  return {
    kind: 'script',
    name: SCRIPT.release,
    keys: [scope.balanceKey, scope.reservedKey, scope.holdKey, scope.reservationKey],
    args: [input.index, input.keepMicros, '0'],
  };
}

/**
 * Settles searches of one account (RedisBatch merges the settlements of one account that
 * share a flush), each exactly once and as if it ran alone: everything still held by its
 * reservation hash is finalized (`charged` kept, the rest refunded), the key's all-time usage
 * grows by `charged`, one SettlementRecord is appended to the account's stream, (optionally)
 * the search's idempotent outcome is stored, and its account in-flight lease is given back,
 * all atomically. A repeat (a request id already in its settled-marker set) only gives the
 * lease back (a no-op by then). Every value is read and checked before the first write.
 * After Redis lost its data (docs/architecture.md, "When Redis fails"):
 * - account cold (no balance key; the flush came during the search): only the record,
 *   the settled marker and the outcome are written; balance and counters are left alone
 *   (hydration subtracts the pending record when it rebuilds them);
 * - account hydrated but the reservation (or part of it) gone (reserved before the flush):
 *   what the hash does not hold is taken from the balance, so the charge still counts once.
 * The key's usage: what the reservation held leaves the key's hold, and the charge is added
 * to its all-time counter and to its current day, week and month counters, whatever the
 * key's own reset (so a change of period keeps the period's spend).
 * KEYS[1] balance, KEYS[2] reserved total, KEYS[3] settlement stream, KEYS[4] the account's
 * in-flight set; then 8 per request: the key's hold (redisKeys.keyHold), its all-time usage,
 * the search's reservation hash, the settled-marker set of the search's bucket
 * (redisKeys.settledMarkers), its idempotency key (the reservation hash when unused), its
 * day, week and month counters (redisKeys.keyPeriodUsage).
 * ARGV[1] outcome ttl ms, ARGV[2] stream field name; then 11 per request: charged
 * (micro-USD), unused, record JSON, when the marker set expires (Unix ms), store the outcome
 * '1'/'0', outcome value, request id, '1' to give back the in-flight lease (member: the
 * request id), when the day, week and month counters expire (Unix ms).
 * Returns one reply per request: 1 when settled now, 0 when it had been settled already, or
 * {'err', message} (its arguments or reservation are not valid; nothing written for it).
 */
export const SETTLE_LUA = `
local n = (#KEYS - 4) / 8
if n < 1 or n % 1 ~= 0 or #ARGV ~= 2 + 11 * n or tonumber(ARGV[1]) == nil then return redis.error_reply('settle: bad arguments') end
local warm = redis.call('EXISTS', KEYS[1]) == 1
local out, charged, leases = {}, {}, {}
-- The requests of each settled-marker set, to ask and mark each set once.
local sets, order = {}, {}
for i = 1, n do
  local a = 2 + 11 * (i - 1)
  local c = tonumber(ARGV[a + 1])
  local rid = ARGV[a + 7]
  if c == nil or c < 0 or c % 1 ~= 0 or tonumber(ARGV[a + 4]) == nil or rid == ''
    or tonumber(ARGV[a + 9]) == nil or tonumber(ARGV[a + 10]) == nil or tonumber(ARGV[a + 11]) == nil then
    out[i] = {'err', 'settle: bad arguments'}
  else
    charged[i] = c
    if ARGV[a + 8] == '1' then leases[#leases + 1] = rid end
    local markers = KEYS[4 + 8 * (i - 1) + 4]
    local set = sets[markers]
    if set == nil then
      set = {rids = {}, at = {}, expireAt = 0}
      sets[markers] = set
      order[#order + 1] = markers
    end
    set.rids[#set.rids + 1] = rid
    set.at[#set.at + 1] = i
  end
end
-- Already settled (in its marker set, or earlier in this call): 0.
for _, markers in ipairs(order) do
  local set = sets[markers]
  local flags = redis.call('SMISMEMBER', markers, unpack(set.rids))
  local here = {}
  for j, i in ipairs(set.at) do
    local rid = set.rids[j]
    if flags[j] == 1 or here[rid] then out[i] = 0 else here[rid] = true end
  end
end
-- What each reservation still holds (read and checked before the first write).
local held = {}
for i = 1, n do
  if out[i] == nil then
    local sum = 0
    if warm then
      for _, value in ipairs(redis.call('HVALS', KEYS[4 + 8 * (i - 1) + 3])) do
        local amount = tonumber(value)
        if amount == nil then
          sum = nil
          break
        end
        sum = sum + amount
      end
    end
    if sum == nil then out[i] = {'err', 'settle: held amount is not an integer'} else held[i] = sum end
  end
end
if #leases > 0 then redis.call('ZREM', KEYS[4], unpack(leases)) end
local balanceDelta, reservedDelta, counters, holds, expires, drop = 0, 0, {}, {}, {}, {}
for i = 1, n do
  if out[i] == nil then
    local k, a = 4 + 8 * (i - 1), 2 + 11 * (i - 1)
    local holdKey, c = KEYS[k + 1], charged[i]
    if warm then
      -- refund < 0: part of the charge was reserved before a flush and is not held any more.
      local refund = held[i] - c
      balanceDelta = balanceDelta + refund
      reservedDelta = reservedDelta + held[i]
      holds[holdKey] = (holds[holdKey] or 0) + held[i]
      counters[KEYS[k + 2]] = (counters[KEYS[k + 2]] or 0) + c
      for p = 6, 8 do
        local periodKey = KEYS[k + p]
        counters[periodKey] = (counters[periodKey] or 0) + c
        expires[periodKey] = ARGV[a + 3 + p]
      end
    end
    drop[#drop + 1] = KEYS[k + 3]
    redis.call('XADD', KEYS[3], '*', ARGV[2], ARGV[a + 3])
    if ARGV[a + 5] == '1' then redis.call('SET', KEYS[k + 5], ARGV[a + 6], 'PX', ARGV[1]) end
    local set = sets[KEYS[k + 4]]
    set.settled = set.settled or {}
    set.settled[#set.settled + 1] = ARGV[a + 7]
    if set.expireAt < tonumber(ARGV[a + 4]) then set.expireAt = tonumber(ARGV[a + 4]) end
    out[i] = 1
  end
end
if balanceDelta ~= 0 then redis.call('INCRBY', KEYS[1], string.format('%d', balanceDelta)) end
if reservedDelta ~= 0 then redis.call('DECRBY', KEYS[2], string.format('%d', reservedDelta)) end
for key, delta in pairs(counters) do
  if delta ~= 0 then
    redis.call('INCRBY', key, string.format('%d', delta))
    if expires[key] then redis.call('PEXPIREAT', key, expires[key]) end
  end
end
for key, amount in pairs(holds) do
  if amount ~= 0 and redis.call('DECRBY', key, string.format('%d', amount)) <= 0 then redis.call('DEL', key) end
end
if #drop > 0 then redis.call('DEL', unpack(drop)) end
for _, markers in ipairs(order) do
  local set = sets[markers]
  if set.settled then
    redis.call('SADD', markers, unpack(set.settled))
    redis.call('PEXPIREAT', markers, string.format('%d', set.expireAt))
  end
end
return out
`;

/**
 * SETTLE_LUA's input: a search's outgoing settlement (the same object is encoded again for a
 * re-send, so a re-send checks the marker set of the first send's bucket).
 */
export interface SettleInput {
  readonly scope: MoneyScope;
  readonly settlement: {
    readonly record: { readonly chargedMicros: Micros };
    readonly outcome: string | null;
    readonly releaseAccountLease?: boolean | undefined;
  };
  readonly recordJson: string;
  readonly firstSentAtMs: number;
}

/**
 * SETTLE_LUA, merged per account: KEYS balance, reserved total, the account's stream and
 * in-flight set, then this search's 8 keys; ARGV the outcome ttl and the stream field, then
 * this search's 11 arguments.
 */
export function encodeSettleArgs(input: SettleInput): MergedCall {
  const { scope, settlement } = input;
  const outcome = settlement.outcome;
  const bucketStartMs = input.firstSentAtMs - (input.firstSentAtMs % SETTLED_BUCKET_MS);
  return {
    kind: 'merged',
    merged: MERGED_SETTLE,
    keys: [scope.balanceKey, scope.reservedKey, redisKeys.settlementStream(scope.accountId), scope.inFlightKey],
    fixed: [OUTCOME_TTL_MS, SETTLEMENT_FIELD],
    memberKeys: [scope.holdKey, scope.totalKey, scope.reservationKey, redisKeys.settledMarkers(scope.accountId, bucketStartMs), scope.idempotencyKey ?? scope.reservationKey,
      scope.periodKeys[0], scope.periodKeys[1], scope.periodKeys[2]],
    memberArgs: [settlement.record.chargedMicros, '0', input.recordJson, bucketStartMs + SETTLED_BUCKET_MS + SETTLED_BUCKET_GRACE_MS,
      outcome !== null && scope.idempotencyKey !== null ? '1' : '0', outcome ?? '', scope.requestId, settlement.releaseAccountLease === true ? '1' : '0',
      scope.periodExpireAtMs[0], scope.periodExpireAtMs[1], scope.periodExpireAtMs[2]],
  };
}

/**
 * Stores the outcome of a search that made no provider call, unless another request owns
 * the idempotency key. KEYS[1] idempotency key. ARGV[1] request id, ARGV[2] outcome value
 * (JSON with field rid), ARGV[3] ttl ms. Returns nil when stored, else the stored value.
 */
export const IDEMPOTENCY_STORE_LUA = `
if tonumber(ARGV[3]) == nil then return redis.error_reply('idempotency: bad arguments') end
local existing = redis.call('GET', KEYS[1])
if existing then
  local ok, parsed = pcall(cjson.decode, existing)
  if not ok or type(parsed) ~= 'table' or parsed.rid ~= ARGV[1] then return existing end
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return false
`;

/** IDEMPOTENCY_STORE_LUA's input. */
export interface IdempotencyStoreInput {
  readonly key: string;
  readonly requestId: string;
  readonly outcome: string;
}

/** IDEMPOTENCY_STORE_LUA: KEYS the idempotency key; ARGV request id, outcome, OUTCOME_TTL_MS. */
export function encodeIdempotencyStoreArgs(input: IdempotencyStoreInput): ScriptCall {
  return { kind: 'script', name: SCRIPT.idempotencyStore, keys: [input.key], args: [input.requestId, input.outcome, OUTCOME_TTL_MS] };
}

/**
 * Gives back an Idempotency-Key claim when the search ended without an outcome worth
 * keeping (503 overloaded: nothing ran, so a retry with the same key must be able to run).
 * Deletes only this request's own claim. KEYS[1] idempotency key. ARGV[1] request id.
 * Returns 1 when deleted, else 0.
 */
export const IDEMPOTENCY_RELEASE_LUA = `
local existing = redis.call('GET', KEYS[1])
if not existing then return 0 end
local ok, parsed = pcall(cjson.decode, existing)
if not ok or type(parsed) ~= 'table' or parsed.rid ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`;

/** IDEMPOTENCY_RELEASE_LUA's input. */
export interface IdempotencyReleaseInput {
  readonly key: string;
  readonly requestId: string;
}

/** IDEMPOTENCY_RELEASE_LUA: KEYS the idempotency key; ARGV the request id. */
export function encodeIdempotencyReleaseArgs(input: IdempotencyReleaseInput): ScriptCall {
  return { kind: 'script', name: SCRIPT.idempotencyRelease, keys: [input.key], args: [input.requestId] };
}

/**
 * Admission of the searches of one account, each with its first reservation, in one atomic
 * step (RedisBatch merges the admissions of one account that share a flush). Each request is
 * decided exactly as if it ran alone, in order: the key's rate limit (GCRA on Redis's clock,
 * in microseconds), the account's in-flight lease (a sorted set of request ids scored by
 * expiry in Redis-clock milliseconds), the idempotency claim and the reservation of
 * RESERVE_LUA. Everything is read and checked before the first write (values are kept in
 * the script between requests), so a refused request (rate or concurrency) writes nothing:
 * no token is taken when concurrency refuses, and no lease when the rate refuses.
 * KEYS[1] spendable balance, KEYS[2] account reserved total, KEYS[3] the account's in-flight
 * set; then 5 per request: the key's limit counter (as RESERVE_LUA's KEYS[3]), the
 * search's reservation hash, its idempotency key (the reservation hash when unused), the
 * key's rate state (GCRA theoretical arrival time, microseconds), the key's hold (as
 * RESERVE_LUA's KEYS[6]).
 * ARGV[1] requests per second (> 0), ARGV[2] burst (>= 1), ARGV[3] account cap (>= 1),
 * ARGV[4] lease ttl ms; then 9 per request: amount (>= 0), key limit (-1: none), attempt index,
 * reservation hash ttl ms (also the hold's), a fan-out's further reservations ('0': none; else
 * `index:amount` pairs joined by ',', each decided after the first as RESERVE_LUA would, in
 * order, against what the ones before left), claim '1'/'0', claim value, claim ttl ms, request
 * id (the lease member). A fan-out is one request: one rate token, one in-flight lease, one claim.
 * Returns one reply per request: {'cold'} (nothing written: the account's spendable side has
 * not been rebuilt since Redis lost its data; checked first), {'rate', retry ms} (nothing
 * written: ms until one more request fits), {'busy'} (nothing written: the account holds cap
 * live leases), {'dup', remaining, stored} (nothing written: the idempotency key belongs to
 * an earlier request), {verdict, remaining} with verdict 'ok' | 'limit' | 'balance' as
 * RESERVE_LUA (token and lease taken, claim written; reserved only on 'ok'), followed by one
 * verdict per further reservation of a fan-out ('ok' | 'limit' | 'balance'), or
 * {'err', message} (that request's arguments or keys are not valid; nothing written for it).
 * `remaining` is how many more requests the key's burst holds right after this one.
 */
export const ADMIT_LUA = `${RESERVATION_RULE_LUA}
-- A fan-out's further reservations: '0' is none (one shared empty list); else index:amount pairs joined by ','. Nil when malformed.
local NONE = {}
local function furtherOf(text)
  if text == '0' then return NONE end
  local list, parts = {}, {}
  for index, amount in string.gmatch(text, '(%d+):(%d+)') do
    list[#list + 1] = {index, tonumber(amount)}
    parts[#parts + 1] = index .. ':' .. amount
  end
  if #list == 0 or table.concat(parts, ',') ~= text then return nil end
  return list
end
local n = (#KEYS - 3) / 5
if n < 1 or n % 1 ~= 0 or #ARGV ~= 4 + 9 * n then return redis.error_reply('admit: bad arguments') end
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cap = tonumber(ARGV[3])
local leaseTtl = tonumber(ARGV[4])
if rate == nil or rate <= 0 or burst == nil or burst < 1 or cap == nil or cap < 1 or leaseTtl == nil or leaseTtl <= 0 then
  return redis.error_reply('admit: bad arguments')
end
local out = {}
local balanceText = redis.call('GET', KEYS[1])
if not balanceText then
  for i = 1, n do out[i] = {'cold'} end
  return out
end
local balance = tonumber(balanceText)
if balance == nil or tonumber(redis.call('GET', KEYS[2]) or '0') == nil then
  return redis.error_reply('admit: balance is not an integer')
end
local t = redis.call('TIME')
local nowUs = tonumber(t[1]) * 1000000 + tonumber(t[2])
local nowMs = math.floor(nowUs / 1000)
local interval = 1000000 / rate
local window = burst * interval
-- Only live leases count: one left by a gateway that died expires at its score.
local live = redis.call('ZCOUNT', KEYS[3], '(' .. nowMs, '+inf')
-- Reads, once per key, and checks: a request with a bad argument or value gets 'err'.
local tats, used, idem, hold = {}, {}, {}, {}
local amount, limit, further = {}, {}, {}
for i = 1, n do
  local k, a = 3 + 5 * (i - 1), 4 + 9 * (i - 1)
  local am, li, ex = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), furtherOf(ARGV[a + 5])
  if am == nil or am < 0 or am % 1 ~= 0 or li == nil or ex == nil
    or tonumber(ARGV[a + 4]) == nil or tonumber(ARGV[a + 8]) == nil or ARGV[a + 9] == '' then
    out[i] = {'err', 'admit: bad arguments'}
  else
    amount[i], limit[i], further[i] = am, li, ex
    local rateKey, limitKey = KEYS[k + 4], KEYS[k + 1]
    if tats[rateKey] == nil then tats[rateKey] = tonumber(redis.call('GET', rateKey) or '0') or false end
    if li >= 0 and used[limitKey] == nil then used[limitKey] = tonumber(redis.call('GET', limitKey) or '0') or false end
    if ARGV[a + 6] == '1' and idem[KEYS[k + 3]] == nil then idem[KEYS[k + 3]] = redis.call('GET', KEYS[k + 3]) or false end
    if hold[KEYS[k + 5]] == nil then hold[KEYS[k + 5]] = tonumber(redis.call('GET', KEYS[k + 5]) or '0') or false end
    if hold[KEYS[k + 5]] == false then out[i] = {'err', 'admit: key hold is not an integer'}
    elseif tats[rateKey] == false then out[i] = {'err', 'admit: rate state is not a number'}
    elseif li >= 0 and used[limitKey] == false then out[i] = {'err', 'admit: key usage is not an integer'} end
  end
end
-- Decisions, in order, on the values kept here; then the writes they make.
local rateEnd, leases, claims, holds, holdAdd, holdTtl, extraHolds = {}, {}, {}, {}, {}, {}, {}
local reservedSum = 0
-- Holds an amount decided 'ok': off the balance, onto the reserved total and the key's hold.
local function take(holdKey, ttl, amount)
  balance = balance - amount
  reservedSum = reservedSum + amount
  hold[holdKey] = hold[holdKey] + amount
  holdAdd[holdKey] = (holdAdd[holdKey] or 0) + amount
  holdTtl[holdKey] = ttl
end
for i = 1, n do
  if out[i] == nil then
    local k, a = 3 + 5 * (i - 1), 4 + 9 * (i - 1)
    local rateKey, limitKey, idemKey, holdKey = KEYS[k + 4], KEYS[k + 1], KEYS[k + 3], KEYS[k + 5]
    local am, li = amount[i], limit[i]
    local claim = ARGV[a + 6] == '1'
    local tat = tats[rateKey]
    if tat < nowUs then tat = nowUs end
    local newTat = tat + interval
    local excess = newTat - nowUs
    local stored = claim and idem[idemKey] or false
    -- A repeat of an Idempotency-Key is answered with the first outcome before any limit is
    -- applied: it takes no rate token and no lease (docs/api.md 10.7: it returns the first outcome).
    if stored then
      local left = math.floor((window - (tat - nowUs)) / interval + 1e-9)
      if left > burst then left = burst end
      if left < 0 then left = 0 end
      out[i] = {'dup', left, stored}
    elseif excess > window then
      out[i] = {'rate', math.ceil((excess - window) / 1000)}
    elseif live >= cap then
      out[i] = {'busy'}
    else
      local remaining = math.floor((window - excess) / interval + 1e-9)
      local verdict = reservationVerdict(am, li, li >= 0 and used[limitKey] or 0, hold[holdKey], balance)
      tats[rateKey] = newTat
      rateEnd[rateKey] = newTat
      live = live + 1
      leases[#leases + 1] = nowMs + leaseTtl
      leases[#leases + 1] = ARGV[a + 9]
      if claim then
        idem[idemKey] = ARGV[a + 7]
        claims[#claims + 1] = i
      end
      if verdict == 'ok' then
        take(holdKey, ARGV[a + 4], am)
        holds[#holds + 1] = i
      end
      out[i] = {verdict, remaining}
      -- A fan-out's further reservations, each decided by the same rule on what is left.
      for _, extra in ipairs(further[i]) do
        local extraVerdict = reservationVerdict(extra[2], li, li >= 0 and used[limitKey] or 0, hold[holdKey], balance)
        if extraVerdict == 'ok' then
          take(holdKey, ARGV[a + 4], extra[2])
          extraHolds[#extraHolds + 1] = {KEYS[k + 2], extra[1], extra[2], ARGV[a + 4]}
        end
        out[i][#out[i] + 1] = extraVerdict
      end
    end
  end
end
for key, tatEnd in pairs(rateEnd) do
  redis.call('SET', key, string.format('%.0f', math.ceil(tatEnd)), 'PX', math.ceil((tatEnd - nowUs) / 1000) + 1000)
end
if #leases > 0 then
  -- Expired leases are already not counted (ZCOUNT above); removing them is housekeeping,
  -- done about one call in 16.
  if nowMs % 16 == 0 then redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', nowMs) end
  redis.call('ZADD', KEYS[3], unpack(leases))
  redis.call('PEXPIRE', KEYS[3], ARGV[4])
end
for _, i in ipairs(claims) do
  local a = 4 + 9 * (i - 1)
  redis.call('SET', KEYS[3 + 5 * (i - 1) + 3], ARGV[a + 7], 'PX', ARGV[a + 8])
end
if reservedSum > 0 then
  local sum = string.format('%d', reservedSum)
  redis.call('DECRBY', KEYS[1], sum)
  redis.call('INCRBY', KEYS[2], sum)
end
for key, add in pairs(holdAdd) do
  redis.call('INCRBY', key, string.format('%d', add))
  redis.call('PEXPIRE', key, holdTtl[key])
end
for _, i in ipairs(holds) do
  local a = 4 + 9 * (i - 1)
  local rsvKey = KEYS[3 + 5 * (i - 1) + 2]
  redis.call('HSET', rsvKey, ARGV[a + 3], ARGV[a + 1])
  redis.call('PEXPIRE', rsvKey, ARGV[a + 4])
end
for _, extra in ipairs(extraHolds) do
  redis.call('HSET', extra[1], extra[2], string.format('%d', extra[3]))
  redis.call('PEXPIRE', extra[1], extra[4])
end
return out
`;

/** ADMIT_LUA's input: a search's first admission with its first reservation (and a fan-out's further ones). */
export interface AdmitInput {
  readonly scope: MoneyScope;
  readonly limits: AdmissionRequest;
  readonly reserve: ReserveRequest;
  /** A fan-out's other models' reservations, decided after the first in this order; absent: none. */
  readonly further?: readonly ReserveRequest[];
}

/** The further reservations' ARGV slot: 0 for none, else `index:amount` pairs joined by ','. */
function furtherArg(further: readonly ReserveRequest[] | undefined): string | number {
  if (further === undefined || further.length === 0) return 0;
  return further.map((reserve) => `${reserve.index}:${reserve.amountMicros}`).join(',');
}

/**
 * ADMIT_LUA, merged per account: KEYS balance, reserved total, the account's in-flight set,
 * then this search's 5 keys; ARGV rate, burst, account cap and lease ttl, then this search's
 * 9 arguments (without a claim, the idempotency key slot holds the reservation hash).
 */
export function encodeAdmitArgs(input: AdmitInput): MergedCall {
  const { scope, limits, reserve } = input;
  const claim = reserve.claim;
  return {
    kind: 'merged',
    merged: MERGED_ADMIT,
    keys: [scope.balanceKey, scope.reservedKey, scope.inFlightKey],
    fixed: [limits.ratePerSecond, limits.burst, limits.accountCap, limits.leaseTtlMs],
    memberKeys: [scope.limitKey, scope.reservationKey, scope.idempotencyKey ?? scope.reservationKey, scope.rateKey, scope.holdKey],
    memberArgs: [reserve.amountMicros, scope.limitMicros, reserve.index, scope.reservationTtlMs, input.further === undefined ? 0 : furtherArg(input.further),
      claim === undefined ? '0' : '1', claim?.value ?? '', claim?.ttlMs ?? 0, scope.requestId],
  };
}

/**
 * Extends a search's account lease when it moves to its next attempt; a lease that has
 * already expired is not brought back (its slot may have been given away).
 * KEYS[1] the account's in-flight set. ARGV[1] request id, ARGV[2] lease ttl ms.
 * Returns 1 when extended, 0 when the lease was gone.
 */
export const LEASE_EXTEND_LUA = `
local life = tonumber(ARGV[2])
if life == nil or life <= 0 then return redis.error_reply('extend: bad arguments') end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) <= now then return 0 end
redis.call('ZADD', KEYS[1], 'XX', now + life, ARGV[1])
redis.call('PEXPIRE', KEYS[1], life)
return 1
`;

/** LEASE_EXTEND_LUA's input. */
export interface LeaseExtendInput {
  readonly inFlightKey: string;
  readonly requestId: string;
  readonly ttlMs: number;
}

/** LEASE_EXTEND_LUA: KEYS the account's in-flight set; ARGV request id, lease ttl. */
export function encodeLeaseExtendArgs(input: LeaseExtendInput): ScriptCall {
  return { kind: 'script', name: SCRIPT.leaseExtend, keys: [input.inFlightKey], args: [input.requestId, input.ttlMs] };
}

/**
 * Every script as the batch connection defines it: a script called through a ScriptCall
 * declares its number of keys (its encoder's `keys.length`); a merged script with members'
 * keys gives the count itself (RedisBatch sends it first).
 */
export const MONEY_SCRIPTS: readonly { readonly name: string; readonly lua: string; readonly numberOfKeys?: number }[] = [
  { name: SCRIPT.lease, lua: LEASE_LUA, numberOfKeys: 1 },
  { name: SCRIPT.reserve, lua: RESERVE_LUA, numberOfKeys: 6 },
  { name: SCRIPT.release, lua: RELEASE_LUA, numberOfKeys: 4 },
  { name: SCRIPT.settle, lua: SETTLE_LUA },
  { name: SCRIPT.idempotencyStore, lua: IDEMPOTENCY_STORE_LUA, numberOfKeys: 1 },
  { name: SCRIPT.idempotencyRelease, lua: IDEMPOTENCY_RELEASE_LUA, numberOfKeys: 1 },
  { name: SCRIPT.admit, lua: ADMIT_LUA },
  { name: SCRIPT.leaseExtend, lua: LEASE_EXTEND_LUA, numberOfKeys: 1 },
];
