import type { Micros } from '@svc/money';
import type { FinanceRepository, LedgerExportRow, LedgerFigures, ResearchFigures, StripeFigures, UsageFigures } from '../../stores/finance.repository';

export interface SpendableFigures {
  accounts: number;
  /** Accounts whose (durable - unapplied) differs from Redis's spendable + reserved + pending. */
  drifting: { accountId: string; driftMicros: Micros }[];
}

/** The Stripe and usage side of reconciliation (all time), plus the spendable drift per account. */
export interface FinanceReport {
  stripe: StripeFigures & { purchaseDriftMicros: Micros; takenBackDriftMicros: Micros };
  usage: UsageFigures & { eventsDriftMicros: Micros; entriesDriftMicros: Micros; byokDriftMicros: Micros; keySpendDriftMicros: Micros };
  ledger: LedgerFigures;
  spendable: SpendableFigures;
  /** Research runs: entries vs charges, the holds of open runs, what providers charged, losses (docs/decisions/0062). */
  research: ResearchFigures & { entriesDriftMicros: Micros; openHoldDriftMicros: Micros };
  /** True when every drift above is zero and nothing is listed as mismatched. */
  balanced: boolean;
}

const EXPORT_PAGE = 1_000;

/** A read-only pass: nothing released, nothing corrected. */
const READ_ONLY = { releaseStale: false, correctDrift: false } as const;
/** The report reads drift only: no reservation hash is looked up. */
const NO_RESERVATIONS: readonly string[] = [];

/**
 * What finance reads from reconciliation: each account's drift, a page at a time, read-only
 * (ReconciliationService fits it). Declared here so finance never imports reconciliation,
 * whose operator route includes the finance report.
 */
export interface SpendableDriftSource {
  reconcilePage(
    limit: number,
    afterId: string | null,
    options: typeof READ_ONLY,
    reservations?: Iterable<string>,
  ): Promise<{ reports: readonly { accountId: string; driftMicros: Micros }[]; nextAfterId: string | null }>;
}

/** Finance's view: Stripe vs the ledger, searches vs the ledger, durable vs spendable; the ledger as CSV. */
export class FinanceService {
  constructor(
    private readonly repository: FinanceRepository,
    private readonly reconciliation: SpendableDriftSource,
  ) {}

  async report(): Promise<FinanceReport> {
    const [stripe, usage, ledger, research] = await Promise.all([
      this.repository.stripeFigures(), this.repository.usageFigures(), this.repository.ledgerFigures(), this.repository.researchFigures(),
    ]);
    const spendable = await this.spendable();
    const purchaseDriftMicros = stripe.paidSessions.micros + stripe.autoTopups.micros - stripe.purchaseEntries.micros;
    const takenBackDriftMicros = stripe.takenBackSessionsMicros - stripe.takenBackEntriesMicros;
    const eventsDriftMicros = usage.settlements.micros - usage.usageEventsChargedMicros;
    const entriesDriftMicros = usage.settlements.micros - usage.searchChargeEntries.micros - usage.byokFeeEntries.micros - usage.researchChargeEntries.micros;
    const researchEntriesDriftMicros = research.settledRuns.micros - research.settledEntriesMicros;
    const openHoldDriftMicros = research.openRuns.micros - research.openHoldEntriesMicros;
    const byokDriftMicros = usage.usageEventsByokMicros - usage.byokFeeEntries.micros;
    const keySpendDriftMicros = usage.settlements.micros - usage.keySpendMicros;
    const balanced =
      purchaseDriftMicros === 0 && takenBackDriftMicros === 0 && eventsDriftMicros === 0 && entriesDriftMicros === 0 && byokDriftMicros === 0 && keySpendDriftMicros === 0 &&
      stripe.paidSessions.count + stripe.autoTopups.count === stripe.purchaseEntries.count && stripe.unmatchedSessions.length === 0 && stripe.unmatchedEntries.length === 0 &&
      usage.mismatchedRequests.length === 0 && ledger.accountsOffSum.length === 0 && spendable.drifting.length === 0 &&
      researchEntriesDriftMicros === 0 && openHoldDriftMicros === 0 && research.mismatchedRuns.length === 0;
    return {
      stripe: { ...stripe, purchaseDriftMicros, takenBackDriftMicros },
      usage: { ...usage, eventsDriftMicros, entriesDriftMicros, byokDriftMicros, keySpendDriftMicros },
      ledger,
      spendable,
      research: { ...research, entriesDriftMicros: researchEntriesDriftMicros, openHoldDriftMicros },
      balanced,
    };
  }

  /**
   * Every account through the reconciliation service, read-only. Drift is all it reads, so no
   * reservation is looked up (none given): a report walks no keyspace, whatever the result
   * cache holds (decision 0036).
   */
  private async spendable(): Promise<SpendableFigures> {
    let accounts = 0;
    const drifting: SpendableFigures['drifting'] = [];
    let after: string | null = null;
    do {
      const page = await this.reconciliation.reconcilePage(100, after, READ_ONLY, NO_RESERVATIONS);
      accounts += page.reports.length;
      for (const report of page.reports) if (report.driftMicros !== 0) drifting.push({ accountId: report.accountId, driftMicros: report.driftMicros });
      after = page.nextAfterId;
    } while (after !== null);
    return { accounts, drifting };
  }

  /** Every ledger entry of the period (optionally one account), oldest first, page by page. */
  async *exportEntries(filter: { start: Date; end: Date; accountId: string | null }): AsyncGenerator<LedgerExportRow> {
    let after: { createdAtText: string; id: string } | null = null;
    for (;;) {
      const rows = await this.repository.exportPage(filter, after, EXPORT_PAGE);
      for (const row of rows) yield row;
      const last = rows[rows.length - 1];
      if (rows.length < EXPORT_PAGE || last === undefined) return;
      after = { createdAtText: last.createdAtText, id: last.id };
    }
  }
}
