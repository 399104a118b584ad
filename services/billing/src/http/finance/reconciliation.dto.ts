import { AppError } from '@svc/errors';
import { isId } from '@svc/ids';
import { microsToUsd } from '@svc/money';
import { EnumField, IdField, PageQueryDto, pageLimit } from '@svc/http-edge';
import type { AccountReport, Repair } from '../../services/reconciliation/reconciliation.service';

export interface ReconciliationQuery {
  /** One account, or null for a page of all accounts. */
  accountId: string | null;
  limit: number;
  afterId: string | null;
  /** `include=finance`: add the Stripe, usage and ledger comparison of docs/finance.md. */
  includeFinance: boolean;
}

const CURSOR_PREFIX = 'r1.';

export function encodeAccountCursor(accountId: string): string {
  return Buffer.from(CURSOR_PREFIX + accountId, 'utf8').toString('base64url');
}

/** `account_id` (optional), `limit` (1..100, default 20), `cursor` (from a previous page), `include=finance`. */
export class ReconciliationQueryDto extends PageQueryDto {
  @IdField('account', { presence: 'optional', message: 'account_id must be an account id' })
  account_id?: string;

  @EnumField(['finance'], { presence: 'optional', message: 'include must be finance' })
  include?: string;
}

export function toReconciliationQuery(params: ReconciliationQueryDto): ReconciliationQuery {
  const accountId = params.account_id ?? null;
  const limit = pageLimit(params);
  let afterId: string | null = null;
  if (params.cursor !== undefined) {
    const text = Buffer.from(params.cursor, 'base64url').toString('utf8');
    const id = text.startsWith(CURSOR_PREFIX) ? text.slice(CURSOR_PREFIX.length) : '';
    if (!isId('account', id)) throw new AppError('invalid_request', 'cursor is not valid for this list');
    afterId = id;
  }
  if (accountId !== null && (params.limit !== undefined || afterId !== null)) {
    throw new AppError('invalid_request', 'account_id cannot be combined with limit or cursor');
  }
  return { accountId, limit, afterId, includeFinance: params.include === 'finance' };
}

function repairView(repair: Repair): Record<string, string | number> {
  switch (repair.kind) {
    case 'stale_reservation_released':
      return { kind: repair.kind, request_id: repair.requestId, amount_usd: microsToUsd(repair.amountMicros) };
    case 'drift_corrected':
      return { kind: repair.kind, amount_usd: microsToUsd(repair.amountMicros), spendable_after_usd: microsToUsd(repair.balanceAfterMicros) };
    default: {
      const unreachable: never = repair;
      return unreachable;
    }
  }
}

/** One account of the report (USD numbers, exact to the micro-USD). */
export function accountReportView(report: AccountReport): Record<string, unknown> {
  return {
    account_id: report.accountId,
    durable_usd: microsToUsd(report.durableMicros),
    spendable_usd: report.spendableMicros === null ? null : microsToUsd(report.spendableMicros),
    reserved_usd: microsToUsd(report.reservedMicros),
    pending_usd: microsToUsd(report.pendingMicros),
    pending_records: report.pendingRecords,
    unapplied_usd: microsToUsd(report.unappliedMicros),
    drift_usd: microsToUsd(report.driftMicros),
    drift_note: report.driftNote,
    stale_reservations: report.staleReservations.map((r) => ({ request_id: r.requestId, held_usd: microsToUsd(r.heldMicros), overdue_ms: r.overdueMs })),
    repairs: report.repairs.map(repairView),
  };
}
