import type { Logger } from 'pino';
import type { LedgerEntryRecord, LedgerRepository } from '../../stores/ledger.repository';
import type { SpendableOutbox } from '../ledger/spendable.port';
import { ColdAccountError } from './spendable-balance.adapter';
import type { SpendableBalanceAdapter } from './spendable-balance.adapter';

/**
 * The outbox from the durable ledger to the spendable balance in Redis. A grant (later a
 * purchase, a Stripe refund, a dispute) is committed with applied_to_spendable_at NULL;
 * applyEntry runs right after the commit, and applyPending (the ledger worker's sweep)
 * re-applies whatever a crash or a Redis outage left behind. The Lua script's NX marker
 * makes a repeat harmless; the column keeps the marker's lifetime from mattering.
 */
export class SpendableOutboxService implements SpendableOutbox {
  constructor(
    private readonly repository: LedgerRepository,
    private readonly spendable: SpendableBalanceAdapter,
    private readonly logger: Logger,
  ) {}

  /**
   * Applies one entry and marks it; true when this call moved the spendable balance. On a
   * cold account (no balance key) the entry may create the balance only when it is all the
   * account ever had (durable balance = its amount, nothing spent); otherwise it stays
   * unapplied, the account is queued for hydration (which counts it) and ColdAccountError
   * is thrown.
   */
  async applyEntry(entry: LedgerEntryRecord): Promise<boolean> {
    if (entry.appliedToSpendableAt !== null) return false;
    const balance = await this.repository.findBalance(entry.accountId);
    const onlyMoney = balance !== null && balance.balanceMicros === entry.amountMicros && balance.totalSpentMicros === 0;
    let moved: boolean;
    try {
      moved = await this.spendable.applyOnce(entry.accountId, entry.id, entry.amountMicros, onlyMoney);
    } catch (error) {
      if (error instanceof ColdAccountError) await this.spendable.requestHydration(entry.accountId);
      throw error;
    }
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
      let cold = 0;
      for (const entry of entries) {
        try {
          if (await this.applyEntry(entry)) moved += 1;
        } catch (error) {
          if (!(error instanceof ColdAccountError)) throw error;
          cold += 1;
        }
      }
      // Cold entries stay unapplied (hydration counts them): stop rather than read them again.
      if (entries.length < batchSize || cold > 0) return moved;
    }
  }
}
