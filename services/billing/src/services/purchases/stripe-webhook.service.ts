import { AppError } from '@svc/errors';
import { microsToUsd } from '@svc/money';
import type { Micros } from '@svc/money';
import type { Logger } from 'pino';
import { PaymentProcessorError, SignatureError, verifyStripeEvent } from '../../adapters/stripe.adapter';
import type { PaymentProcessor, StripeCheckoutSession, StripePaymentIntent, VerifiedEvent } from '../../adapters/stripe.adapter';
import type { LedgerEntryRecord } from '../../db/ledger-entry-row';
import type { Transactions } from '../../db/transactions';
import type { AutoTopupRepository } from '../../stores/auto-topups.repository';
import type { EventsRepository } from '../../stores/events.repository';
import type { LedgerAppendRepository } from '../../stores/ledger-append.repository';
import type { PaidPurchase, PaidSession, PurchasesRepository } from '../../stores/purchases.repository';
import { MICROS_PER_CENT } from '../../common/cents';
import type { SpendableOutbox } from '../ledger/spendable.port';
import type { CreditOutcome, PurchaseCredit } from './purchase-credit';

/** What one event did (stored in stripe_events.outcome). */
export type EventOutcome =
  | 'granted' | 'already_granted' | 'awaiting_payment' | 'closed' | 'debited' | 'nothing_to_debit' | 'rejected' | 'ignored'
  | 'card_saved' | 'awaiting_setup' | 'failed' | 'processing';

export interface WebhookResult {
  eventId: string;
  outcome: EventOutcome | 'duplicate_event';
}

/**
 * What the webhook hands automatic top-up (AutoTopupService implements it;
 * declared here so the dependency goes one way: auto-topup uses the purchase path's gate).
 */
export interface AutoTopupEvents {
  /** A setup session re-read from Stripe: a completed one saves its card. */
  onSetupSession(session: StripeCheckoutSession): Promise<'card_saved' | 'awaiting_setup' | 'rejected'>;
  /** A top-up's PaymentIntent re-read from Stripe: credited once, failed once, or still processing. */
  onPaymentIntent(intent: StripePaymentIntent, source: string, requestId: string | null): Promise<'granted' | 'already_granted' | 'failed' | 'processing' | 'rejected' | 'ignored'>;
}

/** Stripe webhook outcomes and the money they moved (billing's metrics implement it). */
export interface WebhookMetrics {
  /** One webhook answered: its outcome (granted, duplicate_event, ...) or the error code it answered with. */
  webhook(outcome: string): void;
  /** Purchased credit granted, in micro-USD. */
  credited(micros: number): void;
  /** Purchased credit taken back (kind: stripe_refund or dispute), in micro-USD. */
  refunded(kind: string, micros: number): void;
}

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

/** The stores the Stripe webhook writes, in one transaction per event's change. */
export interface StripeWebhookStores {
  transactions: Transactions;
  purchases: PurchasesRepository;
  autoTopups: AutoTopupRepository;
  ledger: LedgerAppendRepository;
  events: EventsRepository;
  credit: PurchaseCredit;
}

export interface WebhookHooks {
  /** Test seam: runs after the event's database work committed, before the event is recorded. */
  afterCommit?: (event: VerifiedEvent) => Promise<void>;
}

const SESSION_EVENTS = new Set([
  'checkout.session.completed', 'checkout.session.async_payment_succeeded', 'checkout.session.async_payment_failed', 'checkout.session.expired',
]);

/** An automatic top-up's PaymentIntent moved (docs/decisions/0028). */
const INTENT_EVENTS = new Set(['payment_intent.succeeded', 'payment_intent.payment_failed', 'payment_intent.canceled', 'payment_intent.processing']);

function stringField(object: Record<string, unknown>, name: string): string | null {
  const value = object[name];
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'object' && value !== null && typeof (value as { id?: unknown }).id === 'string') return (value as { id: string }).id;
  return null;
}

