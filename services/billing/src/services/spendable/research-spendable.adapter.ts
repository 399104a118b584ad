import { KEY_PERIOD_COUNTER_GRACE_MS, LIMIT_RESETS, periodOf, recoveryKeys, RESERVATION_RULE_LUA, RESERVATION_TTL_GRACE_MS, redisKeys, researchReservationKey } from '@svc/contracts';
import type { LimitReset } from '@svc/contracts';
import type { Micros } from '@svc/money';
import type { RedisClient } from '@svc/redis-client';
import { APPLIED_MARKER_TTL_SECONDS } from './spendable-balance.adapter';

/**
 * A research run's money in Redis (docs/decisions/0062). At creation the run's hold is taken
 * from the spendable balance and counted in the key's hold atomically, with the reservation
 * rule every search uses (RESERVE_RESEARCH_LUA), into a reservation hash shaped like a search's;
 * the same flow then writes the hold as a `research_hold` ledger entry, and its application
 * (APPLY_HOLD_LUA, once, under the entry's applied marker, as grants are applied) moves the
 * money out of `reserved`: from then on the hold is in the durable ledger, so a Redis that loses
 * its data rebuilds the account without it. The release at the end (APPLY_RELEASE_LUA, once,
 * under its entry's marker) gives back what the run did not cost, takes the hold off the key's
 * hold and adds the cost to the key's usage counters. Every key of a script is under the
 * account's hash tag.
 */

/**
 * KEYS[1] bal, KEYS[2] reserved, KEYS[3] the key's limit counter (any account key when no
 * limit), KEYS[4] the run's reservation hash, KEYS[5] the key's hold.
 * ARGV[1] amount (> 0), ARGV[2] limit (-1: none), ARGV[3] the hash's ttl ms, ARGV[4] the least ttl ms of the key's hold.
 * Returns {'cold'} (nothing written), {'dup'} (this run already reserved: nothing written),
 * {'limit' | 'balance', balance, used + held} (nothing written) or {'ok'}.
 */
const RESERVE_RESEARCH_LUA = `${RESERVATION_RULE_LUA}
local amount = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local rsvTtl = tonumber(ARGV[3])
local holdTtl = tonumber(ARGV[4])
if amount == nil or amount <= 0 or amount % 1 ~= 0 or limit == nil or rsvTtl == nil or rsvTtl <= 0 or holdTtl == nil or holdTtl <= 0 then
  return redis.error_reply('research reserve: bad arguments')
end
local balanceText = redis.call('GET', KEYS[1])
if not balanceText then return {'cold'} end
local balance = tonumber(balanceText)
if balance == nil or tonumber(redis.call('GET', KEYS[2]) or '0') == nil then
  return redis.error_reply('research reserve: balance is not an integer')
end
local held = tonumber(redis.call('GET', KEYS[5]) or '0')
if held == nil then return redis.error_reply('research reserve: key hold is not an integer') end
local used = 0
if limit >= 0 then
  used = tonumber(redis.call('GET', KEYS[3]) or '0')
  if used == nil then return redis.error_reply('research reserve: key usage is not an integer') end
end
if redis.call('EXISTS', KEYS[4]) == 1 then return {'dup'} end
local verdict = reservationVerdict(amount, limit, used, held, balance)
if verdict ~= 'ok' then return {verdict, balance, used + held} end
redis.call('DECRBY', KEYS[1], ARGV[1])
redis.call('INCRBY', KEYS[2], ARGV[1])
redis.call('INCRBY', KEYS[5], ARGV[1])
if redis.call('PTTL', KEYS[5]) < holdTtl then redis.call('PEXPIRE', KEYS[5], holdTtl) end
redis.call('HSET', KEYS[4], '0', ARGV[1])
redis.call('PEXPIRE', KEYS[4], rsvTtl)
return {'ok'}
`;

/**
 * Gives a reservation back whole (its run was not written): everything the hash holds to the
 * balance and off the key's hold; nothing when the hash is gone. KEYS[1] bal, KEYS[2]
 * reserved, KEYS[3] the key's hold, KEYS[4] the hash. Returns the micro-USD given back.
 */
const UNRESERVE_RESEARCH_LUA = `
local held = tonumber(redis.call('HGET', KEYS[4], '0') or '0')
if held == nil or held < 0 or held % 1 ~= 0 then return redis.error_reply('research unreserve: held amount is not an integer') end
redis.call('DEL', KEYS[4])
if held == 0 then return 0 end
local amount = string.format('%d', held)
redis.call('INCRBY', KEYS[1], amount)
redis.call('DECRBY', KEYS[2], amount)
if redis.call('DECRBY', KEYS[3], amount) <= 0 then redis.call('DEL', KEYS[3]) end
return held
`;

