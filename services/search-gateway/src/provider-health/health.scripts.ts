/**
 * The Lua scripts of provider health (docs/decisions/0027). Every key of one provider has
 * the hash tag `{ph:<provider>}` and is passed in KEYS, so each script runs on one slot of a
 * Redis Cluster. Times are the gateways' clocks (ARGV), like the key-limit periods.
 */

/**
 * One gateway's outcomes of one provider and source since its last flush.
 * KEYS: 1 breaker hash, 2 this window bucket, 3 this minute bucket, 4.. the window's buckets.
 * ARGV: 1 now ms, 2 window bucket ttl ms, 3 minute ttl ms, 4 calls, 5 failures,
 *   6 all timeouts (1/0), 7 leading timeouts, 8 trailing timeouts, 9 judge (1: the platform's
 *   key with the breaker on), 10 min calls, 11 failure percent, 12 timeout streak,
 *   13 cool-down ms, 14 number of minute fields, then field/increment pairs.
 * Returns the breaker: state, open_until_ms, force, reason, opened_at_ms.
 */
export const HEALTH_FLUSH_LUA = `
local now = tonumber(ARGV[1])
local calls = tonumber(ARGV[4])
local fails = tonumber(ARGV[5])
if calls > 0 then
  redis.call('HINCRBY', KEYS[2], 'n', calls)
  if fails > 0 then redis.call('HINCRBY', KEYS[2], 'fail', fails) end
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
local fields = tonumber(ARGV[14])
if fields > 0 then
  for i = 0, fields - 1 do
    redis.call('HINCRBY', KEYS[3], ARGV[15 + 2 * i], ARGV[16 + 2 * i])
  end
  redis.call('PEXPIRE', KEYS[3], ARGV[3])
end
if ARGV[9] == '1' then
  local b = redis.call('HMGET', KEYS[1], 'state', 'force', 'streak')
  local open = b[1] == 'open'
  local forced = b[2] == 'open' or b[2] == 'closed'
  local streak = tonumber(b[3] or '0') or 0
  local threshold = tonumber(ARGV[12])
  local reason = nil
  if ARGV[6] == '1' then
    streak = streak + tonumber(ARGV[7])
    if threshold > 0 and streak >= threshold then reason = streak .. ' timeouts in a row' end
  else
    if threshold > 0 and streak + tonumber(ARGV[7]) >= threshold then reason = (streak + tonumber(ARGV[7])) .. ' timeouts in a row' end
    streak = tonumber(ARGV[8])
    if reason == nil and threshold > 0 and streak >= threshold then reason = streak .. ' timeouts in a row' end
  end
  if reason == nil then
    local n, f = 0, 0
    for i = 4, #KEYS do
      local w = redis.call('HMGET', KEYS[i], 'n', 'fail')
      n = n + (tonumber(w[1] or '0') or 0)
      f = f + (tonumber(w[2] or '0') or 0)
    end
    if n >= tonumber(ARGV[10]) and n > 0 and f * 100 >= tonumber(ARGV[11]) * n then
      reason = f .. ' of ' .. n .. ' calls failed'
    end
  end
  if reason ~= nil and not open and not forced then
    redis.call('HSET', KEYS[1], 'state', 'open', 'opened_at_ms', now, 'open_until_ms', now + tonumber(ARGV[13]), 'reason', reason, 'streak', 0)
  else
    redis.call('HSET', KEYS[1], 'streak', streak)
  end
end
return redis.call('HMGET', KEYS[1], 'state', 'open_until_ms', 'force', 'reason', 'opened_at_ms')
`;

/**
 * A probe answered: the breaker closes and its window starts over (unless an operator holds
 * it open). KEYS: 1 breaker hash, 2.. the window's buckets of the platform key. ARGV: 1 now ms.
 * Returns 1 when it closed.
 */
export const HEALTH_CLOSE_LUA = `
if redis.call('HGET', KEYS[1], 'state') ~= 'open' or redis.call('HGET', KEYS[1], 'force') == 'open' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'closed', 'closed_at_ms', ARGV[1], 'streak', 0)
redis.call('HDEL', KEYS[1], 'open_until_ms', 'opened_at_ms', 'reason')
for i = 2, #KEYS do redis.call('DEL', KEYS[i]) end
return 1
`;

/**
 * A probe failed: another cool-down. KEYS: 1 breaker hash. ARGV: 1 now ms, 2 cool-down ms.
 * Returns 1 when the breaker was open (and stays so).
 */
export const HEALTH_REOPEN_LUA = `
if redis.call('HGET', KEYS[1], 'state') ~= 'open' then return 0 end
redis.call('HSET', KEYS[1], 'open_until_ms', tonumber(ARGV[1]) + tonumber(ARGV[2]), 'reason', 'the probe failed')
return 1
`;
