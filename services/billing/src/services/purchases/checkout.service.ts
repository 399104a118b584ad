import { AppError } from '@svc/errors';
import { newId } from '@svc/ids';
import { microsToUsd } from '@svc/money';
import type { Micros } from '@svc/money';
import { PaymentProcessorError } from '../../adapters/stripe.adapter';
import type { PaymentProcessor } from '../../adapters/stripe.adapter';
import type { Transactions } from '../../db/transactions';
import type { AuditActor, AuditRepository } from '../../stores/audit.repository';
import type { CheckoutRepository } from '../../stores/checkout.repository';

export interface CheckoutDefaults {
  successUrl: string;
  cancelUrl: string;
}

/** A purchase to start, validated (amounts in cents and micro-USD; null URLs: the deployment's). */
export interface CheckoutBody {
  creditMicros: Micros;
  amountCents: number;
  successUrl: string | null;
  cancelUrl: string | null;
}

export interface CreatedCheckout {
  id: string;
  url: string;
  creditMicros: Micros;
  expiresAt: Date;
}

export interface CheckoutStores {
  transactions: Transactions;
  checkout: CheckoutRepository;
  audit: AuditRepository;
}

/** Buying credits: one Stripe Checkout session per call, recorded as pending (and audited) in one transaction. */
export class CheckoutService {
  constructor(
    /** null when STRIPE_SECRET_KEY is unset: every checkout is 503 payment_disabled. */
    private readonly stripe: PaymentProcessor | null,
    private readonly stores: CheckoutStores,
    private readonly defaults: CheckoutDefaults,
  ) {}

  get enabled(): boolean {
    return this.stripe !== null;
  }

  /** The body is already validated (the controller parses it before calling). */
  async create(accountId: string, body: CheckoutBody, audit?: AuditActor): Promise<CreatedCheckout> {
    if (this.stripe === null) throw new AppError('payment_disabled', 'credit purchases are not available on this deployment');
    const id = newId('checkout');
    let session;
    try {
      session = await this.stripe.createCheckoutSession({
        accountId,
        amountCents: body.amountCents,
        creditMicros: body.creditMicros,
        successUrl: body.successUrl ?? this.defaults.successUrl,
        cancelUrl: body.cancelUrl ?? this.defaults.cancelUrl,
        idempotencyKey: id,
      });
    } catch (error) {
      if (error instanceof PaymentProcessorError) throw new AppError('payment_error', 'the payment processor could not create the checkout session; try again');
      throw error;
    }
    if (session.url === null) throw new AppError('payment_error', 'the payment processor returned a session without a URL');
    const expiresAt = new Date(session.expiresAt * 1000);
    const row = { id, accountId, stripeSessionId: session.id, amountCents: body.amountCents, creditMicros: body.creditMicros, expiresAt };
    // A row already written for the session (an idempotent create) is kept, and makes no second entry.
    await this.stores.transactions.run(async (tx) => {
      if (!(await this.stores.checkout.insertPending(tx, row)) || audit === undefined) return;
      await this.stores.audit.append(tx, {
        accountId, actor: audit, action: 'purchase.start', targetId: id,
        changes: {
          amount_usd: { before: null, after: body.amountCents / 100 }, credit_usd: { before: null, after: microsToUsd(body.creditMicros) }, status: { before: null, after: 'pending' },
        },
      });
    });
    return { id, url: session.url, creditMicros: body.creditMicros, expiresAt };
  }
}
