import { LIMITS } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { newId } from '@svc/ids';
import { microsToUsd } from '@svc/money';
import type { Logger } from 'pino';
import { PaymentProcessorError } from '../../adapters/stripe.adapter';
import type { PaymentProcessor, StripeCheckoutSession, StripePaymentIntent } from '../../adapters/stripe.adapter';
import type { LedgerEntryRecord } from '../../db/ledger-entry-row';
import type { Transactions } from '../../db/transactions';
import type { AuditActor, AuditRepository } from '../../stores/audit.repository';
import type { AutoTopupRepository, DueTopUp } from '../../stores/auto-topups.repository';
import type { EventsRepository } from '../../stores/events.repository';
import type { LedgerRepository } from '../../stores/ledger.repository';
import type { SpendableOutbox } from '../ledger/spendable.port';
import type { PurchaseCredit } from './purchase-credit';
import type { AutoTopupEvents } from './stripe-webhook.service';

export interface AutoTopupTiming {
  /** A pending top-up whose last call to Stripe was this long ago is tried (or followed up) again. */
  retryAfterMs: number;
  /** A pending top-up Stripe never answered for this long ends failed (idempotency keys last 24 h at Stripe). */
  giveUpAfterMs: number;
  /** Accounts and top-ups handled per evaluation. */
  batch: number;
}

export const DEFAULT_AUTO_TOPUP_TIMING: AutoTopupTiming = { retryAfterMs: 60_000, giveUpAfterMs: 23 * 3_600_000, batch: 200 };

/** What one PaymentIntent did to its top-up (stored as the Stripe event's outcome). */
export type IntentOutcome = 'granted' | 'already_granted' | 'failed' | 'processing' | 'rejected' | 'ignored';

export interface SetupUrls {
  successUrl: string;
  cancelUrl: string;
}

const FAILED_STATUSES = new Set(['requires_payment_method', 'requires_action', 'canceled']);

/** What opening a crossing did: a pending top-up to charge, a refusal by the cap, or nothing. */
export type OpenOutcome = { kind: 'pending'; id: string } | { kind: 'skipped'; id: string } | { kind: 'none' };

export type SucceedOutcome =
  | { kind: 'granted'; entry: LedgerEntryRecord }
  | { kind: 'already_granted'; entry: LedgerEntryRecord }
  | { kind: 'rejected'; reason: string }
  | { kind: 'unknown' };

export type FailOutcome = { kind: 'failed'; disabled: boolean } | { kind: 'unchanged' } | { kind: 'unknown' };

/** The stores automatic top-up writes, one transaction per decision. */
export interface AutoTopupStores {
  transactions: Transactions;
  autoTopups: AutoTopupRepository;
  ledger: LedgerRepository;
  events: EventsRepository;
  credit: PurchaseCredit;
  audit: AuditRepository;
}

/**
 * Automatic top-up (docs/decisions/0028). The ledger worker's auto-topup processor calls
 * evaluate(): crossings become pending top-ups (open, under the account's lock and the
 * monthly cap), and each pending one is charged off-session with its id as Stripe's
 * idempotency key, so a retry, a second worker or a crash in between make one
 * PaymentIntent. Its outcome, from the synchronous answer or from Stripe's webhook (re-read
 * from Stripe), goes through onPaymentIntent: a success is credited once (the row lock and
 * purchase_grants), a failure counted once. billing's API uses the same class for the
 * setup session that saves the card and for the webhook's events.
 */
export class AutoTopupService implements AutoTopupEvents {
  private readonly repository: AutoTopupRepository;

  constructor(
    private readonly stores: AutoTopupStores,
    /** null when STRIPE_SECRET_KEY is unset: nothing is evaluated, setup is payment_disabled. */
    private readonly stripe: PaymentProcessor | null,
    /** Applies a credit to the spendable balance right after its commit (else the worker's sweep does). */
    private readonly outbox: SpendableOutbox | null,
    private readonly logger: Logger,
    private readonly timing: AutoTopupTiming = DEFAULT_AUTO_TOPUP_TIMING,
  ) {
    this.repository = stores.autoTopups;
  }

  get enabled(): boolean {
    return this.stripe !== null;
  }

