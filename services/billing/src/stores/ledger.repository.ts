import type { Micros } from '@svc/money';
import { toMicros } from '../db/account-lock';
import { ENTRY_COLUMNS, entryFromRow } from '../db/ledger-entry-row';
import type { EntryRow, LedgerEntryRecord } from '../db/ledger-entry-row';
import type { PrismaClient } from '../generated/prisma/client';
import type { Tx } from '../db/transactions';

export type { LedgerEntryRecord };

export interface BalanceRecord {
  accountId: string;
  balanceMicros: Micros;
  totalPurchasedMicros: Micros;
  totalGrantedMicros: Micros;
  totalSpentMicros: Micros;
}

export interface LedgerPage {
  entries: LedgerEntryRecord[];
  hasMore: boolean;
}

/**
 * Balances and the ledger as they are read, and the outbox's marker. Entries are written by
 * the ledger-append port only (ledger-append.repository.ts).
 */
export class LedgerRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async findBalance(accountId: string): Promise<BalanceRecord | null> {
    const row = await this.prisma.accountBalance.findUnique({ where: { accountId } });
    if (row === null) return null;
    return {
      accountId: row.accountId,
      balanceMicros: toMicros(row.balanceMicros),
      totalPurchasedMicros: toMicros(row.totalPurchasedMicros),
      totalGrantedMicros: toMicros(row.totalGrantedMicros),
      totalSpentMicros: toMicros(row.totalSpentMicros),
    };
  }

  /** The durable balance as `tx` sees it (0 without a balance row), without a lock. */
  async balanceIn(tx: Tx, accountId: string): Promise<Micros> {
    const rows = await tx.$queryRaw<{ balance_micros: bigint }[]>`SELECT balance_micros FROM account_balances WHERE account_id = ${accountId}`;
    return toMicros(rows[0]?.balance_micros ?? 0n);
  }

  /** Creates the account's zero balance row unless it exists. */
  async ensureBalance(accountId: string): Promise<void> {
    await this.prisma.accountBalance.createMany({ data: [{ accountId }], skipDuplicates: true });
  }

  /** True when `entryId` is an entry of this account (a cursor must point at one). */
  async hasEntry(accountId: string, entryId: string): Promise<boolean> {
    const found = await this.prisma.ledgerEntry.findFirst({ where: { id: entryId, accountId }, select: { id: true } });
    return found !== null;
  }

  /** Newest first; `afterId` is the last entry of the previous page. */
  async listEntries(accountId: string, limit: number, afterId: string | null): Promise<LedgerPage> {
    const rows = await this.prisma.ledgerEntry.findMany({
      where: { accountId },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit + 1,
      ...(afterId === null ? {} : { cursor: { id: afterId }, skip: 1 }),
    });
    const entries = rows.slice(0, limit).map((row) =>
      entryFromRow({
        id: row.id,
        account_id: row.accountId,
        kind: row.kind,
        amount_micros: row.amountMicros,
        balance_after_micros: row.balanceAfterMicros,
        reason: row.reason,
        idempotency_key: row.idempotencyKey,
        request_id: row.requestId,
        created_at: row.createdAt,
        applied_to_spendable_at: row.appliedToSpendableAt,
      }),
    );
    return { entries, hasMore: rows.length > limit };
  }

  /** Entries whose amount has not reached the spendable balance yet, oldest first. */
  async listUnappliedEntries(limit: number): Promise<LedgerEntryRecord[]> {
    const rows = await this.prisma.$queryRaw<EntryRow[]>`
      SELECT ${ENTRY_COLUMNS} FROM ledger_entries
      WHERE applied_to_spendable_at IS NULL
      ORDER BY created_at, id
      LIMIT ${limit}`;
    return rows.map(entryFromRow);
  }

  /** Records that the entry's amount reached the spendable balance. */
  async markApplied(entryId: string): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE ledger_entries SET applied_to_spendable_at = clock_timestamp()
      WHERE id = ${entryId} AND applied_to_spendable_at IS NULL`;
  }
}