/**
 * A `research_hold` entry applied once: the money the reservation holds leaves `reserved`
 * (the ledger holds it now); what the hash no longer holds (reconciliation released it as
 * stale, or Redis lost it before the entry was written) is taken from the balance, so the
 * hold counts once either way. KEYS[1] the entry's applied marker, KEYS[2] bal, KEYS[3]
 * reserved, KEYS[4] the reservation hash. ARGV[1] the hold (> 0), ARGV[2] marker ttl s.
 * Returns 1 (applied now), 0 (applied before) or -1 (the account is cold: nothing written;
 * hydration counts the entry).
 */
const APPLY_HOLD_LUA = `
local amount = tonumber(ARGV[1])
if amount == nil or amount < 0 or amount % 1 ~= 0 or tonumber(ARGV[2]) == nil then return redis.error_reply('apply hold: bad arguments') end
if redis.call('EXISTS', KEYS[2]) == 0 then return -1 end
local held = tonumber(redis.call('HGET', KEYS[4], '0') or '0')
if held == nil or held < 0 or held % 1 ~= 0 then return redis.error_reply('apply hold: held amount is not an integer') end
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[2]) then return 0 end
if held > amount then held = amount end
redis.call('DEL', KEYS[4])
if held > 0 then redis.call('DECRBY', KEYS[3], string.format('%d', held)) end
if amount > held then redis.call('DECRBY', KEYS[2], string.format('%d', amount - held)) end
return 1
`;

/**
 * A `research_release` entry applied once: what the run did not cost back to the balance, the
 * run's hold off the key's hold, and its cost added to the key's all-time, day, week and month
 * counters (the periods of its settlement, as a search's settle script does).
 * KEYS[1] marker, KEYS[2] bal, KEYS[3] the key's hold, KEYS[4] all-time counter, KEYS[5..7] day,
 * week and month counters. ARGV[1] release, ARGV[2] the run's hold, ARGV[3] its cost, ARGV[4]
 * marker ttl s, ARGV[5..7] when each period counter expires (Unix ms).
 * Returns 1, 0 or -1 as APPLY_HOLD_LUA.
 */
const APPLY_RELEASE_LUA = `
local release, hold, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if release == nil or release < 0 or hold == nil or hold < 0 or cost == nil or cost < 0 or tonumber(ARGV[4]) == nil then
  return redis.error_reply('apply release: bad arguments')
end
for i = 5, 7 do if tonumber(ARGV[i]) == nil then return redis.error_reply('apply release: bad arguments') end end
if redis.call('EXISTS', KEYS[2]) == 0 then return -1 end
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[4]) then return 0 end
if release > 0 then redis.call('INCRBY', KEYS[2], ARGV[1]) end
if hold > 0 and redis.call('DECRBY', KEYS[3], ARGV[2]) <= 0 then redis.call('DEL', KEYS[3]) end
if cost > 0 then
  redis.call('INCRBY', KEYS[4], ARGV[3])
  for i = 5, 7 do
    redis.call('INCRBY', KEYS[i], ARGV[3])
    redis.call('PEXPIREAT', KEYS[i], ARGV[i])
  end
end
return 1
`;

/**
 * Keeps a key's hold alive at least `ttl` ms (a run longer than a search's hold lifetime), and
 * says whether the account is warm. KEYS[1] the key's hold, KEYS[2] bal; ARGV[1] ttl ms.
 * Returns 1 (warm) or 0 (cold: its balance key is missing).
 */
const KEEP_HOLD_LUA = `
if redis.call('EXISTS', KEYS[1]) == 1 and redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return redis.call('EXISTS', KEYS[2])
`;

export type ResearchReserveVerdict =
  | { kind: 'ok' }
  | { kind: 'cold' }
  /** Reserved before for this run id (a retried create): nothing taken twice. */
  | { kind: 'dup' }
  | { kind: 'limit' | 'balance' };

export interface ResearchReservation {
  accountId: string;
  keyId: string;
  runId: string;
  amountMicros: Micros;
  /** The key's limit and period (null: none). */
  limitMicros: Micros | null;
  limitReset: LimitReset | null;
  /** How long the key's hold must live at least: the run's bound and a margin. */
  holdTtlMs: number;
}

/** A research reservation hash lives for this past RESERVATION_TTL_GRACE_MS: reconciliation releases it as stale a minute later. */
const CREATION_BOUND_MS = 60_000;

/** Thrown when the account is cold at a hold's or release's application (hydration counts the entry). */
export class ResearchColdAccountError extends Error {
  constructor(readonly accountId: string) {
    super('the spendable balance is not rebuilt yet');
    this.name = 'ResearchColdAccountError';
  }
}

