import type { Micros } from '@svc/money';
import type { PrismaClient } from '../generated/prisma/client';
import { toMicros, underBalanceLock } from '../db/account-lock';

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
    return underBalanceLock(this.prisma, accountId, async ({ tx, durableMicros, settledAmong }) => {
      const entries = await tx.$queryRaw<{ id: string; amount_micros: bigint }[]>`
        SELECT id, amount_micros FROM ledger_entries
        WHERE account_id = ${accountId} AND applied_to_spendable_at IS NULL`;
      return inside({
        durableMicros,
        unapplied: entries.map((e) => ({ id: e.id, amountMicros: toMicros(e.amount_micros) })),
        settledAmong,
      });
    });
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
