import type { Logger } from 'pino';
import type { LedgerEntryRecord, LedgerRepository } from '../ledger/ledger.repository';
import type { SpendableBalanceAdapter } from './spendable-balance.adapter';

/**
 * The outbox from the durable ledger to the spendable balance in Redis. A grant (later a
 * purchase, a Stripe refund, a dispute) is committed with applied_to_spendable_at NULL;
 * applyEntry runs right after the commit, and applyPending (the ledger worker's sweep)
 * re-applies whatever a crash or a Redis outage left behind. The Lua script's NX marker
 * makes a repeat harmless; the column keeps the marker's lifetime from mattering.
 */
export class SpendableOutboxService {
  constructor(
    private readonly repository: LedgerRepository,
    private readonly spendable: SpendableBalanceAdapter,
    private readonly logger: Logger,
  ) {}

  /** Applies one entry and marks it; true when this call moved the spendable balance. */
  async applyEntry(entry: LedgerEntryRecord): Promise<boolean> {
    if (entry.appliedToSpendableAt !== null) return false;
    const moved = await this.spendable.applyOnce(entry.accountId, entry.id, entry.amountMicros);
    await this.repository.markApplied(entry.id);
    return moved;
  }

  /** Right after a commit: a Redis failure is logged and left to applyPending. */
  async applyAfterCommit(entry: LedgerEntryRecord): Promise<void> {
    try {
      await this.applyEntry(entry);
    } catch (error) {
      this.logger.warn({ err: error, ledger_entry_id: entry.id, account_id: entry.accountId }, 'spendable balance not updated yet; the outbox will retry');
    }
  }

  /** Applies every entry still unmarked, in batches; returns how many moved the balance now. */
  async applyPending(batchSize = 500): Promise<number> {
    let moved = 0;
    for (;;) {
      const entries = await this.repository.listUnappliedEntries(batchSize);
      for (const entry of entries) {
        if (await this.applyEntry(entry)) moved += 1;
      }
      if (entries.length < batchSize) return moved;
    }
  }
}