function applied(reply: unknown, accountId: string): boolean {
  if (reply === -1) throw new ResearchColdAccountError(accountId);
  return reply === 1;
}

/** The Redis side of research runs' money (the scripts above). */
export class ResearchSpendableAdapter {
  constructor(private readonly redis: RedisClient) {}

  /** The key's limit counter of the current period (its all-time counter for a limit without reset). */
  private limitKey(accountId: string, keyId: string, reset: LimitReset | null, nowMs: number): string {
    return reset === null ? redisKeys.keyTotalUsage(accountId, keyId) : redisKeys.keyPeriodUsage(accountId, keyId, reset, periodOf(reset, nowMs).startMs);
  }

  async reserve(r: ResearchReservation, nowMs = Date.now()): Promise<ResearchReserveVerdict> {
    const reply = (await this.redis.eval(
      RESERVE_RESEARCH_LUA, 5,
      redisKeys.accountBalance(r.accountId), redisKeys.accountReserved(r.accountId), this.limitKey(r.accountId, r.keyId, r.limitReset, nowMs),
      researchReservationKey(r.accountId, r.runId), redisKeys.keyHold(r.accountId, r.keyId),
      String(r.amountMicros), String(r.limitMicros ?? -1), String(RESERVATION_TTL_GRACE_MS + CREATION_BOUND_MS), String(r.holdTtlMs),
    )) as unknown[];
    switch (reply[0]) {
      case 'ok':
        return { kind: 'ok' };
      case 'cold':
        return { kind: 'cold' };
      case 'dup':
        return { kind: 'dup' };
      case 'limit':
        return { kind: 'limit' };
      case 'balance':
        return { kind: 'balance' };
      default:
        throw new Error('unexpected research reserve reply');
    }
  }

  async unreserve(accountId: string, keyId: string, runId: string): Promise<Micros> {
    return (await this.redis.eval(
      UNRESERVE_RESEARCH_LUA, 4,
      redisKeys.accountBalance(accountId), redisKeys.accountReserved(accountId), redisKeys.keyHold(accountId, keyId), researchReservationKey(accountId, runId),
    )) as number;
  }

  /** True when this call applied the hold entry `entryId` of run `runId` (false: applied before). Throws ResearchColdAccountError. */
  async applyHold(accountId: string, entryId: string, runId: string, holdMicros: Micros): Promise<boolean> {
    return applied(await this.redis.eval(
      APPLY_HOLD_LUA, 4,
      redisKeys.appliedEntry(accountId, entryId), redisKeys.accountBalance(accountId), redisKeys.accountReserved(accountId), researchReservationKey(accountId, runId),
      String(holdMicros), String(APPLIED_MARKER_TTL_SECONDS),
    ), accountId);
  }

  /** True when this call applied the release entry `entryId` (false: applied before). Throws ResearchColdAccountError. */
  async applyRelease(release: { accountId: string; entryId: string; keyId: string; releaseMicros: Micros; heldMicros: Micros; costMicros: Micros; settledAtMs: number }): Promise<boolean> {
    const { accountId, keyId } = release;
    const periods = LIMIT_RESETS.map((reset) => ({ reset, period: periodOf(reset, release.settledAtMs) }));
    return applied(await this.redis.eval(
      APPLY_RELEASE_LUA, 7,
      redisKeys.appliedEntry(accountId, release.entryId), redisKeys.accountBalance(accountId), redisKeys.keyHold(accountId, keyId), redisKeys.keyTotalUsage(accountId, keyId),
      ...periods.map(({ reset, period }) => redisKeys.keyPeriodUsage(accountId, keyId, reset, period.startMs)),
      String(release.releaseMicros), String(release.heldMicros), String(release.costMicros), String(APPLIED_MARKER_TTL_SECONDS),
      ...periods.map(({ period }) => String(period.endMs + KEY_PERIOD_COUNTER_GRACE_MS)),
    ), accountId);
  }

  /** Asks the ledger worker to rebuild a cold account (src/services/hydration). */
  async requestHydration(accountId: string): Promise<void> {
    await this.redis.sadd(recoveryKeys.hydrationWanted, accountId);
  }

  /**
   * Keeps the key's hold alive at least `ttlMs` (each step of a long run). A cold account (Redis
   * lost its data) is queued for hydration, which rebuilds its balance without the run's hold
   * and the key's hold with it. True when the account is warm.
   */
  async keepHold(accountId: string, keyId: string, ttlMs: number): Promise<boolean> {
    const warm = (await this.redis.eval(KEEP_HOLD_LUA, 2, redisKeys.keyHold(accountId, keyId), redisKeys.accountBalance(accountId), String(ttlMs))) === 1;
    if (!warm) await this.requestHydration(accountId);
    return warm;
  }
}
