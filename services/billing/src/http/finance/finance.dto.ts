import { csvDecimal, csvRecord } from '@svc/csv';
import { microsToUsd } from '@svc/money';
import type { Micros } from '@svc/money';
import { IdField } from '@svc/http-edge';
import { DAY_MS, formatDay } from '../../common/usage-query';
import type { DayRange } from '../../common/usage-query';
import { DayRangeQueryDto, toRange } from '../usage/usage.dto';
import type { LedgerExportRow } from '../../stores/finance.repository';
import type { FinanceReport } from '../../services/finance/finance.service';


export interface ExportQuery {
  range: DayRange;
  start: Date;
  end: Date;
  accountId: string | null;
}

/** GET /operator/ledger/export?from&to&account_id (dates YYYY-MM-DD, to inclusive, default the last 30 days). */
export class ExportQueryDto extends DayRangeQueryDto {
  @IdField('account', { presence: 'optional', message: 'account_id must be an account id (acct_...)' })
  account_id?: string;
}

export function toExportQuery(query: ExportQueryDto, now: Date = new Date()): ExportQuery {
  const range = toRange(query, now);
  const accountId = query.account_id ?? null;
  return { range, start: new Date(range.from), end: new Date(range.to + DAY_MS), accountId };
}

export function exportFileName(query: ExportQuery): string {
  return `ledger-${formatDay(query.range.from)}-${formatDay(query.range.to)}${query.accountId === null ? '' : `-${query.accountId}`}.csv`;
}

/** Integer micro-USD as a USD decimal with exactly 6 decimals, by integer arithmetic ("-12.500000"). */
export function usd6(micros: Micros): string {
  if (!Number.isSafeInteger(micros)) throw new RangeError('micro-USD must be a safe integer');
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(micros);
  return `${sign}${Math.floor(abs / 1_000_000)}.${String(abs % 1_000_000).padStart(6, '0')}`;
}

export const CSV_HEADER = csvRecord(['id', 'created_at', 'account_id', 'kind', 'amount_usd', 'balance_after_usd', 'reason', 'idempotency_key', 'request_id']);

/** One ledger entry as a CSV record (@svc/csv): amounts are numbers (exact 6-decimal USD), every other field text. */
export function csvLine(row: LedgerExportRow): string {
  return csvRecord([
    row.id, row.createdAt.toISOString(), row.accountId, row.kind,
    csvDecimal(usd6(row.amountMicros)), csvDecimal(usd6(row.balanceAfterMicros)), row.reason, row.idempotencyKey, row.requestId,
  ]);
}

const usd = (micros: Micros): number => microsToUsd(micros);

export function financeReportView(report: FinanceReport, requestId: string): Record<string, unknown> {
  const { stripe, usage, ledger, spendable, research } = report;
  return {
    balanced: report.balanced,
    stripe: {
      paid_sessions: { count: stripe.paidSessions.count, amount_usd: usd(stripe.paidSessions.micros) },
      auto_topups: { count: stripe.autoTopups.count, amount_usd: usd(stripe.autoTopups.micros) },
      purchase_entries: { count: stripe.purchaseEntries.count, amount_usd: usd(stripe.purchaseEntries.micros) },
      purchase_drift_usd: usd(stripe.purchaseDriftMicros),
      unmatched_sessions: stripe.unmatchedSessions,
      unmatched_entries: stripe.unmatchedEntries,
      taken_back: {
        sessions_usd: usd(stripe.takenBackSessionsMicros),
        entries_usd: usd(stripe.takenBackEntriesMicros),
        drift_usd: usd(stripe.takenBackDriftMicros),
      },
    },
    usage: {
      settlements: { count: usage.settlements.count, charged_usd: usd(usage.settlements.micros) },
      usage_events_charged_usd: usd(usage.usageEventsChargedMicros),
      search_charge_entries: { count: usage.searchChargeEntries.count, amount_usd: usd(usage.searchChargeEntries.micros) },
      research_charge_entries: { count: usage.researchChargeEntries.count, amount_usd: usd(usage.researchChargeEntries.micros) },
      byok_fee_entries: { count: usage.byokFeeEntries.count, amount_usd: usd(usage.byokFeeEntries.micros) },
      usage_events_byok_usd: usd(usage.usageEventsByokMicros),
      events_drift_usd: usd(usage.eventsDriftMicros),
      entries_drift_usd: usd(usage.entriesDriftMicros),
      byok_drift_usd: usd(usage.byokDriftMicros),
      mismatched_requests: usage.mismatchedRequests,
      key_spend_usd: usd(usage.keySpendMicros),
      key_spend_drift_usd: usd(usage.keySpendDriftMicros),
    },
    ledger: {
      accounts: ledger.accounts,
      accounts_off_sum: ledger.accountsOffSum.map((a) => ({ account_id: a.accountId, balance_usd: usd(a.balanceMicros), entries_usd: usd(a.entriesMicros) })),
    },
    spendable: {
      accounts: spendable.accounts,
      drifting: spendable.drifting.map((a) => ({ account_id: a.accountId, drift_usd: usd(a.driftMicros) })),
    },
    research: {
      settled_runs: { count: research.settledRuns.count, charged_usd: usd(research.settledRuns.micros) },
      settled_entries_usd: usd(research.settledEntriesMicros),
      entries_drift_usd: usd(research.entriesDriftMicros),
      open_runs: { count: research.openRuns.count, held_usd: usd(research.openRuns.micros) },
      open_hold_entries_usd: usd(research.openHoldEntriesMicros),
      open_hold_drift_usd: usd(research.openHoldDriftMicros),
      provider_cost_usd: usd(research.providerCostMicros),
      loss_usd: usd(research.lossMicros),
      loss_runs: research.lossRuns.map((r) => ({ run_id: r.runId, provider_cost_usd: usd(r.providerCostMicros), charged_usd: usd(r.chargedMicros), loss_usd: usd(r.lossMicros) })),
      mismatched_runs: research.mismatchedRuns,
      abandoned_runs: research.abandonedRuns,
    },
    request_id: requestId,
  };
}
