import type { AuditActor } from '../../stores/audit.repository';
import { AppError } from '@svc/errors';
import { newId } from '@svc/ids';
import type { Micros } from '@svc/money';
import { PaymentProcessorError } from '../../adapters/stripe.adapter';
import type { PaymentProcessor } from '../../adapters/stripe.adapter';
import type { CheckoutBody } from '../../http/checkout/checkout.dto';
import type { CheckoutRepository } from '../../stores/checkout.repository';

export interface CheckoutDefaults {
  successUrl: string;
  cancelUrl: string;
}

export interface CreatedCheckout {
  id: string;
  url: string;
  creditMicros: Micros;
  expiresAt: Date;
}

/** Buying credits: one Stripe Checkout session per call, recorded as pending. */
export class CheckoutService {
  constructor(
    /** null when STRIPE_SECRET_KEY is unset: every checkout is 503 payment_disabled. */
    private readonly stripe: PaymentProcessor | null,
    private readonly repository: CheckoutRepository,
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
    await this.repository.insertPending({
      id, accountId, stripeSessionId: session.id, amountCents: body.amountCents, creditMicros: body.creditMicros, expiresAt,
    }, audit);
    return { id, url: session.url, creditMicros: body.creditMicros, expiresAt };
  }
}