function centsField(object: Record<string, unknown>, name: string): number | null {
  const value = object[name];
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/**
 * POST /v1/credits/webhook. Exactly once, whatever Stripe does:
 * - the signature is checked on the raw bytes first (400 without a grant otherwise);
 * - an event id already handled to the end is answered 200 at once;
 * - session events re-read the session from Stripe and act on its current state, so order
 *   does not matter: `paid` grants (once per session, PurchaseCredit's gate), a closed
 *   unpaid session is marked failed/expired;
 * - the event id is recorded only after its work committed: a failure in between answers
 *   non-2xx, Stripe retries, and the retry finds the grant already made.
 */
export class StripeWebhookService {
  private readonly repository: PurchasesRepository;

  constructor(
    private readonly stripe: PaymentProcessor | null,
    private readonly webhookSecret: string | null,
    private readonly stores: StripeWebhookStores,
    private readonly outbox: SpendableOutbox,
    private readonly logger: Logger,
    private readonly hooks: WebhookHooks = {},
    private readonly metrics?: WebhookMetrics,
    /** Setup sessions (a saved card) and top-ups' PaymentIntents; without it those events are ignored. */
    private readonly autoTopups?: AutoTopupEvents,
  ) {
    this.repository = stores.purchases;
  }

  async handle(rawBody: Buffer | undefined, signature: string | undefined, requestId: string): Promise<WebhookResult> {
    try {
      const result = await this.handleEvent(rawBody, signature, requestId);
      this.metrics?.webhook(result.outcome);
      return result;
    } catch (error) {
      this.metrics?.webhook(error instanceof AppError ? error.code : 'internal');
      throw error;
    }
  }

  private async handleEvent(rawBody: Buffer | undefined, signature: string | undefined, requestId: string): Promise<WebhookResult> {
    if (this.stripe === null || this.webhookSecret === null) {
      throw new AppError('payment_disabled', 'credit purchases are not available on this deployment');
    }
    let event: VerifiedEvent;
    try {
      event = verifyStripeEvent(rawBody ?? Buffer.alloc(0), signature, this.webhookSecret);
    } catch (error) {
      if (error instanceof SignatureError) throw new AppError('invalid_request', error.message);
      throw error;
    }
    if (await this.repository.isEventProcessed(event.id)) return { eventId: event.id, outcome: 'duplicate_event' };
    const outcome = await this.dispatch(event, requestId);
    if (this.hooks.afterCommit !== undefined) await this.hooks.afterCommit(event);
    await this.repository.recordEvent(event.id, event.type, outcome);
    this.logger.info({ stripe_event_id: event.id, stripe_event_type: event.type, outcome }, 'stripe event handled');
    return { eventId: event.id, outcome };
  }

  private async dispatch(event: VerifiedEvent, requestId: string): Promise<EventOutcome> {
    if (SESSION_EVENTS.has(event.type)) return this.onSessionEvent(event, requestId);
    if (INTENT_EVENTS.has(event.type)) return this.onIntentEvent(event, requestId);
    if (event.type === 'charge.refunded') {
      const paymentIntent = stringField(event.object, 'payment_intent');
      const refunded = centsField(event.object, 'amount_refunded');
      if (paymentIntent === null || refunded === null) return 'ignored';
      return this.debit(event, { paymentIntentId: paymentIntent, kind: 'stripe_refund', amountMicros: refunded * MICROS_PER_CENT, disputeId: null, requestId });
    }
    if (event.type === 'charge.dispute.created') {
      const paymentIntent = stringField(event.object, 'payment_intent');
      const amount = centsField(event.object, 'amount');
      const disputeId = stringField(event.object, 'id');
      if (paymentIntent === null || amount === null || disputeId === null) return 'ignored';
      return this.debit(event, { paymentIntentId: paymentIntent, kind: 'dispute', amountMicros: amount * MICROS_PER_CENT, disputeId, requestId });
    }
    return 'ignored';
  }

  private async onSessionEvent(event: VerifiedEvent, requestId: string): Promise<EventOutcome> {
    const sessionId = stringField(event.object, 'id');
    if (sessionId === null) return 'ignored';
    const stripe = this.stripe;
    if (stripe === null) throw new AppError('payment_disabled', 'credit purchases are not available on this deployment');
    let session: StripeCheckoutSession;
    try {
      // The event is a snapshot; the session's state now is what counts.
      session = await stripe.retrieveCheckoutSession(sessionId);
    } catch (error) {
      if (error instanceof PaymentProcessorError) throw new AppError('payment_error', 'could not re-read the checkout session from Stripe; retry later');
      throw error;
    }
    if (session.mode === 'setup') return this.autoTopups === undefined ? 'ignored' : this.autoTopups.onSetupSession(session);
    if (session.paymentStatus === 'paid') return this.grant(event, session, requestId);
    if (event.type === 'checkout.session.async_payment_failed') return (await this.repository.closeSession(session.id, 'failed')) ? 'closed' : 'ignored';
    if (event.type === 'checkout.session.expired' || session.status === 'expired') {
      return (await this.repository.closeSession(session.id, 'expired')) ? 'closed' : 'ignored';
    }
    return 'awaiting_payment';
  }

  /** A top-up's PaymentIntent: re-read from Stripe (the event is a snapshot) and settled through the top-up's one path. */
  private async onIntentEvent(event: VerifiedEvent, requestId: string): Promise<EventOutcome> {
    const intentId = stringField(event.object, 'id');
    const metadata = event.object.metadata;
    const isTopUp = typeof metadata === 'object' && metadata !== null && typeof (metadata as Record<string, unknown>).auto_topup_id === 'string';
    if (intentId === null || !isTopUp || this.autoTopups === undefined || this.stripe === null) return 'ignored';
    let intent;
    try {
      intent = await this.stripe.retrievePaymentIntent(intentId);
    } catch (error) {
      if (error instanceof PaymentProcessorError) throw new AppError('payment_error', 'could not re-read the payment intent from Stripe; retry later');
      throw error;
    }
    const outcome = await this.autoTopups.onPaymentIntent(intent, event.id, requestId);
    if (outcome === 'granted') this.metrics?.credited(intent.amountCents * MICROS_PER_CENT);
    return outcome;
  }

  private async grant(event: VerifiedEvent, session: StripeCheckoutSession, requestId: string): Promise<EventOutcome> {
    const accountId = session.metadata.account_id;
    const creditMicros = Number(session.metadata.credit_micros);
    const cents = session.amountTotalCents;
    if (
      accountId === undefined || accountId !== session.clientReferenceId || !Number.isSafeInteger(creditMicros) || creditMicros <= 0 ||
      cents === null || cents * MICROS_PER_CENT !== creditMicros || session.currency !== 'usd'
    ) {
      this.logger.error({ stripe_event_id: event.id, stripe_session_id: session.id }, 'paid checkout session does not carry a consistent account and amount; not granted');
      return 'rejected';
    }
    const outcome = await this.grantPurchase(
      { stripeSessionId: session.id, accountId, amountCents: cents, creditMicros, paymentIntentId: session.paymentIntentId, expiresAt: new Date(session.expiresAt * 1000) },
      event.id,
      requestId,
    );
    // Committed: the spendable balance follows exactly once (now, or by the worker's sweep).
    await this.outbox.applyAfterCommit(outcome.entry);
    if (outcome.kind === 'granted') {
      this.metrics?.credited(creditMicros);
      this.logger.info({ account_id: accountId, stripe_session_id: session.id, ledger_entry_id: outcome.entry.id, amount_micros: creditMicros }, 'credits purchased');
    }
    return outcome.kind;
  }

  /**
   * Grants a paid session once (PurchaseCredit's gate), and in the same transaction records
   * the session paid and writes credits.purchased: the event exists exactly when the credit does.
   */
  private grantPurchase(session: PaidSession, eventId: string, requestId: string): Promise<CreditOutcome> {
    const { transactions, purchases, events, credit } = this.stores;
    return transactions.run(async (tx) => {
      const outcome = await credit.creditOnce(tx, {
        gateId: session.stripeSessionId, accountId: session.accountId, amountMicros: session.creditMicros, eventId, reason: 'Stripe Checkout purchase', requestId,
      });
      if (outcome.kind === 'already_granted') return outcome;
      await purchases.markSessionPaid(tx, session);
      await events.emit(tx, {
        accountId: session.accountId,
        type: 'credits.purchased',
        data: { amount_usd: microsToUsd(session.creditMicros), balance_usd: microsToUsd(outcome.entry.balanceAfterMicros), ledger_entry_id: outcome.entry.id, source: 'checkout' },
      });
      return outcome;
    });
  }

  /**
   * Takes back purchased credit for a refund or a dispute of a paid session's payment, or of
   * a succeeded automatic top-up's PaymentIntent (the same rules on its auto_topups row). The
   * purchase's row is locked, so two deliveries compute the debit one after the other. A
   * refund debits what the charge's cumulative refunded amount adds to what was debited
   * before; a dispute debits once per dispute id. Neither takes back more than the purchase
   * credited, less what was already taken back. One transaction: the debit entry and the row.
   */
  private takeBack(request: DebitRequest): Promise<DebitOutcome> {
    const { transactions, purchases, autoTopups, ledger } = this.stores;
    return transactions.run(async (tx) => {
      // A Checkout purchase, or else a succeeded automatic top-up (keyed by its PaymentIntent).
      let source: 'checkout' | 'auto_topup' = 'checkout';
      let paid: PaidPurchase | null = await purchases.lockPaidSession(tx, request.paymentIntentId);
      if (paid === null) {
        source = 'auto_topup';
        paid = await autoTopups.lockSucceededForDebit(tx, request.paymentIntentId);
      }
      if (paid === null) return { kind: 'unknown_payment' } as const;
      const room = Math.max(0, paid.creditMicros - paid.refundedMicros - paid.disputedMicros);
      let amount: Micros;
      let idempotencyKey: string;
      if (request.kind === 'stripe_refund') {
        amount = Math.min(Math.max(0, request.amountMicros - paid.refundedMicros), room);
        idempotencyKey = `${paid.gateId}:refunded:${paid.refundedMicros + amount}`;
      } else {
        idempotencyKey = `${paid.gateId}:${request.disputeId ?? 'dispute'}`;
        const seen = await ledger.entryByKey(tx, paid.accountId, 'dispute', idempotencyKey);
        amount = seen !== null ? 0 : Math.min(request.amountMicros, room);
      }
      if (amount <= 0) return { kind: 'nothing_to_debit' } as const;
      if ((await ledger.lockBalance(tx, paid.accountId, { create: false })) === null) throw new Error('balance row missing for a Stripe ledger entry');
      const entry = await ledger.writeLocked(tx, {
        accountId: paid.accountId, kind: request.kind, amountMicros: -amount,
        reason: request.kind === 'stripe_refund' ? 'Stripe refund' : 'Stripe dispute', idempotencyKey, requestId: request.requestId,
      });
      if (source === 'auto_topup') await autoTopups.recordTakenBack(tx, paid.gateId, request.kind, amount);
      else await purchases.recordSessionTakenBack(tx, paid.gateId, request.kind, amount);
      return { kind: 'debited', entry } as const;
    });
  }

  private async debit(event: VerifiedEvent, request: DebitRequest): Promise<EventOutcome> {
    const outcome = await this.takeBack(request);
    switch (outcome.kind) {
      case 'debited':
        await this.outbox.applyAfterCommit(outcome.entry);
        this.metrics?.refunded(request.kind, Math.abs(outcome.entry.amountMicros));
        this.logger.warn(
          { account_id: outcome.entry.accountId, stripe_event_id: event.id, kind: request.kind, amount_micros: outcome.entry.amountMicros, balance_after_micros: outcome.entry.balanceAfterMicros },
          'purchased credit taken back by Stripe',
        );
        return 'debited';
      case 'nothing_to_debit':
        return 'nothing_to_debit';
      case 'unknown_payment':
        // Not (yet) a granted purchase: answer non-2xx so Stripe retries after the grant lands.
        throw new AppError('internal', 'payment not known yet');
      default: {
        const unreachable: never = outcome;
        return unreachable;
      }
    }
  }
}
