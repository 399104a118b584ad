import { newId } from '@svc/ids';
import type { Micros } from '@svc/money';
import type { Prisma } from '../generated/prisma/client';
import type { PrismaClient } from '../generated/prisma/client';
import { microsToUsd } from '@svc/money';
import { emitEvent } from './event-emitter';
import { ENTRY_COLUMNS, entryFromRow, writeEntryLocked } from './ledger.repository';
import { toMicros } from '../db/account-lock';
import type { EntryRow, LedgerEntryRecord } from './ledger.repository';

export interface PaidSession {
  stripeSessionId: string;
  accountId: string;
  amountCents: number;
  creditMicros: Micros;
  paymentIntentId: string | null;
  expiresAt: Date | null;
}

/** `granted`: this call wrote the purchase; `already_granted`: an earlier call did (its entry). */
export type GrantOutcome = { kind: 'granted'; entry: LedgerEntryRecord } | { kind: 'already_granted'; entry: LedgerEntryRecord };

export type DebitKind = 'stripe_refund' | 'dispute';

export interface DebitRequest {
  paymentIntentId: string;
  kind: DebitKind;
  /** stripe_refund: the charge's cumulative amount refunded; dispute: the disputed amount. */
  amountMicros: Micros;
  /** The dispute id for a dispute (one debit per dispute); unused for refunds. */
  disputeId: string | null;
  requestId: string;
}

export type DebitOutcome =
  | { kind: 'debited'; entry: LedgerEntryRecord }
  | { kind: 'nothing_to_debit' }
  | { kind: 'unknown_payment' };

type Tx = Prisma.TransactionClient;

/**
 * The money side of the Stripe webhook. Each write is one transaction that locks the
 * account's balance row (as every ledger writer does), so balance = sum of entries holds and
 * each entry's balance_after is exact. New entries carry applied_to_spendable_at NULL: the
 * spendable outbox applies them to Redis exactly once after the commit.
 */
export class PurchaseRepository {
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
   * Grants a paid session once: the purchase_grants row is inserted FIRST (its primary key,
   * the Stripe session id, is the gate; a concurrent second insert waits, then conflicts),
   * then the balance moves and the purchase entry is written, all in one transaction.
   */
  async grantPurchase(session: PaidSession, eventId: string, requestId: string): Promise<GrantOutcome> {
    return this.prisma.$transaction(
      async (tx) => {
        const entryId = newId('ledgerEntry');
        const gate = await tx.$queryRaw<{ stripe_session_id: string }[]>`
          INSERT INTO purchase_grants (stripe_session_id, account_id, ledger_entry_id, amount_micros, event_id)
          VALUES (${session.stripeSessionId}, ${session.accountId}, ${entryId}, ${BigInt(session.creditMicros)}, ${eventId})
          ON CONFLICT (stripe_session_id) DO NOTHING
          RETURNING stripe_session_id`;
        if (gate.length === 0) {
          const existing = await tx.$queryRaw<EntryRow[]>`
            SELECT ${ENTRY_COLUMNS} FROM ledger_entries
            WHERE id = (SELECT ledger_entry_id FROM purchase_grants WHERE stripe_session_id = ${session.stripeSessionId})`;
          const first = existing[0];
          if (first === undefined) throw new Error('purchase grant without its ledger entry');
          return { kind: 'already_granted', entry: entryFromRow(first) } as const;
        }
        await tx.$executeRaw`INSERT INTO account_balances (account_id) VALUES (${session.accountId}) ON CONFLICT DO NOTHING`;
        const entry = await appendStripeEntryLocked(tx, {
          id: entryId, accountId: session.accountId, kind: 'purchase', amountMicros: session.creditMicros,
          reason: 'Stripe Checkout purchase', idempotencyKey: session.stripeSessionId, requestId,
        });
        await tx.$executeRaw`
          INSERT INTO checkout_sessions (id, account_id, stripe_session_id, status, amount_cents, credit_micros, payment_intent_id,
            expires_at, paid_at, closed_at)
          VALUES (${newId('checkout')}, ${session.accountId}, ${session.stripeSessionId}, 'paid', ${session.amountCents},
            ${BigInt(session.creditMicros)}, ${session.paymentIntentId}, ${session.expiresAt}, clock_timestamp(), clock_timestamp())
          ON CONFLICT (stripe_session_id) DO UPDATE SET
            status = 'paid', payment_intent_id = EXCLUDED.payment_intent_id, paid_at = EXCLUDED.paid_at,
            closed_at = EXCLUDED.closed_at, updated_at = clock_timestamp()`;
        // The account's event, in the grant's transaction: sent exactly when the credit exists.
        await emitEvent(tx, {
          accountId: session.accountId,
          type: 'credits.purchased',
          data: { amount_usd: microsToUsd(session.creditMicros), balance_usd: microsToUsd(entry.balanceAfterMicros), ledger_entry_id: entry.id, source: 'checkout' },
        });
        return { kind: 'granted', entry } as const;
      },
      { maxWait: 10_000, timeout: 10_000 },
    );
  }

  /** A pending session closes without credit (failed or expired); a paid one never changes. */
  async closeSession(stripeSessionId: string, status: 'failed' | 'expired'): Promise<boolean> {
    const changed = await this.prisma.$executeRaw`
      UPDATE checkout_sessions SET status = ${status}, closed_at = clock_timestamp(), updated_at = clock_timestamp()
      WHERE stripe_session_id = ${stripeSessionId} AND status = 'pending'`;
    return changed > 0;
  }

