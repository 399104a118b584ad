import { newId } from '@svc/ids';
import type { Micros } from '@svc/money';
import type { LedgerEntryRecord } from '../../db/ledger-entry-row';
import type { Tx } from '../../db/transactions';
import type { LedgerAppendRepository } from '../../stores/ledger-append.repository';
import type { PurchasesRepository } from '../../stores/purchases.repository';

/** `granted`: this call wrote the credit; `already_granted`: an earlier call did (its entry). */
export type CreditOutcome = { kind: 'granted'; entry: LedgerEntryRecord } | { kind: 'already_granted'; entry: LedgerEntryRecord };

export interface CreditRequest {
  /** The gate: a Checkout session id, or a top-up's PaymentIntent. */
  gateId: string;
  accountId: string;
  amountMicros: Micros;
  /** The Stripe event (or the worker's call) that brought it. */
  eventId: string;
  reason: string;
  requestId: string | null;
}

/**
 * Money in from Stripe, credited exactly once, inside the caller's transaction: the
 * purchase_grants gate first (its primary key, the gate id, makes a second credit impossible:
 * a concurrent second insert waits, then conflicts), then the `purchase` entry through the
 * ledger-append port (the balance row made when the account has none, then locked). A Checkout
 * purchase and an automatic top-up both credit here.
 */
export class PurchaseCredit {
  constructor(
    private readonly purchases: PurchasesRepository,
    private readonly ledger: LedgerAppendRepository,
  ) {}

  async creditOnce(tx: Tx, request: CreditRequest): Promise<CreditOutcome> {
    const entryId = newId('ledgerEntry');
    const claimed = await this.purchases.claimGrant(tx, {
      gateId: request.gateId, accountId: request.accountId, ledgerEntryId: entryId, amountMicros: request.amountMicros, eventId: request.eventId,
    });
    if (!claimed) return { kind: 'already_granted', entry: await this.purchases.grantedEntry(tx, request.gateId) };
    await this.ledger.lockBalance(tx, request.accountId, { create: true });
    // purchase, stripe_refund and dispute all move total_purchased.
    const entry = await this.ledger.writeLocked(tx, {
      id: entryId, accountId: request.accountId, kind: 'purchase', amountMicros: request.amountMicros, reason: request.reason,
      idempotencyKey: request.gateId, requestId: request.requestId,
    });
    return { kind: 'granted', entry };
  }
}
