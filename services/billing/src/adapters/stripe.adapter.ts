import Stripe from 'stripe';

/** Stripe's webhook signature tolerance we accept (seconds), the library's documented default. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/** What billing reads of a Checkout session (Stripe's `checkout.session` object). */
export interface StripeCheckoutSession {
  id: string;
  /** payment (a purchase) | setup (a card saved for automatic top-up) */
  mode: string;
  /** A completed setup session's SetupIntent. */
  setupIntentId: string | null;
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

export interface NewSetupSession {
  accountId: string;
  customerId: string;
  successUrl: string;
  cancelUrl: string;
  idempotencyKey: string;
}

/** A card saved through a setup session (what the settings show of it: never the number). */
export interface SavedCard {
  customerId: string;
  paymentMethodId: string;
  brand: string | null;
  last4: string | null;
}

export interface OffSessionPayment {
  customerId: string;
  paymentMethodId: string;
  amountCents: number;
  accountId: string;
  autoTopupId: string;
  creditMicros: number;
  /** The top-up's id: a repeated call (a retry, another worker) is the same PaymentIntent. */
  idempotencyKey: string;
}

/** What billing reads of a PaymentIntent (Stripe's `payment_intent` object). */
export interface StripePaymentIntent {
  id: string;
  /** succeeded | processing | requires_payment_method | requires_action | canceled | ... */
  status: string;
  amountCents: number;
  currency: string;
  customerId: string | null;
  metadata: Record<string, string>;
  /** The last failure's code (card_declined, authentication_required...), when there is one. */
  failureCode: string | null;
}

/**
 * The outcome of an off-session charge: the PaymentIntent Stripe answered, or a card error
 * (declined, authentication required) that carries the failed PaymentIntent.
 */
export type OffSessionOutcome = { kind: 'intent'; intent: StripePaymentIntent } | { kind: 'card_error'; code: string; intent: StripePaymentIntent | null };

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
  /** A Stripe customer for the account (its saved card belongs to it). */
  createCustomer(accountId: string, idempotencyKey: string): Promise<string>;
  createSetupSession(input: NewSetupSession): Promise<StripeCheckoutSession>;
  /** The card a succeeded SetupIntent saved, or null when it has none (not succeeded). */
  retrieveSavedCard(setupIntentId: string): Promise<SavedCard | null>;
  chargeOffSession(input: OffSessionPayment): Promise<OffSessionOutcome>;
  retrievePaymentIntent(id: string): Promise<StripePaymentIntent>;
}

function metadataOf(source: Stripe.Metadata | null | undefined): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const [name, value] of Object.entries(source ?? {})) if (typeof value === 'string') metadata[name] = value;
  return metadata;
}

const idOf = (value: string | { id: string } | null | undefined): string | null => (typeof value === 'string' ? value : (value?.id ?? null));

function intentOf(intent: Stripe.PaymentIntent): StripePaymentIntent {
  return {
    id: intent.id,
    status: intent.status,
    amountCents: intent.amount,
    currency: intent.currency,
    customerId: idOf(intent.customer),
    metadata: metadataOf(intent.metadata),
    failureCode: intent.last_payment_error?.code ?? null,
  };
}

function sessionOf(session: Stripe.Checkout.Session): StripeCheckoutSession {
  const paymentIntent = session.payment_intent;
  const metadata = metadataOf(session.metadata);
  return {
    id: session.id,
    mode: session.mode,
    setupIntentId: typeof session.setup_intent === 'string' ? session.setup_intent : (session.setup_intent?.id ?? null),
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

  async createCustomer(accountId: string, idempotencyKey: string): Promise<string> {
    try {
      const customer = await this.client.customers.create({ metadata: { account_id: accountId } }, { idempotencyKey });
      return customer.id;
    } catch (error) {
      throw failureOf(error);
    }
  }

  async createSetupSession(input: NewSetupSession): Promise<StripeCheckoutSession> {
    try {
      const session = await this.client.checkout.sessions.create(
        {
          mode: 'setup',
          currency: 'usd',
          customer: input.customerId,
          setup_intent_data: { metadata: { account_id: input.accountId } },
          client_reference_id: input.accountId,
          metadata: { account_id: input.accountId, purpose: 'auto_topup' },
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

  async retrieveSavedCard(setupIntentId: string): Promise<SavedCard | null> {
    try {
      const intent = await this.client.setupIntents.retrieve(setupIntentId, { expand: ['payment_method'] });
      const method = intent.payment_method;
      const customerId = idOf(intent.customer);
      if (intent.status !== 'succeeded' || method === null || customerId === null) return null;
      if (typeof method === 'string') return { customerId, paymentMethodId: method, brand: null, last4: null };
      return { customerId, paymentMethodId: method.id, brand: method.card?.brand ?? null, last4: method.card?.last4 ?? null };
    } catch (error) {
      throw failureOf(error);
    }
  }

  async chargeOffSession(input: OffSessionPayment): Promise<OffSessionOutcome> {
    try {
      const intent = await this.client.paymentIntents.create(
        {
          amount: input.amountCents,
          currency: 'usd',
          customer: input.customerId,
          payment_method: input.paymentMethodId,
          off_session: true,
          confirm: true,
          description: 'Automatic top-up of search credits',
          metadata: { account_id: input.accountId, auto_topup_id: input.autoTopupId, credit_micros: String(input.creditMicros) },
        },
        { idempotencyKey: input.idempotencyKey },
      );
      return { kind: 'intent', intent: intentOf(intent) };
    } catch (error) {
      // A declined card is an answer, not a failure to reach Stripe: it carries the failed intent.
      if (error instanceof Stripe.errors.StripeCardError) {
        const raw = (error.raw ?? {}) as { payment_intent?: Stripe.PaymentIntent };
        return { kind: 'card_error', code: error.code ?? 'card_error', intent: raw.payment_intent === undefined ? null : intentOf(raw.payment_intent) };
      }
      throw failureOf(error);
    }
  }

  async retrievePaymentIntent(id: string): Promise<StripePaymentIntent> {
    try {
      return intentOf(await this.client.paymentIntents.retrieve(id));
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
