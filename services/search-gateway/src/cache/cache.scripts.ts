/**
 * The result cache's values and its Lua scripts (docs/decisions/0023, "One key per entry").
 *
 * An entry's key holds one of two values:
 * - an answer: `<asked>|<stored at, Unix ms>|<count>|<results JSON>` (or the first format,
 *   without the count); `asked` is the result count the provider was asked for, so an entry
 *   serves any request for at most as many, and the prefix is read without decoding the JSON;
 * - a lead: `~<token>`, while one search calls the provider for it (the searches that find it
 *   wait for its answer). An answer starts with a digit, never with `~`.
 *
 * The common search (one entry, the shared one) needs no script: its lookup is one
 * `SET <entry> ~<token> NX PX <lead lifetime> GET` (it takes the lead when the key is empty,
 * and answers what the key holds otherwise), its store one `SET <entry> <answer> PX <ttl>`
 * (which replaces the lead), a waiting search's look one `GET`. A script in Redis costs
 * several times the plain command (measured: the store script 11.6 µs a call against 1.5 µs
 * for the SET of the same 5 KB answer).
 */

/** The first character of a lead's value. */
export const LEAD_MARK = '~';

/**
 * A BYOK search's lookup (two entries: the account's own first, then the shared one): the
 * first entry that serves it, or, with none, the lead of its own entry or another search's.
 * KEYS[1] the search's own entry (where its answer goes; the lead is taken there), KEYS[2..]
 * the others to try, in order.
 * ARGV[1] result count asked, ARGV[2] now (Unix ms), ARGV[3] the oldest age accepted in ms (-1: any),
 * ARGV[4] the lead's lifetime in ms, ARGV[5] the lead's value (`~<token>`), ARGV[6] '1' to lead on a miss ('0': only look).
 * Returns {'hit', value} | {'lead'} | {'follow'} | {'miss'} (no lead taken).
 */
export const LOOKUP_LUA = `
local asked = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local max_age = tonumber(ARGV[3])
local own = false
for i = 1, #KEYS do
  local value = redis.call('GET', KEYS[i])
  if i == 1 then own = value end
  if value then
    local a, at = string.match(value, '^(%d+)|(%d+)|')
    if a and tonumber(a) >= asked and (max_age < 0 or now - tonumber(at) <= max_age) then return {'hit', value} end
  end
end
if ARGV[6] ~= '1' then return {'miss'} end
if not own then
  redis.call('SET', KEYS[1], ARGV[5], 'PX', ARGV[4])
  return {'lead'}
end
if string.sub(own, 1, 1) == '${LEAD_MARK}' then return {'follow'} end
return {'miss'}
`;

/**
 * Gives back a lead without an answer (the leading call failed or did not run): the
 * searches waiting for it each go on alone. KEYS[1] the entry; ARGV[1] the lead's value.
 * An answer stored meanwhile (by another search) is kept.
 */
export const RELEASE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0
`;

export const CACHE_SCRIPTS = {
  svcCacheLookup: LOOKUP_LUA,
  svcCacheRelease: RELEASE_LUA,
} as const;

export type CacheScriptName = keyof typeof CACHE_SCRIPTS;
