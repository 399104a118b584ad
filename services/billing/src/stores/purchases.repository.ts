import { newId } from '@svc/ids';
import type { Micros } from '@svc/money';
import { paidPurchaseFromRow } from '../db/paid-purchase-row';
import type { PaidPurchase, PaidPurchaseRow } from '../db/paid-purchase-row';
import { ENTRY_COLUMNS, entryFromRow } from '../db/ledger-entry-row';
import type { EntryRow, LedgerEntryRecord } from '../db/ledger-entry-row';
import type { Tx } from '../db/transactions';
import type { PrismaClient } from '../generated/prisma/client';

export interface PaidSession {
  stripeSessionId: string;
  accountId: string;
  amountCents: number;
  creditMicros: Micros;
  paymentIntentId: string | null;
  expiresAt: Date | null;
}

export type { PaidPurchase };

/**
 * The Stripe side of purchases: the events handled, the exactly-once gate of every credit
 * (purchase_grants, keyed by a Checkout session or a top-up's PaymentIntent) and the paid
 * Checkout sessions. The credit's ledger entry is the ledger-append port's; a service writes
 * both in one transaction.
 */
export class PurchasesRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async isEventProcessed(eventId: string): Promise<boolean> {
    const rows = await this.prisma.$queryRaw<{ id: string }[]>`SELECT id FROM stripe_events WHERE id = ${eventId}`;
    return rows.length > 0;
  }

  async recordEvent(eventId: string, type: string, outcome: string): Promise<void> {
    await this.prisma.$executeRaw`
      INSERT INTO stripe_events (id, type, outcome) VALUES (${eventId}, ${type}, ${outcome}) ON CONFLICT (id) DO NOTHING`;
  }

  /**
   * Takes the gate of one credit: inserted FIRST in the credit's transaction (its primary key is
   * the gate; a concurrent second insert waits, then conflicts). False when it was taken.
   */
  async claimGrant(tx: Tx, grant: { gateId: string; accountId: string; ledgerEntryId: string; amountMicros: Micros; eventId: string }): Promise<boolean> {
    const gate = await tx.$queryRaw<{ stripe_session_id: string }[]>`
      INSERT INTO purchase_grants (stripe_session_id, account_id, ledger_entry_id, amount_micros, event_id)
      VALUES (${grant.gateId}, ${grant.accountId}, ${grant.ledgerEntryId}, ${BigInt(grant.amountMicros)}, ${grant.eventId})
      ON CONFLICT (stripe_session_id) DO NOTHING
      RETURNING stripe_session_id`;
    return gate.length > 0;
  }

  /** The ledger entry a taken gate credited. */
  async grantedEntry(tx: Tx, gateId: string): Promise<LedgerEntryRecord> {
    const existing = await tx.$queryRaw<EntryRow[]>`
      SELECT ${ENTRY_COLUMNS} FROM ledger_entries WHERE id = (SELECT ledger_entry_id FROM purchase_grants WHERE stripe_session_id = ${gateId})`;
    const first = existing[0];
    if (first === undefined) throw new Error('purchase grant without its ledger entry');
    return entryFromRow(first);
  }

  /** The session paid, in its credit's transaction (a row written at checkout is updated; one missing is made). */
  async markSessionPaid(tx: Tx, session: PaidSession): Promise<void> {
    await tx.$executeRaw`
      INSERT INTO checkout_sessions (id, account_id, stripe_session_id, status, amount_cents, credit_micros, payment_intent_id,
        expires_at, paid_at, closed_at)
      VALUES (${newId('checkout')}, ${session.accountId}, ${session.stripeSessionId}, 'paid', ${session.amountCents},
        ${BigInt(session.creditMicros)}, ${session.paymentIntentId}, ${session.expiresAt}, clock_timestamp(), clock_timestamp())
      ON CONFLICT (stripe_session_id) DO UPDATE SET
        status = 'paid', payment_intent_id = EXCLUDED.payment_intent_id, paid_at = EXCLUDED.paid_at,
        closed_at = EXCLUDED.closed_at, updated_at = clock_timestamp()`;
  }

  /** A pending session closes without credit (failed or expired); a paid one never changes. */
  async closeSession(stripeSessionId: string, status: 'failed' | 'expired'): Promise<boolean> {
    const changed = await this.prisma.$executeRaw`
      UPDATE checkout_sessions SET status = ${status}, closed_at = clock_timestamp(), updated_at = clock_timestamp()
      WHERE stripe_session_id = ${stripeSessionId} AND status = 'pending'`;
    return changed > 0;
  }

  /** The paid session of a PaymentIntent, locked (two refunds of it are computed one after the other); null when none. */
  async lockPaidSession(tx: Tx, paymentIntentId: string): Promise<PaidPurchase | null> {
    const rows = await tx.$queryRaw<PaidPurchaseRow[]>`
      SELECT stripe_session_id AS gate_id, account_id, credit_micros, refunded_micros, disputed_micros FROM checkout_sessions
      WHERE payment_intent_id = ${paymentIntentId} AND status = 'paid' FOR UPDATE`;
    const row = rows[0];
    return row === undefined ? null : paidPurchaseFromRow(row);
  }

  /** What a refund or a dispute took back of a paid session, in its debit's transaction. */
  async recordSessionTakenBack(tx: Tx, stripeSessionId: string, kind: 'stripe_refund' | 'dispute', amountMicros: Micros): Promise<void> {
    if (kind === 'stripe_refund') {
      await tx.$executeRaw`UPDATE checkout_sessions SET refunded_micros = refunded_micros + ${BigInt(amountMicros)}, updated_at = clock_timestamp()
        WHERE stripe_session_id = ${stripeSessionId}`;
    } else {
      await tx.$executeRaw`UPDATE checkout_sessions SET disputed_micros = disputed_micros + ${BigInt(amountMicros)}, updated_at = clock_timestamp()
        WHERE stripe_session_id = ${stripeSessionId}`;
    }
  }
}
