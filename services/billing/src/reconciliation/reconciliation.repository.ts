import type { Micros } from '@svc/money';
import type { PrismaClient } from '../generated/prisma/client';

export interface UnappliedEntry {
  id: string;
  amountMicros: Micros;
}

/** What `inside` sees while the account's lock is held. */
export interface LockedView {
  durableMicros: Micros;
  unapplied: readonly UnappliedEntry[];
  /** Which of `requestIds` are already in settlements (read inside the same locked transaction). */
  settledAmong(requestIds: readonly string[]): Promise<Set<string>>;
}

function toMicros(value: bigint): Micros {
  const micros = Number(value);
  if (!Number.isSafeInteger(micros)) throw new RangeError('a BIGINT money value is outside the safe integer range');
  return micros;
}

/**
 * Reconciliation's reads of the durable side. The per-account lock is the balance row
 * itself (SELECT ... FOR UPDATE): the ledger drain (writeSettlements) and every ledger
 * append take that same row lock first, so while reconciliation holds it no settlement
 * batch and no grant of the account can commit.
 */
export class ReconciliationRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /**
   * Locks the account's balance row, reads the durable balance and the unapplied entries,
   * runs `inside` (the Redis read, and a correction if one is due) while the lock is held,
   * and commits. Null when the account has no balance row.
   */
  async underAccountLock<T>(accountId: string, inside: (view: LockedView) => Promise<T>): Promise<T | null> {
    return this.prisma.$transaction(
      async (tx) => {
        const locked = await tx.$queryRaw<{ balance_micros: bigint }[]>`
          SELECT balance_micros FROM account_balances WHERE account_id = ${accountId} FOR UPDATE`;
        const row = locked[0];
        if (row === undefined) return null;
        const entries = await tx.$queryRaw<{ id: string; amount_micros: bigint }[]>`
          SELECT id, amount_micros FROM ledger_entries
          WHERE account_id = ${accountId} AND applied_to_spendable_at IS NULL`;
        const settledAmong = async (requestIds: readonly string[]): Promise<Set<string>> => {
          const ids = [...new Set(requestIds.filter((id) => id !== ''))];
          if (ids.length === 0) return new Set();
          const rows = await tx.$queryRaw<{ request_id: string }[]>`
            SELECT request_id FROM settlements WHERE account_id = ${accountId} AND request_id = ANY(${ids}::text[])`;
          return new Set(rows.map((r) => r.request_id));
        };
        return inside({
          durableMicros: toMicros(row.balance_micros),
          unapplied: entries.map((e) => ({ id: e.id, amountMicros: toMicros(e.amount_micros) })),
          settledAmong,
        });
      },
      { maxWait: 10_000, timeout: 30_000 },
    );
  }

  /** One page of accounts in id order, after `afterId`. */
  async listAccounts(limit: number, afterId: string | null): Promise<{ accountIds: string[]; hasMore: boolean }> {
    const rows = await this.prisma.accountBalance.findMany({
      select: { accountId: true },
      orderBy: { accountId: 'asc' },
      take: limit + 1,
      ...(afterId === null ? {} : { where: { accountId: { gt: afterId } } }),
    });
    return { accountIds: rows.slice(0, limit).map((r) => r.accountId), hasMore: rows.length > limit };
  }
}
