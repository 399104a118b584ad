/**
 * The result cache's Lua scripts. An entry's value is `<asked>|<stored at, Unix ms>|<results
 * JSON>`: `asked` is the result count the provider was asked for, so an entry serves any
 * request for at most as many results, and the prefix is read without decoding the JSON.
 */

/**
 * Looks up a search's entries and, when none serves it, takes the lead of identical searches
 * or finds that another search leads. One call, one hash slot (every key shares its tag).
 * KEYS[1] the lead lock, KEYS[2..] the entries to try, in order.
 * ARGV[1] result count asked, ARGV[2] now (Unix ms), ARGV[3] the oldest age accepted in ms (-1: any),
 * ARGV[4] the lock's lifetime in ms, ARGV[5] the lock's token, ARGV[6] '1' to lead on a miss ('0': only look).
 * Returns {'hit', value} | {'lead'} | {'follow'} | {'miss'} (not led).
 */
export const LOOKUP_LUA = `
local asked = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local max_age = tonumber(ARGV[3])
for i = 2, #KEYS do
  local value = redis.call('GET', KEYS[i])
  if value then
    local a, at = string.match(value, '^(%d+)|(%d+)|')
    if a and tonumber(a) >= asked and (max_age < 0 or now - tonumber(at) <= max_age) then return {'hit', value} end
  end
end
if ARGV[6] ~= '1' then return {'miss'} end
if redis.call('SET', KEYS[1], ARGV[5], 'NX', 'PX', ARGV[4]) then return {'lead'} end
return {'follow'}
`;

/**
 * Stores an answer and gives back the lead lock when this search held it.
 * KEYS[1] the entry, KEYS[2] the lead lock.
 * ARGV[1] the value, ARGV[2] its lifetime in ms, ARGV[3] the lock's token ('' when not leading).
 */
export const STORE_LUA = `
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if ARGV[3] ~= '' and redis.call('GET', KEYS[2]) == ARGV[3] then redis.call('DEL', KEYS[2]) end
return 1
`;

/**
 * Gives back the lead lock without an answer (the leading call failed or did not run): the
 * searches waiting for it each go on alone. KEYS[1] the lock; ARGV[1] its token.
 */
export const RELEASE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0
`;

/**
 * What a waiting search finds: the leader's entry, the lock still held, or neither.
 * KEYS[1] the lead lock, KEYS[2] the entry the leader stores.
 * ARGV[1] result count asked, ARGV[2] now (Unix ms), ARGV[3] the oldest age accepted in ms (-1: any).
 * Returns {'entry', value} | {'wait'} | {'gone'}.
 */
export const PEEK_LUA = `
local value = redis.call('GET', KEYS[2])
if value then
  local a, at = string.match(value, '^(%d+)|(%d+)|')
  local max_age = tonumber(ARGV[3])
  if a and tonumber(a) >= tonumber(ARGV[1]) and (max_age < 0 or tonumber(ARGV[2]) - tonumber(at) <= max_age) then return {'entry', value} end
end
if redis.call('EXISTS', KEYS[1]) == 1 then return {'wait'} end
return {'gone'}
`;

export const CACHE_SCRIPTS = {
  svcCacheLookup: LOOKUP_LUA,
  svcCacheStore: STORE_LUA,
  svcCacheRelease: RELEASE_LUA,
  svcCachePeek: PEEK_LUA,
} as const;

export type CacheScriptName = keyof typeof CACHE_SCRIPTS;
