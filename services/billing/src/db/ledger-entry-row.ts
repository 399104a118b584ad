import type { Micros } from '@svc/money';
import { Prisma } from '../generated/prisma/client';
import type { LedgerEntryKind } from '../generated/prisma/enums';
import { toMicros } from './account-lock';

export type { LedgerEntryKind };

/** A ledger entry with money as integer micro-USD numbers (converted from BIGINT here). */
export interface LedgerEntryRecord {
  id: string;
  accountId: string;
  kind: LedgerEntryKind;
  amountMicros: Micros;
  balanceAfterMicros: Micros;
  reason: string | null;
  idempotencyKey: string | null;
  requestId: string | null;
  createdAt: Date;
  /** When the amount reached the spendable balance in Redis; null while still to apply. */
  appliedToSpendableAt: Date | null;
}

/** A ledger_entries row as raw SQL returns it (read by every store that reads entries). */
export interface EntryRow {
  id: string;
  account_id: string;
  kind: LedgerEntryKind;
  amount_micros: bigint;
  balance_after_micros: bigint;
  reason: string | null;
  idempotency_key: string | null;
  request_id: string | null;
  created_at: Date;
  applied_to_spendable_at: Date | null;
}

/** The columns of an EntryRow, in a SELECT or a RETURNING. */
export const ENTRY_COLUMNS = Prisma.sql`id, account_id, kind, amount_micros, balance_after_micros, reason, idempotency_key, request_id, created_at, applied_to_spendable_at`;

export function entryFromRow(row: EntryRow): LedgerEntryRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    kind: row.kind,
    amountMicros: toMicros(row.amount_micros),
    balanceAfterMicros: toMicros(row.balance_after_micros),
    reason: row.reason,
    idempotencyKey: row.idempotency_key,
    requestId: row.request_id,
    createdAt: row.created_at,
    appliedToSpendableAt: row.applied_to_spendable_at,
  };
}