  /** One pass: rearm, open crossings, charge what is due. Returns how many top-ups it opened or settled. */
  async evaluate(): Promise<number> {
    if (this.stripe === null) return 0;
    await this.repository.rearm();
    let done = 0;
    for (const accountId of await this.repository.crossed(this.timing.batch)) {
      const opened = await this.open(accountId);
      if (opened.kind !== 'none') done += 1;
      if (opened.kind === 'skipped') this.logger.warn({ account_id: accountId, auto_topup_id: opened.id }, 'automatic top-up refused: it would pass the monthly cap');
    }
    for (const id of await this.repository.stale(this.timing.giveUpAfterMs)) {
      const failed = await this.fail(id, 'processor_unreachable', null);
      if (failed.kind === 'failed') this.logger.error({ auto_topup_id: id }, 'automatic top-up given up: Stripe did not answer within its window');
    }
    for (const due of await this.repository.due(this.timing.retryAfterMs, this.timing.batch)) {
      if ((await this.charge(due)) !== 'skipped') done += 1;
    }
    return done;
  }

  /** Charges (or follows up) one pending top-up; `skipped` when another worker holds it or Stripe could not be reached. */
  async charge(due: DueTopUp): Promise<IntentOutcome | 'skipped'> {
    const stripe = this.stripe;
    if (stripe === null || !(await this.repository.claimAttempt(due.id, due.attempts))) return 'skipped';
    const log = this.logger.child({ account_id: due.accountId, auto_topup_id: due.id });
    try {
      if (due.paymentIntentId !== null) {
        // Already charged and still processing: ask Stripe (its webhook may have been lost).
        return await this.onPaymentIntent(await stripe.retrievePaymentIntent(due.paymentIntentId), `poll:${due.id}`, null);
      }
      if (due.customerId === null || due.paymentMethodId === null) {
        await this.fail(due.id, 'no_payment_method', null);
        return 'failed';
      }
      const outcome = await stripe.chargeOffSession({
        customerId: due.customerId, paymentMethodId: due.paymentMethodId, amountCents: due.amountMicros / 10_000, accountId: due.accountId,
        autoTopupId: due.id, creditMicros: due.amountMicros, idempotencyKey: due.id,
      });
      if (outcome.kind === 'intent') return await this.onPaymentIntent(outcome.intent, `confirm:${due.id}`, null);
      const failed = await this.fail(due.id, outcome.code, outcome.intent?.id ?? null);
      if (failed.kind === 'failed') log.warn({ failure_code: outcome.code, auto_topup_disabled: failed.disabled }, 'automatic top-up declined');
      return 'failed';
    } catch (error) {
      if (error instanceof PaymentProcessorError) {
        // Left pending: the next attempt, after retryAfterMs, uses the same idempotency key.
        log.warn({ err: error.message, status_code: error.statusCode }, 'automatic top-up: Stripe could not be reached; it is tried again');
        return 'skipped';
      }
      throw error;
    }
  }

  /**
   * A PaymentIntent of a top-up, as Stripe answered it or as re-read for its webhook event:
   * succeeded credits (once), a failed state fails the top-up (once), processing records it.
   * PaymentIntents that are not billing's top-ups are ignored.
   */
  async onPaymentIntent(intent: StripePaymentIntent, source: string, requestId: string | null): Promise<IntentOutcome> {
    const id = intent.metadata.auto_topup_id;
    if (id === undefined) return 'ignored';
    const accountId = await this.repository.accountOf(id);
    if (accountId === null || accountId !== intent.metadata.account_id) return 'ignored';
    const log = this.logger.child({ account_id: accountId, auto_topup_id: id, stripe_payment_intent_id: intent.id });
    if (intent.status === 'succeeded') {
      const outcome = await this.succeed(id, intent, source, requestId);
      switch (outcome.kind) {
        case 'granted':
        case 'already_granted':
          if (this.outbox !== null) await this.outbox.applyAfterCommit(outcome.entry);
          if (outcome.kind === 'granted') log.info({ ledger_entry_id: outcome.entry.id, amount_micros: outcome.entry.amountMicros }, 'automatic top-up credited');
          return outcome.kind;
        case 'rejected':
          log.error({ reason: outcome.reason }, 'automatic top-up PaymentIntent not credited');
          return 'rejected';
        case 'unknown':
          return 'ignored';
        default: {
          const unreachable: never = outcome;
          return unreachable;
        }
      }
    }
    if (FAILED_STATUSES.has(intent.status)) {
      const failed = await this.fail(id, intent.failureCode ?? intent.status, intent.id);
      if (failed.kind === 'failed') log.warn({ failure_code: intent.failureCode ?? intent.status, auto_topup_disabled: failed.disabled }, 'automatic top-up failed');
      return 'failed';
    }
    await this.repository.notePaymentIntent(id, intent.id);
    return 'processing';
  }

