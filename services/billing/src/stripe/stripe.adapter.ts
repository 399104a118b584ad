import Stripe from 'stripe';

/** Stripe's webhook signature tolerance we accept (seconds), the library's documented default. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/** What billing reads of a Checkout session (Stripe's `checkout.session` object). */
export interface StripeCheckoutSession {
  id: string;
  url: string | null;
  /** open | complete | expired */
  status: string | null;
  /** paid | unpaid | no_payment_required */
  paymentStatus: string;
  amountTotalCents: number | null;
  currency: string | null;
  clientReferenceId: string | null;
  metadata: Record<string, string>;
  paymentIntentId: string | null;
  /** Unix seconds. */
  expiresAt: number;
}

export interface NewCheckoutSession {
  accountId: string;
  amountCents: number;
  creditMicros: number;
  successUrl: string;
  cancelUrl: string;
  /** Sent as Stripe's Idempotency-Key: a retry of the same create makes no second session. */
  idempotencyKey: string;
}

/** A verified Stripe event, reduced to what the webhook handles. */
export interface VerifiedEvent {
  id: string;
  type: string;
  /** `data.object` of the event (a session, a charge, a dispute...). */
  object: Record<string, unknown>;
}

/** Stripe could not be reached, timed out, or answered an error: 502 payment_error to the caller. */
export class PaymentProcessorError extends Error {
  constructor(
    message: string,
    readonly statusCode: number | null,
  ) {
    super(message);
    this.name = 'PaymentProcessorError';
  }
}

/** The signature did not verify (tampered, wrong secret, missing header, too old). */
export class SignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SignatureError';
  }
}

export interface StripeSettings {
  secretKey: string;
  /** e.g. https://api.stripe.com or http://127.0.0.1:12111 (a fake). */
  apiBase: string;
  timeoutMs: number;
}

export interface PaymentProcessor {
  createCheckoutSession(input: NewCheckoutSession): Promise<StripeCheckoutSession>;
  retrieveCheckoutSession(id: string): Promise<StripeCheckoutSession>;
}

function sessionOf(session: Stripe.Checkout.Session): StripeCheckoutSession {
  const paymentIntent = session.payment_intent;
  const metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(session.metadata ?? {})) if (typeof value === 'string') metadata[name] = value;
  return {
    id: session.id,
    url: session.url ?? null,
    status: session.status ?? null,
    paymentStatus: session.payment_status,
    amountTotalCents: session.amount_total ?? null,
    currency: session.currency ?? null,
    clientReferenceId: session.client_reference_id ?? null,
    metadata,
    paymentIntentId: typeof paymentIntent === 'string' ? paymentIntent : (paymentIntent?.id ?? null),
    expiresAt: session.expires_at,
  };
}

/** A short description of a Stripe client failure (never the request or a key). */
function failureOf(error: unknown): PaymentProcessorError {
  if (error instanceof Stripe.errors.StripeError) {
    return new PaymentProcessorError(`stripe ${error.type}${error.code === undefined ? '' : ` ${error.code}`}`, error.statusCode ?? null);
  }
  return new PaymentProcessorError(error instanceof Error ? error.name : 'stripe call failed', null);
}

/** The real `stripe` client, pointed at STRIPE_API_BASE. The only file that calls the Stripe API. */
export class StripeAdapter implements PaymentProcessor {
  private readonly client: Stripe;

  constructor(settings: StripeSettings) {
    const base = new URL(settings.apiBase);
    const protocol = base.protocol === 'http:' ? 'http' : 'https';
    this.client = new Stripe(settings.secretKey, {
      host: base.hostname,
      port: base.port === '' ? (protocol === 'http' ? 80 : 443) : Number(base.port),
      protocol,
      timeout: settings.timeoutMs,
      // One retry, with the same idempotency key, so a retried create is the same session.
      maxNetworkRetries: 1,
      telemetry: false,
    });
  }

  async createCheckoutSession(input: NewCheckoutSession): Promise<StripeCheckoutSession> {
    try {
      const session = await this.client.checkout.sessions.create(
        {
          mode: 'payment',
          line_items: [
            {
              quantity: 1,
              price_data: { currency: 'usd', unit_amount: input.amountCents, product_data: { name: 'Search credits' } },
            },
          ],
          client_reference_id: input.accountId,
          metadata: { account_id: input.accountId, credit_micros: String(input.creditMicros) },
          success_url: input.successUrl,
          cancel_url: input.cancelUrl,
        },
        { idempotencyKey: input.idempotencyKey },
      );
      return sessionOf(session);
    } catch (error) {
      throw failureOf(error);
    }
  }

  async retrieveCheckoutSession(id: string): Promise<StripeCheckoutSession> {
    try {
      return sessionOf(await this.client.checkout.sessions.retrieve(id));
    } catch (error) {
      throw failureOf(error);
    }
  }
}

/**
 * Verifies `Stripe-Signature` on the exact raw body with stripe.webhooks.constructEvent
 * (HMAC-SHA256 of "<t>.<body>", tolerance 300 s) and returns the event.
 */
export function verifyStripeEvent(rawBody: Buffer, signature: string | undefined, secret: string, nowSeconds?: number): VerifiedEvent {
  if (signature === undefined || signature === '') throw new SignatureError('Stripe-Signature header is missing');
  let event: Stripe.Event;
  try {
    event = Stripe.webhooks.constructEvent(rawBody, signature, secret, WEBHOOK_TOLERANCE_SECONDS, undefined, nowSeconds);
  } catch (error) {
    if (error instanceof Stripe.errors.StripeSignatureVerificationError) throw new SignatureError('Stripe-Signature does not match the body');
    throw new SignatureError('the webhook body is not a Stripe event');
  }
  const object = event.data.object as unknown;
  if (typeof event.id !== 'string' || typeof event.type !== 'string' || typeof object !== 'object' || object === null) {
    throw new SignatureError('the webhook body is not a Stripe event');
  }
  return { id: event.id, type: event.type, object: object as Record<string, unknown> };
}
