import type { Logger } from 'pino';
import type { LedgerEntryRecord, LedgerRepository } from '../../stores/ledger.repository';
import type { SpendableOutbox } from '../ledger/spendable.port';
import { ResearchColdAccountError } from './research-spendable.adapter';
import type { ResearchSpendableAdapter } from './research-spendable.adapter';
import { ColdAccountError } from './spendable-balance.adapter';
import type { SpendableBalanceAdapter } from './spendable-balance.adapter';

/** What the outbox reads of a settled research run to apply its release (the run id is the entry's key). */
export interface ResearchReleaseFacts {
  releaseFacts(runId: string): Promise<{ keyId: string; heldMicros: number; costMicros: number; settledAt: Date } | null>;
}

/** Research runs' entries: they move `reserved`, the key's hold and its counters besides the balance (docs/decisions/0062). */
export interface ResearchApplication {
  adapter: ResearchSpendableAdapter;
  runs: ResearchReleaseFacts;
}

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
    private readonly research?: ResearchApplication,
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
    if (entry.kind === 'research_hold' || entry.kind === 'research_release') return this.applyResearch(entry);
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

  /**
   * A research run's hold or release: applied once under its marker by the research scripts,
   * then its column marked. On a cold account nothing is written, the account is queued for
   * hydration (which counts the entry) and ColdAccountError is thrown, as for a grant.
   */
  private async applyResearch(entry: LedgerEntryRecord): Promise<boolean> {
    const research = this.research;
    const runId = entry.idempotencyKey;
    if (research === undefined) throw new Error('a research entry reached an outbox without research runs');
    if (runId === null) throw new Error(`research entry ${entry.id} has no run id`);
    let moved: boolean;
    try {
      if (entry.kind === 'research_hold') {
        moved = await research.adapter.applyHold(entry.accountId, entry.id, runId, -entry.amountMicros);
      } else {
        const facts = await research.runs.releaseFacts(runId);
        if (facts === null) throw new Error(`research release ${entry.id} names run ${runId}, which is not settled`);
        moved = await research.adapter.applyRelease({
          accountId: entry.accountId, entryId: entry.id, keyId: facts.keyId, releaseMicros: entry.amountMicros, heldMicros: facts.heldMicros,
          costMicros: facts.costMicros, settledAtMs: facts.settledAt.getTime(),
        });
      }
    } catch (error) {
      if (error instanceof ResearchColdAccountError) {
        await this.spendable.requestHydration(entry.accountId);
        throw new ColdAccountError(entry.accountId);
      }
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