  /**
   * One crossing, decided under the account's settings row lock: still enabled, armed, with
   * a card and below the threshold? Then, unless a top-up is already in flight (the account
   * stays armed and is looked at again once it settles), the crossing is consumed (disarmed)
   * and either a pending top-up is written or, when it would take the UTC month's pending
   * and succeeded top-ups past the cap, a skipped one with its auto_topup.failed event.
   */
  async open(accountId: string): Promise<OpenOutcome> {
    const { transactions, autoTopups, events } = this.stores;
    return transactions.run(async (tx) => {
      const settings = await autoTopups.lockCrossing(tx, accountId);
      if (settings === null || settings.balanceMicros >= settings.thresholdMicros) return { kind: 'none' } as const;
      if (await autoTopups.hasPending(tx, accountId)) return { kind: 'none' } as const;
      await autoTopups.disarm(tx, accountId);
      const { month, usedMicros } = await autoTopups.monthUsed(tx, accountId);
      const id = newId('autoTopup');
      if (usedMicros + settings.amountMicros > settings.capMicros) {
        await autoTopups.insertSkipped(tx, { id, accountId, amountMicros: settings.amountMicros, month, failureCode: 'monthly_cap_reached' });
        await events.emit(tx, {
          accountId,
          type: 'auto_topup.failed',
          data: {
            auto_topup_id: id, amount_usd: microsToUsd(settings.amountMicros), reason: 'monthly_cap_reached', failure_code: 'monthly_cap_reached',
            payment_intent_id: null, balance_usd: microsToUsd(settings.balanceMicros), month,
            month_to_date_usd: microsToUsd(usedMicros), monthly_cap_usd: microsToUsd(settings.capMicros), auto_topup_disabled: false,
          },
        });
        return { kind: 'skipped', id } as const;
      }
      await autoTopups.insertPending(tx, { id, accountId, amountMicros: settings.amountMicros, month });
      return { kind: 'pending', id } as const;
    });
  }

  /**
   * Credits a succeeded PaymentIntent of top-up `id` once. The top-up row is locked first, so
   * the synchronous answer and the webhook (in any order, any number of times) take turns;
   * the purchase_grants row keyed by the PaymentIntent is the gate, as for a Checkout
   * purchase. In the same transaction: the purchase entry and balance, the top-up succeeded
   * (counted in the current month if it had been given up: markSucceeded), the failure count
   * reset, and auto_topup.succeeded.
   */
  async succeed(id: string, intent: { id: string; amountCents: number; currency: string }, source: string, requestId: string | null): Promise<SucceedOutcome> {
    const { transactions, autoTopups, events, credit } = this.stores;
    return transactions.run(async (tx) => {
      const row = await autoTopups.lockTopUp(tx, id);
      if (row === null) return { kind: 'unknown' } as const;
      if (intent.currency !== 'usd' || intent.amountCents * 10_000 !== row.amountMicros) return { kind: 'rejected', reason: 'the PaymentIntent does not carry the top-up amount in usd' } as const;
      const credited = await credit.creditOnce(tx, { gateId: intent.id, accountId: row.accountId, amountMicros: row.amountMicros, eventId: source, reason: 'Automatic top-up', requestId });
      if (credited.kind === 'already_granted') return credited;
      const { entry } = credited;
      if (row.status !== 'pending' && row.status !== 'succeeded') {
        this.logger.warn({ account_id: row.accountId, auto_topup_id: id, status: row.status }, 'automatic top-up given up earlier succeeded at Stripe: credited now, counted in this month');
      }
      await autoTopups.markSucceeded(tx, id, { paymentIntentId: intent.id, ledgerEntryId: entry.id });
      // Back at or above the threshold: armed at once, so the next fall is a new crossing even before the next tick sees this balance.
      await autoTopups.resetFailuresAndArm(tx, row.accountId, entry.balanceAfterMicros);
      await events.emit(tx, {
        accountId: row.accountId,
        type: 'auto_topup.succeeded',
        data: {
          auto_topup_id: id, amount_usd: microsToUsd(row.amountMicros), balance_usd: microsToUsd(entry.balanceAfterMicros), ledger_entry_id: entry.id,
          payment_intent_id: intent.id,
        },
      });
      return { kind: 'granted', entry } as const;
    });
  }

