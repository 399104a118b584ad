import { recoveryKeys, redisKeys } from '@svc/contracts';
import type { Micros } from '@svc/money';
import type { RedisClient } from '@svc/redis-client';
import type { SpendableReader, SpendableView } from '../ledger/spendable.port';

/** How long an applied-entry marker lives: far longer than any entry stays unmarked in Postgres. */
export const APPLIED_MARKER_TTL_SECONDS = 30 * 24 * 3600;

/**
 * Adds an entry's amount to the spendable balance exactly once: the marker is set NX
 * and the balance moves only when the marker was new. Everything is validated before the
 * first write (a Lua error does not roll back). Both keys carry the account's hash tag.
 * A missing balance key means the account is cold (Redis lost its data, or the account never
 * had money): unless ARGV[3] is '1' (the caller checked in the ledger that this entry is the
 * account's only money and nothing was ever spent), nothing is written and {-1, 0} comes
 * back; hydration counts the entry instead (src/services/hydration).
 * Returns {1 applied now | 0 applied before | -1 cold, balance after}.
 */
const APPLY_ONCE = `
local amount = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
if amount == nil or amount ~= math.floor(amount) or ttl == nil or ttl <= 0 then
  return redis.error_reply('apply: bad arguments')
end
if ARGV[3] ~= '1' and redis.call('EXISTS', KEYS[2]) == 0 then return {-1, 0} end
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', ttl) then
  return {1, redis.call('INCRBY', KEYS[2], ARGV[1])}
end
return {0, tonumber(redis.call('GET', KEYS[2]) or '0')}`;

function integerOrNull(value: string | null): number | null {
  if (value === null) return null;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : null;
}

/** The account's balance key is missing (docs/architecture.md, "When Redis fails"): the entry was not applied. */
export class ColdAccountError extends Error {
  constructor(readonly accountId: string) {
    super('the spendable balance is not rebuilt yet');
    this.name = 'ColdAccountError';
  }
}

/** The spendable balance and its applied-entry markers in Redis. */
export class SpendableBalanceAdapter implements SpendableReader {
  constructor(private readonly redis: RedisClient) {}

  /**
   * True when this call moved the balance, false when the entry had been applied before.
   * `mayCreate` false: throws ColdAccountError (nothing written) when the balance key is missing.
   */
  async applyOnce(accountId: string, entryId: string, amountMicros: Micros, mayCreate = true): Promise<boolean> {
    if (!Number.isSafeInteger(amountMicros)) throw new RangeError('amount must be a safe integer of micro-USD');
    const reply = (await this.redis.eval(
      APPLY_ONCE, 2, redisKeys.appliedEntry(accountId, entryId), redisKeys.accountBalance(accountId),
      String(amountMicros), String(APPLIED_MARKER_TTL_SECONDS), mayCreate ? '1' : '0',
    )) as [number, number];
    if (reply[0] === -1) throw new ColdAccountError(accountId);
    return reply[0] === 1;
  }

  /** Asks the ledger worker to rebuild a cold account (src/services/hydration). */
  async requestHydration(accountId: string): Promise<void> {
    await this.redis.sadd(recoveryKeys.hydrationWanted, accountId);
  }

  async read(accountId: string): Promise<SpendableView> {
    const [balance, reserved] = await this.redis.mget(redisKeys.accountBalance(accountId), redisKeys.accountReserved(accountId));
    return { balanceMicros: integerOrNull(balance ?? null), reservedMicros: Math.max(0, integerOrNull(reserved ?? null) ?? 0) };
  }
}
