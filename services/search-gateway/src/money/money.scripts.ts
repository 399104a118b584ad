/**
 * The Lua scripts of the search hot path. Each validates every argument and every value it
 * reads before its first write: a Lua error does not roll back what was already written.
 * All keys of one script share one hash slot (the account tag, or the provider tag for
 * the lease), so every script runs unchanged on Redis Cluster. Amounts are integer
 * micro-USD passed as decimal strings.
 */

/**
 * Takes one provider-capacity lease, expiring by Redis's own clock.
 * KEYS[1] provider lease sorted set (member: lease id, score: expiry ms).
 * ARGV[1] lease id, ARGV[2] cap (0 refuses every lease), ARGV[3] lifetime ms.
 * Returns 1 when taken, 0 at capacity.
 */
export const LEASE_LUA = `
local cap = tonumber(ARGV[2])
local life = tonumber(ARGV[3])
if cap == nil or life == nil or life <= 0 then return redis.error_reply('lease: bad arguments') end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= cap then return 0 end
redis.call('ZADD', KEYS[1], now + life, ARGV[1])
redis.call('PEXPIRE', KEYS[1], life)
return 1
`;

/**
 * Reserves an attempt's most possible cost, and (on the search's first call) claims its
 * Idempotency-Key.
 * KEYS[1] spendable balance, KEYS[2] account reserved total, KEYS[3] the key's limit
 * counter (period usage, or all-time usage for a limit without reset; any account key
 * when the key has no limit), KEYS[4] the search's reservation hash (field: attempt
 * index, value: micro-USD held), KEYS[5] idempotency key (any account key when unused).
 * ARGV[1] amount (> 0), ARGV[2] key limit (-1: none), ARGV[3] attempt index,
 * ARGV[4] reservation hash ttl ms, ARGV[5] limit counter expire-at ms (0: never),
 * ARGV[6] claim '1'/'0', ARGV[7] claim value, ARGV[8] claim ttl ms.
 * Returns {'cold'} (nothing written) when the account's spendable side has not been rebuilt
 * since Redis lost its data (its balance key is missing: only a loss of Redis data removes
 * it; an account with no history gets a balance of 0 from billing), {'dup', stored value} (nothing written) when the idempotency
 * key is taken, else {'ok'} (reserved), {'limit'} (key limit would be passed) or
 * {'balance'} (balance too low); the claim is written in all three. The key limit is
 * checked first.
 */
export const RESERVE_LUA = `
local amount = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local limitExpireAt = tonumber(ARGV[5])
if amount == nil or amount <= 0 or amount % 1 ~= 0 or limit == nil or limitExpireAt == nil
  or tonumber(ARGV[4]) == nil or tonumber(ARGV[8]) == nil then
  return redis.error_reply('reserve: bad arguments')
end
if redis.call('EXISTS', KEYS[1]) == 0 then return {'cold'} end
local claim = ARGV[6] == '1'
if claim then
  local existing = redis.call('GET', KEYS[5])
  if existing then return {'dup', existing} end
end
local balance = tonumber(redis.call('GET', KEYS[1]) or '0')
if balance == nil or tonumber(redis.call('GET', KEYS[2]) or '0') == nil then
  return redis.error_reply('reserve: balance is not an integer')
end
local verdict = 'ok'
if limit >= 0 then
  local used = tonumber(redis.call('GET', KEYS[3]) or '0')
  if used == nil then return redis.error_reply('reserve: key usage is not an integer') end
  if used + amount > limit then verdict = 'limit' end
end
if verdict == 'ok' and balance < amount then verdict = 'balance' end
if claim then redis.call('SET', KEYS[5], ARGV[7], 'PX', ARGV[8]) end
if verdict ~= 'ok' then return {verdict} end
redis.call('DECRBY', KEYS[1], ARGV[1])
redis.call('INCRBY', KEYS[2], ARGV[1])
if limit >= 0 then
  redis.call('INCRBY', KEYS[3], ARGV[1])
  if limitExpireAt > 0 then redis.call('PEXPIREAT', KEYS[3], ARGV[5]) end
end
redis.call('HSET', KEYS[4], ARGV[3], ARGV[1])
redis.call('PEXPIRE', KEYS[4], ARGV[4])
return {'ok'}
`;