  /**
   * Takes back purchased credit for a refund or a dispute of a paid session's payment, or of
   * a succeeded automatic top-up's PaymentIntent (the same rules on its auto_topups row). The
   * session row is locked, so two deliveries compute the debit one after the other. A
   * refund debits what the charge's cumulative refunded amount adds to what was debited
   * before; a dispute debits once per dispute id. Neither takes back more than the session
   * bought, less what was already taken back.
   */
  async debit(request: DebitRequest): Promise<DebitOutcome> {
    return this.prisma.$transaction(
      async (tx) => {
        type Paid = { stripe_session_id: string; account_id: string; credit_micros: bigint; refunded_micros: bigint; disputed_micros: bigint };
        // A Checkout purchase, or else a succeeded automatic top-up (keyed by its PaymentIntent).
        let source: 'checkout' | 'auto_topup' = 'checkout';
        let rows = await tx.$queryRaw<Paid[]>`
          SELECT stripe_session_id, account_id, credit_micros, refunded_micros, disputed_micros FROM checkout_sessions
          WHERE payment_intent_id = ${request.paymentIntentId} AND status = 'paid' FOR UPDATE`;
        if (rows.length === 0) {
          source = 'auto_topup';
          rows = await tx.$queryRaw<Paid[]>`
            SELECT payment_intent_id AS stripe_session_id, account_id, amount_micros AS credit_micros, refunded_micros, disputed_micros FROM auto_topups
            WHERE payment_intent_id = ${request.paymentIntentId} AND status = 'succeeded' FOR UPDATE`;
        }
        const session = rows[0];
        if (session === undefined) return { kind: 'unknown_payment' } as const;
        const credit = toMicros(session.credit_micros);
        const refunded = toMicros(session.refunded_micros);
        const disputed = toMicros(session.disputed_micros);
        const room = Math.max(0, credit - refunded - disputed);
        let amount: Micros;
        let idempotencyKey: string;
        if (request.kind === 'stripe_refund') {
          amount = Math.min(Math.max(0, request.amountMicros - refunded), room);
          idempotencyKey = `${session.stripe_session_id}:refunded:${refunded + amount}`;
        } else {
          idempotencyKey = `${session.stripe_session_id}:${request.disputeId ?? 'dispute'}`;
          const seen = await tx.$queryRaw<{ id: string }[]>`
            SELECT id FROM ledger_entries WHERE account_id = ${session.account_id}
              AND kind = CAST('dispute' AS "ledger_entry_kind") AND idempotency_key = ${idempotencyKey}`;
          amount = seen.length > 0 ? 0 : Math.min(request.amountMicros, room);
        }
        if (amount <= 0) return { kind: 'nothing_to_debit' } as const;
        const entry = await appendStripeEntryLocked(tx, {
          id: newId('ledgerEntry'), accountId: session.account_id, kind: request.kind, amountMicros: -amount,
          reason: request.kind === 'stripe_refund' ? 'Stripe refund' : 'Stripe dispute', idempotencyKey, requestId: request.requestId,
        });
        if (source === 'auto_topup') {
          const refunded = request.kind === 'stripe_refund' ? BigInt(amount) : 0n;
          const disputed = request.kind === 'dispute' ? BigInt(amount) : 0n;
          await tx.$executeRaw`UPDATE auto_topups SET refunded_micros = refunded_micros + ${refunded}, disputed_micros = disputed_micros + ${disputed},
            updated_at = clock_timestamp() WHERE payment_intent_id = ${session.stripe_session_id}`;
        } else if (request.kind === 'stripe_refund') {
          await tx.$executeRaw`UPDATE checkout_sessions SET refunded_micros = refunded_micros + ${BigInt(amount)}, updated_at = clock_timestamp()
            WHERE stripe_session_id = ${session.stripe_session_id}`;
        } else {
          await tx.$executeRaw`UPDATE checkout_sessions SET disputed_micros = disputed_micros + ${BigInt(amount)}, updated_at = clock_timestamp()
            WHERE stripe_session_id = ${session.stripe_session_id}`;
        }
        return { kind: 'debited', entry } as const;
      },
      { maxWait: 10_000, timeout: 10_000 },
    );
  }
}

export interface StripeEntry {
  id: string;
  accountId: string;
  kind: 'purchase' | DebitKind;
  amountMicros: Micros;
  reason: string;
  idempotencyKey: string;
  requestId: string | null;
}

/** Locks the balance row, moves it and total_purchased, and writes the entry (amount signed). */
export async function appendStripeEntryLocked(
  tx: Tx,
  input: StripeEntry,
): Promise<LedgerEntryRecord> {
  const locked = await tx.$queryRaw<{ balance_micros: bigint }[]>`
    SELECT balance_micros FROM account_balances WHERE account_id = ${input.accountId} FOR UPDATE`;
  if (locked.length === 0) throw new Error('balance row missing for a Stripe ledger entry');
  // purchase, stripe_refund and dispute all move total_purchased (totalsDelta).
  const entry = await writeEntryLocked(tx, input);
  return entryFromRow(entry);
}
