import type { Micros } from '@svc/money';
import type { Prisma, PrismaClient } from '../generated/prisma/client';

/** A BIGINT money column as integer micro-USD; a value past the safe integer range is refused. */
export function toMicros(value: bigint): Micros {
  const micros = Number(value);
  if (!Number.isSafeInteger(micros)) throw new RangeError('a BIGINT money value is outside the safe integer range');
  return micros;
}

/** What a caller sees while it holds an account's balance row. */
export interface BalanceLock {
  tx: Prisma.TransactionClient;
  durableMicros: Micros;
  /** Which of `requestIds` are already in settlements (read inside the same locked transaction). */
  settledAmong(requestIds: readonly string[]): Promise<Set<string>>;
}

/**
 * Runs `inside` in a transaction that holds the account's balance row (SELECT ... FOR UPDATE):
 * the per-account lock the ledger drain (writeSettlements), every ledger append, hydration and
 * reconciliation all take first (docs/finance.md). Null when the account has no balance row.
 */
export async function underBalanceLock<T>(prisma: PrismaClient, accountId: string, inside: (lock: BalanceLock) => Promise<T>): Promise<T | null> {
  return prisma.$transaction(
    async (tx) => {
      const locked = await tx.$queryRaw<{ balance_micros: bigint }[]>`
        SELECT balance_micros FROM account_balances WHERE account_id = ${accountId} FOR UPDATE`;
      const row = locked[0];
      if (row === undefined) return null;
      const settledAmong = async (requestIds: readonly string[]): Promise<Set<string>> => {
        const ids = [...new Set(requestIds.filter((id) => id !== ''))];
        if (ids.length === 0) return new Set<string>();
        const rows = await tx.$queryRaw<{ request_id: string }[]>`
          SELECT request_id FROM settlements WHERE account_id = ${accountId} AND request_id = ANY(${ids}::text[])`;
        return new Set(rows.map((r) => r.request_id));
      };
      return inside({ tx, durableMicros: toMicros(row.balance_micros), settledAmong });
    },
    { maxWait: 10_000, timeout: 30_000 },
  );
}