/**
 * Lowers what one attempt holds to \`keep\`, giving the difference back (a refund, or the
 * undo of a reservation whose lease was refused). Idempotent: a repeat finds nothing
 * above \`keep\` and does nothing; an attempt it does not hold is not touched.
 * KEYS[1] balance, KEYS[2] reserved total, KEYS[3] limit counter, KEYS[4] reservation hash.
 * ARGV[1] attempt index, ARGV[2] keep (micro-USD), ARGV[3] key has a limit '1'/'0'.
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
if ARGV[3] == '1' then redis.call('DECRBY', KEYS[3], back) end
if keep == 0 then redis.call('HDEL', KEYS[4], ARGV[1]) else redis.call('HSET', KEYS[4], ARGV[1], ARGV[2]) end
return held - keep
`;

/**
 * Settles a search once: everything still held by its reservation hash is finalized
 * (\`charged\` kept, the rest refunded), the key's all-time usage grows by \`charged\`, one
 * SettlementRecord is appended to the account's stream, and (optionally) the search's
 * idempotent outcome is stored, all atomically. A repeat (same request id) does nothing.
 * After Redis lost its data (docs/architecture.md, "When Redis fails"):
 * - account cold (no balance key; the flush came during the search): only the record,
 *   the settled marker and the outcome are written; balance and counters are left alone
 *   (hydration subtracts the pending record when it rebuilds them);
 * - account hydrated but the reservation (or part of it) gone (reserved before the flush):
 *   what the hash does not hold is taken from the balance, so the charge still counts once.
 * KEYS[1] balance, KEYS[2] reserved total, KEYS[3] limit counter, KEYS[4] all-time usage,
 * KEYS[5] reservation hash, KEYS[6] settlement stream, KEYS[7] settled marker,
 * KEYS[8] idempotency key (any account key when unused).
 * ARGV[1] charged (micro-USD), ARGV[2] key has a limit '1'/'0', ARGV[3] record JSON,
 * ARGV[4] settled marker ttl ms, ARGV[5] store outcome '1'/'0', ARGV[6] outcome value,
 * ARGV[7] outcome ttl ms, ARGV[8] stream field name.
 * Returns 1 when settled now, 0 when it had been settled already.
 */
export const SETTLE_LUA = `
if redis.call('EXISTS', KEYS[7]) == 1 then return 0 end
local charged = tonumber(ARGV[1])
if charged == nil or charged < 0 or charged % 1 ~= 0 or tonumber(ARGV[4]) == nil or tonumber(ARGV[7]) == nil then
  return redis.error_reply('settle: bad arguments')
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  local held = 0
  for _, value in ipairs(redis.call('HVALS', KEYS[5])) do
    local n = tonumber(value)
    if n == nil then return redis.error_reply('settle: held amount is not an integer') end
    held = held + n
  end
  -- refund < 0: part of the charge was reserved before a flush and is not held any more.
  local refund = held - charged
  if refund ~= 0 then redis.call('INCRBY', KEYS[1], string.format('%d', refund)) end
  if held > 0 then redis.call('DECRBY', KEYS[2], string.format('%d', held)) end
  if ARGV[2] == '1' then
    if refund ~= 0 then redis.call('DECRBY', KEYS[3], string.format('%d', refund)) end
    if KEYS[3] ~= KEYS[4] and charged > 0 then redis.call('INCRBY', KEYS[4], ARGV[1]) end
  elseif charged > 0 then
    redis.call('INCRBY', KEYS[4], ARGV[1])
  end
end
redis.call('DEL', KEYS[5])
redis.call('XADD', KEYS[6], '*', ARGV[8], ARGV[3])
redis.call('SET', KEYS[7], '1', 'PX', ARGV[4])
if ARGV[5] == '1' then redis.call('SET', KEYS[8], ARGV[6], 'PX', ARGV[7]) end
return 1
`;

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

/**
 * Admission of a search, its first reservation included, in one atomic step: the key's rate
 * limit (GCRA on Redis's clock, in microseconds), the account's in-flight lease (a sorted
 * set of request ids scored by expiry in Redis-clock milliseconds), the idempotency claim
 * and the reservation of RESERVE_LUA. Everything is read and checked before the first
 * write, so a refused request (rate or concurrency) writes nothing: no token is taken when
 * concurrency refuses, and no lease when the rate refuses.
 * KEYS[1..5] as RESERVE_LUA, KEYS[6] the key's rate state (GCRA theoretical arrival time,
 * microseconds), KEYS[7] the account's in-flight set.
 * ARGV[1..8] as RESERVE_LUA, ARGV[9] requests per second (> 0), ARGV[10] burst (>= 1),
 * ARGV[11] request id (the lease member), ARGV[12] account cap (>= 1), ARGV[13] lease ttl ms.
 * Returns {'cold'} (nothing written: the account's spendable side has not been rebuilt since
 * Redis lost its data; checked first), {'rate', retry ms} (nothing written: ms until one more request fits),
 * {'busy'} (nothing written: the account holds cap live leases), {'dup', remaining, stored}
 * (the token is taken, nothing else: the idempotency key belongs to an earlier request), or
 * {verdict, remaining} with verdict 'ok' | 'limit' | 'balance' as RESERVE_LUA (token and lease
 * taken, claim written; reserved only on 'ok'). `remaining` is how many more requests the
 * key's burst holds right after this one.
 */