  /**
   * A pending top-up's payment failed (declined, authentication required, cancelled): it ends
   * failed, the account's consecutive failures go up by one, and at LIMITS.autoTopupFailures
   * automatic top-up turns itself off (`disabled_reason: payment_failed`) until the owner
   * saves its settings again; auto_topup.failed says which. A top-up no longer pending is
   * left as it is (a repeated or late failure changes nothing).
   */
  async fail(id: string, failureCode: string, paymentIntentId: string | null): Promise<FailOutcome> {
    const { transactions, autoTopups, ledger, events } = this.stores;
    return transactions.run(async (tx) => {
      const row = await autoTopups.lockTopUp(tx, id);
      if (row === null) return { kind: 'unknown' } as const;
      if (row.status !== 'pending') return { kind: 'unchanged' } as const;
      await autoTopups.markFailed(tx, id, failureCode, paymentIntentId);
      const settings = await autoTopups.countFailure(tx, row.accountId, LIMITS.autoTopupFailures.max);
      const balance = await ledger.balanceIn(tx, row.accountId);
      const disabled = settings !== null && !settings.enabled;
      await events.emit(tx, {
        accountId: row.accountId,
        type: 'auto_topup.failed',
        data: {
          auto_topup_id: id, amount_usd: microsToUsd(row.amountMicros), reason: 'payment_failed', failure_code: failureCode,
          payment_intent_id: paymentIntentId, balance_usd: microsToUsd(balance),
          consecutive_failures: settings?.failures ?? 0, auto_topup_disabled: disabled,
        },
      });
      return { kind: 'failed', disabled } as const;
    });
  }

  // ---- the saved card ----

  /**
   * A Stripe Checkout session in setup mode for the account's customer (made once, kept in
   * billing_settings): the owner saves a card there; the webhook (onSetupSession) stores it.
   */
  async createSetupSession(accountId: string, urls: SetupUrls, actor?: AuditActor): Promise<{ url: string; expiresAt: Date }> {
    const stripe = this.stripe;
    if (stripe === null) throw new AppError('payment_disabled', 'automatic top-up is not available on this deployment');
    try {
      let customerId = (await this.repository.state(accountId)).customerId;
      if (customerId === null) {
        // Stripe keeps an idempotency key for 24 hours: two racing first setups make one customer; the first saved wins anyway.
        customerId = await this.repository.saveCustomer(accountId, await stripe.createCustomer(accountId, `customer-${accountId}`));
      }
      const session = await stripe.createSetupSession({ accountId, customerId, successUrl: urls.successUrl, cancelUrl: urls.cancelUrl, idempotencyKey: newId('checkout') });
      if (session.url === null) throw new AppError('payment_error', 'the payment processor returned a setup session without a URL');
      // The session is Stripe's (a person saves the card on its page): the entry names it, and nothing of the card.
      if (actor !== undefined) {
        await this.stores.transactions.run((tx) => this.stores.audit.append(tx, {
          accountId, actor, action: 'card_setup.start', targetId: session.id, changes: { status: { before: null, after: 'pending' } },
        }));
      }
      return { url: session.url, expiresAt: new Date(session.expiresAt * 1000) };
    } catch (error) {
      if (error instanceof PaymentProcessorError) throw new AppError('payment_error', 'the payment processor could not create the setup session; try again');
      throw error;
    }
  }

  /** A setup session's event (re-read from Stripe): a completed one saves its card on the account it was made for. */
  async onSetupSession(session: StripeCheckoutSession): Promise<'card_saved' | 'awaiting_setup' | 'rejected'> {
    const stripe = this.stripe;
    const accountId = session.metadata.account_id;
    if (stripe === null || session.status !== 'complete' || session.setupIntentId === null) return 'awaiting_setup';
    if (accountId === undefined || accountId !== session.clientReferenceId) return 'rejected';
    const card = await stripe.retrieveSavedCard(session.setupIntentId);
    if (card === null) return 'awaiting_setup';
    if (!(await this.repository.savePaymentMethod(accountId, card))) {
      this.logger.error({ account_id: accountId, stripe_session_id: session.id }, 'setup session saved a card for a customer that is not the account\'s; not stored');
      return 'rejected';
    }
    this.logger.info({ account_id: accountId, stripe_session_id: session.id }, 'card saved for automatic top-up');
    return 'card_saved';
  }
}
