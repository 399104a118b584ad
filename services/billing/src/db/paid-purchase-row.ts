import type { Micros } from '@svc/money';
import { toMicros } from './account-lock';

/** A paid purchase whose credit Stripe may take back: what it credited, and what was taken back already. */
export interface PaidPurchase {
  /** The purchase's gate (the Checkout session id; for a top-up its PaymentIntent). */
  gateId: string;
  accountId: string;
  creditMicros: Micros;
  refundedMicros: Micros;
  disputedMicros: Micros;
}

/** A paid purchase's row as its store selects it (`gate_id`, `credit_micros`: each table's own columns, aliased). */
export interface PaidPurchaseRow {
  gate_id: string;
  account_id: string;
  credit_micros: bigint;
  refunded_micros: bigint;
  disputed_micros: bigint;
}

export function paidPurchaseFromRow(row: PaidPurchaseRow): PaidPurchase {
  return {
    gateId: row.gate_id, accountId: row.account_id, creditMicros: toMicros(row.credit_micros),
    refundedMicros: toMicros(row.refunded_micros), disputedMicros: toMicros(row.disputed_micros),
  };
}