export const ADMIT_LUA = `
local amount = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local limitExpireAt = tonumber(ARGV[5])
local rate = tonumber(ARGV[9])
local burst = tonumber(ARGV[10])
local cap = tonumber(ARGV[12])
local leaseTtl = tonumber(ARGV[13])
if amount == nil or amount <= 0 or amount % 1 ~= 0 or limit == nil or limitExpireAt == nil
  or tonumber(ARGV[4]) == nil or tonumber(ARGV[8]) == nil
  or rate == nil or rate <= 0 or burst == nil or burst < 1 or cap == nil or cap < 1
  or leaseTtl == nil or leaseTtl <= 0 or ARGV[11] == '' then
  return redis.error_reply('admit: bad arguments')
end
if redis.call('EXISTS', KEYS[1]) == 0 then return {'cold'} end
local t = redis.call('TIME')
local nowUs = tonumber(t[1]) * 1000000 + tonumber(t[2])
local nowMs = math.floor(nowUs / 1000)
local interval = 1000000 / rate
local tat = tonumber(redis.call('GET', KEYS[6]) or '0')
if tat == nil then return redis.error_reply('admit: rate state is not a number') end
if tat < nowUs then tat = nowUs end
local newTat = tat + interval
local excess = newTat - nowUs
local window = burst * interval
local claim = ARGV[6] == '1'
-- A repeat of an Idempotency-Key is answered with the first outcome before any limit is
-- applied: it takes no rate token and no lease (CONTRACT.md: it returns the first outcome).
if claim then
  local stored = redis.call('GET', KEYS[5])
  if stored then
    local left = math.floor((window - (tat - nowUs)) / interval + 1e-9)
    if left > burst then left = burst end
    if left < 0 then left = 0 end
    return {'dup', left, stored}
  end
end
if excess > window then
  return {'rate', math.ceil((excess - window) / 1000)}
end
local remaining = math.floor((window - excess) / interval + 1e-9)
local holding = redis.call('ZSCORE', KEYS[7], ARGV[11])
if not holding and redis.call('ZCOUNT', KEYS[7], '(' .. nowMs, '+inf') >= cap then return {'busy'} end
local verdict = 'ok'
do
  local balance = tonumber(redis.call('GET', KEYS[1]) or '0')
  if balance == nil or tonumber(redis.call('GET', KEYS[2]) or '0') == nil then
    return redis.error_reply('admit: balance is not an integer')
  end
  if limit >= 0 then
    local used = tonumber(redis.call('GET', KEYS[3]) or '0')
    if used == nil then return redis.error_reply('admit: key usage is not an integer') end
    if used + amount > limit then verdict = 'limit' end
  end
  if verdict == 'ok' and balance < amount then verdict = 'balance' end
end
redis.call('SET', KEYS[6], string.format('%.0f', math.ceil(newTat)), 'PX', math.ceil(excess / 1000) + 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[7], '-inf', nowMs)
redis.call('ZADD', KEYS[7], nowMs + leaseTtl, ARGV[11])
redis.call('PEXPIRE', KEYS[7], leaseTtl)
if claim then redis.call('SET', KEYS[5], ARGV[7], 'PX', ARGV[8]) end
if verdict ~= 'ok' then return {verdict, remaining} end
redis.call('DECRBY', KEYS[1], ARGV[1])
redis.call('INCRBY', KEYS[2], ARGV[1])
if limit >= 0 then
  redis.call('INCRBY', KEYS[3], ARGV[1])
  if limitExpireAt > 0 then redis.call('PEXPIREAT', KEYS[3], ARGV[5]) end
end
redis.call('HSET', KEYS[4], ARGV[3], ARGV[1])
redis.call('PEXPIRE', KEYS[4], ARGV[4])
return {'ok', remaining}
`;

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
