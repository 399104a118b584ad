/**
 * The reservation rule, one Lua function every script that reserves money starts with (the
 * gateway's RESERVE_LUA and ADMIT_LUA, billing's research reservation): the key's limit is
 * checked first (what the key was charged in its period, plus what its open searches and runs
 * hold, plus this amount, must stay within the limit; -1: no limit), then the spendable
 * balance. Returns 'ok', 'limit' or 'balance'. Its inputs are checked numbers.
 */
export const RESERVATION_RULE_LUA = `
local function reservationVerdict(amount, limit, used, held, balance)
  if limit >= 0 and used + held + amount > limit then return 'limit' end
  if balance < amount then return 'balance' end
  return 'ok'
end
`;
