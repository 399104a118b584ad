import { redisKeys } from '@svc/contracts';
import type { Micros } from '@svc/money';
import type { Redis } from 'ioredis';

/** How long an applied-entry marker lives: far longer than any entry stays unmarked in Postgres. */
export const APPLIED_MARKER_TTL_SECONDS = 30 * 24 * 3600;

/**
 * Adds an entry's amount to the spendable balance exactly once: the marker is set NX
 * and the balance moves only when the marker was new. Everything is validated before the
 * first write (a Lua error does not roll back). Both keys carry the account's hash tag.
 * Returns {1 applied now | 0 applied before, balance after}.
 */
const APPLY_ONCE = `
local amount = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
if amount == nil or amount ~= math.floor(amount) or ttl == nil or ttl <= 0 then
  return redis.error_reply('apply: bad arguments')
end
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', ttl) then
  return {1, redis.call('INCRBY', KEYS[2], ARGV[1])}
end
return {0, tonumber(redis.call('GET', KEYS[2]) or '0')}`;

export interface SpendableView {
  /** Spendable balance in Redis, null when the key does not exist. */
  balanceMicros: Micros | null;
  /** Held by open reservations, 0 when the gateway keeps no such key. */
  reservedMicros: Micros;
}

function integerOrNull(value: string | null): number | null {
  if (value === null) return null;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : null;
}

/** The spendable balance and its applied-entry markers in Redis. */
export class SpendableBalanceAdapter {
  constructor(private readonly redis: Redis) {}

  /** True when this call moved the balance, false when the entry had been applied before. */
  async applyOnce(accountId: string, entryId: string, amountMicros: Micros): Promise<boolean> {
    if (!Number.isSafeInteger(amountMicros)) throw new RangeError('amount must be a safe integer of micro-USD');
    const reply = (await this.redis.eval(
      APPLY_ONCE, 2, redisKeys.appliedEntry(accountId, entryId), redisKeys.accountBalance(accountId),
      String(amountMicros), String(APPLIED_MARKER_TTL_SECONDS),
    )) as [number, number];
    return reply[0] === 1;
  }

  async read(accountId: string): Promise<SpendableView> {
    const [balance, reserved] = await this.redis.mget(redisKeys.accountBalance(accountId), redisKeys.accountReserved(accountId));
    return { balanceMicros: integerOrNull(balance ?? null), reservedMicros: Math.max(0, integerOrNull(reserved ?? null) ?? 0) };
  }
}
