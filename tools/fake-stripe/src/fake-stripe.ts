import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import Stripe from 'stripe';

/** The API version written on emitted events (informational; the client does not check it). */
export const FAKE_API_VERSION = '2025-09-30.clover';

export type JsonObject = Record<string, unknown>;

/** Injected faults: `error500` answers Stripe's api_error, `timeout` never answers. */
export type FailureMode = 'error500' | 'timeout';

export interface FakeStripeOptions {
  host?: string;
  port?: number;
  /** When set, only this secret key is accepted (401 otherwise); else any `sk_test_` key. */
  secretKey?: string;
  /** Where emitted events go by default (deliver()). */
  webhookUrl?: string;
  /** The endpoint secret events are signed with by default. */
  webhookSecret?: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  idempotencyKey: string | null;
}

export interface FakeEvent {
  id: string;
  type: string;
  /** The exact JSON text delivered (and signed). */
  payload: string;
}

export interface DeliveryOptions {
  url?: string;
  secret?: string;
  /** Unix seconds written in the signature header (default now). */
  timestamp?: number;
  /** Replace the body after signing (a tampered delivery). */
  body?: string;
  /** Send no Stripe-Signature header. */
  unsigned?: boolean;
}

export interface DeliveryResult {
  status: number;
  body: string;
}

interface SessionState {
  session: JsonObject;
  charge: JsonObject | null;
}

/**
 * What a saved card does when it is charged off-session, as Stripe's test cards do:
 * `succeeds` (pm_card_visa), `declined` (pm_card_chargeDeclined: card_declined),
 * `authentication_required` (pm_card_authenticationRequired: the bank wants the customer
 * present), `processing` (the PaymentIntent stays processing until succeedPaymentIntent or
 * failPaymentIntent settles it, as a slow method does).
 */
export type CardBehaviour = 'succeeds' | 'declined' | 'authentication_required' | 'processing';

const CARD_BEHAVIOURS: readonly CardBehaviour[] = ['succeeds', 'declined', 'authentication_required', 'processing'];

interface PaymentMethodState {
  paymentMethod: JsonObject;
  behaviour: CardBehaviour;
}

/** The answer of one API call (kept under its idempotency key). */
type Answer = { status: number; body: JsonObject };

function randomId(prefix: string): string {
  return prefix + randomBytes(18).toString('base64url').replace(/[-_]/g, 'x');
}

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** Stripe's form encoding (`a[b][0][c]=v`) to nested objects; arrays stay objects keyed "0", "1"... */
export function parseStripeForm(text: string): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const path = key.replace(/\]/g, '').split('[');
    let node = out;
    path.forEach((part, index) => {
      if (index === path.length - 1) {
        node[part] = value;
        return;
      }
      const next = node[part];
      if (typeof next !== 'object' || next === null) node[part] = {};
      node = node[part] as JsonObject;
    });
  }
  return out;
}

function stripeError(status: number, type: string, message: string, extra: JsonObject = {}): { status: number; body: JsonObject } {
  return { status, body: { error: { type, message, ...extra } } };
}

function objectAt(value: unknown): JsonObject | null {
  return typeof value === 'object' && value !== null ? (value as JsonObject) : null;
}

/**
 * A small HTTP server the real `stripe` client talks to (host/port/protocol options):
 * Checkout sessions in `payment` and `setup` mode, customers, setup intents, saved payment
 * methods and off-session PaymentIntents, with Stripe's shapes, idempotency keys (every
 * POST) and error bodies (a declined off-session charge is a 402 card_error carrying the
 * PaymentIntent); test controls to move a session (paid, async succeeded/failed, expired),
 * choose what a saved card does when charged, settle a processing PaymentIntent, refund or
 * dispute a charge; and signed webhook events (stripe.webhooks.generateTestHeaderString)
 * delivered to a URL.
 */
export class FakeStripe {
  readonly sessions = new Map<string, SessionState>();
  readonly customers = new Map<string, JsonObject>();
  readonly setupIntents = new Map<string, JsonObject>();
  readonly paymentMethods = new Map<string, PaymentMethodState>();
  /** Every PaymentIntent created (idempotent replays not counted), by id. */
  readonly paymentIntents = new Map<string, JsonObject>();
  readonly requests: RecordedRequest[] = [];
  private readonly idempotent = new Map<string, { fingerprint: string } & Answer>();
  private readonly intentCharges = new Map<string, JsonObject>();
  private readonly sockets = new Set<Socket>();
  private failure: { mode: FailureMode; remaining: number } | null = null;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly options: FakeStripeOptions,
  ) {}

  static async start(options: FakeStripeOptions = {}): Promise<FakeStripe> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('fake stripe has no TCP address');
    const fake = new FakeStripe(server, `http://${options.host ?? '127.0.0.1'}:${address.port}`, options);
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      fake.route(request, response).catch(() => {
        if (!response.headersSent) response.statusCode = 500;
        response.end();
      });
    });
    const sockets = fake.sockets;
    server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    return fake;
  }

  /**
   * The environment that points billing at this fake: STRIPE_API_BASE, the secret key and the
   * webhook secret it was started with, and STRIPE_TIMEOUT_MS when given.
   */
  billingEnv(timeoutMs?: number): Record<string, string> {
    const env: Record<string, string> = { STRIPE_API_BASE: this.url };
    if (this.options.secretKey !== undefined) env.STRIPE_SECRET_KEY = this.options.secretKey;
    if (this.options.webhookSecret !== undefined) env.STRIPE_WEBHOOK_SECRET = this.options.webhookSecret;
    if (timeoutMs !== undefined) env.STRIPE_TIMEOUT_MS = String(timeoutMs);
    return env;
  }

  /** The next `count` API calls fail this way (Infinity: until clearFailures). */
  failNext(mode: FailureMode, count = 1): void {
    this.failure = { mode, remaining: count };
  }

  clearFailures(): void {
    this.failure = null;
  }

  /** Number of Checkout sessions created (idempotent replays not counted). */
  get createdSessions(): number {
    return this.sessions.size;
  }

  session(id: string): JsonObject {
    const state = this.sessions.get(id);
    if (state === undefined) throw new Error(`no fake session ${id}`);
    return state.session;
  }

  // ---- state changes (what the customer or the bank did) ----

  /**
   * The customer finished the page: paid at once (card), or unpaid while an async method
   * settles. A `setup` session saves a card instead: a succeeded SetupIntent and a payment
   * method attached to the session's customer, which does `card` when charged off-session.
   */
  completeSession(id: string, { paid = true, card = 'succeeds' }: { paid?: boolean; card?: CardBehaviour } = {}): JsonObject {
    const state = this.state(id);
    if (state.session.mode === 'setup') {
      if (state.session.status !== 'complete') this.saveCard(state.session, card);
      return state.session;
    }
    state.session.status = 'complete';
    if (paid) this.markPaid(state);
    return state.session;
  }

  /** What the saved card `paymentMethodId` does at its next off-session charges. */
  setCardBehaviour(paymentMethodId: string, behaviour: CardBehaviour): void {
    const state = this.paymentMethods.get(paymentMethodId);
    if (state === undefined) throw new Error(`no fake payment method ${paymentMethodId}`);
    state.behaviour = behaviour;
  }

  paymentIntent(id: string): JsonObject {
    const intent = this.paymentIntents.get(id);
    if (intent === undefined) throw new Error(`no fake payment intent ${id}`);
    return intent;
  }

  /** A processing PaymentIntent's payment arrived: succeeded, with its charge. */
  succeedPaymentIntent(id: string): JsonObject {
    const intent = this.paymentIntent(id);
    if (intent.status !== 'succeeded') this.chargeIntent(intent);
    return intent;
  }

  /** A processing PaymentIntent's payment failed (`code`, e.g. card_declined): back to requires_payment_method. */
  failPaymentIntent(id: string, code = 'card_declined'): JsonObject {
    const intent = this.paymentIntent(id);
    if (intent.status !== 'succeeded') this.declineIntent(intent, code);
    return intent;
  }

  /** Refunds `cents` more of a succeeded PaymentIntent's charge; returns the charge. */
  refundPaymentIntent(id: string, cents: number): JsonObject {
    const charge = this.intentCharges.get(id);
    if (charge === undefined) throw new Error(`fake payment intent ${id} has no charge`);
    const refunded = Math.min(Number(charge.amount), Number(charge.amount_refunded) + cents);
    charge.amount_refunded = refunded;
    charge.refunded = refunded === Number(charge.amount);
    return { ...charge };
  }

  asyncPaymentSucceeded(id: string): JsonObject {
    const state = this.state(id);
    state.session.status = 'complete';
    this.markPaid(state);
    return state.session;
  }

  asyncPaymentFailed(id: string): JsonObject {
    const state = this.state(id);
    state.session.status = 'complete';
    state.session.payment_status = 'unpaid';
    return state.session;
  }

  expireSession(id: string): JsonObject {
    const state = this.state(id);
    state.session.status = 'expired';
    return state.session;
  }

  /** Refunds `cents` more of the session's charge; returns the charge (amount_refunded is cumulative). */
  refund(id: string, cents: number): JsonObject {
    const charge = this.chargeOf(id);
    const refunded = Math.min(Number(charge.amount), Number(charge.amount_refunded) + cents);
    charge.amount_refunded = refunded;
    charge.refunded = refunded === Number(charge.amount);
    return { ...charge };
  }

  /** Opens a dispute on the session's charge (default: the whole amount). */
  dispute(id: string, cents?: number): JsonObject {
    const charge = this.chargeOf(id);
    return {
      id: randomId('dp_'), object: 'dispute', amount: cents ?? Number(charge.amount), charge: charge.id, currency: 'usd',
      payment_intent: charge.payment_intent, reason: 'fraudulent', status: 'needs_response', created: nowSeconds(),
      livemode: false, metadata: {}, is_charge_refundable: false,
    };
  }

  // ---- events ----

  /** An event of `type` whose data.object is a snapshot of the object (a session, charge or dispute). */
  event(type: string, object: JsonObject): FakeEvent {
    const id = randomId('evt_');
    const payload = JSON.stringify({
      id, object: 'event', api_version: FAKE_API_VERSION, created: nowSeconds(), data: { object: structuredClone(object) },
      livemode: false, pending_webhooks: 1, request: { id: null, idempotency_key: null }, type,
    }, null, 2);
    return { id, type, payload };
  }

  /** The Stripe-Signature header for a payload, as Stripe computes it. */
  sign(payload: string, secret: string, timestamp = nowSeconds()): string {
    return Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });
  }

  /** POSTs the event to the webhook URL, signed (unless told otherwise), like Stripe does. */
  async deliver(event: FakeEvent, options: DeliveryOptions = {}): Promise<DeliveryResult> {
    const url = options.url ?? this.options.webhookUrl;
    const secret = options.secret ?? this.options.webhookSecret;
    if (url === undefined || secret === undefined) throw new Error('deliver needs a webhook url and secret');
    const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)' };
    if (options.unsigned !== true) headers['stripe-signature'] = this.sign(event.payload, secret, options.timestamp);
    const response = await fetch(url, { method: 'POST', headers, body: options.body ?? event.payload });
    return { status: response.status, body: await response.text() };
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // ---- HTTP ----

  private state(id: string): SessionState {
    const state = this.sessions.get(id);
    if (state === undefined) throw new Error(`no fake session ${id}`);
    return state;
  }

  private markPaid(state: SessionState): void {
    state.session.payment_status = 'paid';
    if (state.charge !== null) return;
    const paymentIntent = randomId('pi_');
    state.session.payment_intent = paymentIntent;
    const amount = Number(state.session.amount_total);
    state.charge = {
      id: randomId('ch_'), object: 'charge', amount, amount_captured: amount, amount_refunded: 0, captured: true, currency: 'usd',
      paid: true, payment_intent: paymentIntent, refunded: false, status: 'succeeded', livemode: false, created: nowSeconds(), metadata: {},
    };
  }

  private chargeOf(id: string): JsonObject {
    const charge = this.state(id).charge;
    if (charge === null) throw new Error(`fake session ${id} has no charge (not paid)`);
    return charge;
  }

  private async route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const url = new URL(request.url ?? '/', 'http://fake');
    const method = request.method ?? 'GET';
    if (method === 'GET' && url.pathname === '/healthz') {
      this.send(response, { status: 200, body: { status: 'ok' } });
      return;
    }
    if (url.pathname.startsWith('/_fake/')) {
      this.send(response, this.control(method, url.pathname, body));
      return;
    }
    const pay = /^\/pay\/([^/]+)$/.exec(url.pathname);
    if (pay !== null) {
      await this.hostedPage(method, decodeURIComponent(pay[1] ?? ''), response);
      return;
    }
    const idempotencyKey = typeof request.headers['idempotency-key'] === 'string' ? request.headers['idempotency-key'] : null;
    this.requests.push({ method, path: url.pathname, idempotencyKey });
    if (this.failure !== null && this.failure.remaining > 0) {
      this.failure.remaining -= 1;
      if (this.failure.mode === 'timeout') return; // never answers; stop() destroys the socket
      this.send(response, stripeError(500, 'api_error', 'An unknown error occurred (injected by the fake).'));
      return;
    }
    const key = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    const keyOk = key !== undefined && (this.options.secretKey === undefined ? key.startsWith('sk_test_') : key === this.options.secretKey);
    if (!keyOk) {
      this.send(response, stripeError(401, 'invalid_request_error', `Invalid API Key provided: ${key === undefined ? '(none)' : `${key.slice(0, 8)}****`}`));
      return;
    }
    if (method === 'POST' && idempotencyKey !== null) {
      // Stripe keeps an idempotent request's first answer (errors too) and replays it.
      const fingerprint = `${url.pathname}\n${body}`;
      const seen = this.idempotent.get(idempotencyKey);
      if (seen !== undefined) {
        if (seen.fingerprint !== fingerprint) {
          this.send(response, stripeError(400, 'idempotency_error', `Keys for idempotent requests can only be used with the same parameters they were first used with.`));
        } else {
          response.setHeader('idempotent-replayed', 'true');
          this.send(response, { status: seen.status, body: seen.body });
        }
        return;
      }
      const result = this.api(method, url, body);
      if (result.status !== 404) this.idempotent.set(idempotencyKey, { fingerprint, ...result });
      this.send(response, result);
      return;
    }
    this.send(response, this.api(method, url, body));
  }

  /** One API call (after authentication and idempotency). */
  private api(method: string, url: URL, body: string): Answer {
    const path = url.pathname;
    if (method === 'POST') {
      const params = parseStripeForm(body);
      if (path === '/v1/checkout/sessions') return this.createSession(params);
      if (path === '/v1/customers') return this.createCustomer(params);
      if (path === '/v1/payment_intents') return this.createPaymentIntent(params);
    }
    if (method === 'GET') {
      const found = /^\/v1\/(checkout\/sessions|customers|setup_intents|payment_methods|payment_intents)\/([^/]+)$/.exec(path);
      if (found !== null) {
        const id = decodeURIComponent(found[2] ?? '');
        const kind = found[1] ?? '';
        const object = kind === 'checkout/sessions' ? this.sessions.get(id)?.session
          : kind === 'customers' ? this.customers.get(id)
            : kind === 'setup_intents' ? this.setupIntents.get(id)
              : kind === 'payment_methods' ? this.paymentMethods.get(id)?.paymentMethod
                : this.paymentIntents.get(id);
        const name = { 'checkout/sessions': 'checkout.session', customers: 'customer', setup_intents: 'setup_intent', payment_methods: 'payment_method', payment_intents: 'payment_intent' }[kind];
        if (object === undefined) return stripeError(404, 'invalid_request_error', `No such ${name ?? kind}: '${id}'`, { code: 'resource_missing', param: 'id' });
        return { status: 200, body: this.expanded(object, url.searchParams) };
      }
    }
    return stripeError(404, 'invalid_request_error', `Unrecognized request URL (${method}: ${path}).`);
  }

  /** `expand[]=payment_method` on a setup intent: the object instead of its id (the one expansion billing may ask for). */
  private expanded(object: JsonObject, query: URLSearchParams): JsonObject {
    const expand = [...query.entries()].filter(([name]) => name.startsWith('expand[')).map(([, value]) => value);
    if (!expand.includes('payment_method') || typeof object.payment_method !== 'string') return object;
    const method = this.paymentMethods.get(object.payment_method);
    return method === undefined ? object : { ...object, payment_method: method.paymentMethod };
  }

  private createCustomer(params: JsonObject): Answer {
    const id = randomId('cus_');
    const customer: JsonObject = {
      id, object: 'customer', created: nowSeconds(), email: params.email ?? null, name: params.name ?? null, description: params.description ?? null,
      livemode: false, metadata: objectAt(params.metadata) ?? {}, invoice_settings: { default_payment_method: null },
    };
    this.customers.set(id, customer);
    return { status: 200, body: customer };
  }

  /**
   * An off-session PaymentIntent confirmed at once (`confirm=true`, `off_session=true`), as
   * billing's automatic top-up makes it. The saved card decides: succeeded (200), processing
   * (200, settled later), or a 402 card_error whose `payment_intent` is the failed intent
   * (status requires_payment_method), exactly as Stripe answers a declined off-session charge.
   */
  private createPaymentIntent(params: JsonObject): Answer {
    const amount = Number(params.amount);
    if (params.amount === undefined) return stripeError(400, 'invalid_request_error', 'Missing required param: amount.', { code: 'parameter_missing', param: 'amount' });
    if (!Number.isSafeInteger(amount) || amount < 50) return stripeError(400, 'invalid_request_error', 'Amount must be at least $0.50 usd', { code: 'amount_too_small', param: 'amount' });
    if (params.currency !== 'usd') return stripeError(400, 'invalid_request_error', 'This fake supports currency=usd only.', { param: 'currency' });
    const customer = typeof params.customer === 'string' ? params.customer : null;
    if (customer !== null && !this.customers.has(customer)) return stripeError(400, 'invalid_request_error', `No such customer: '${customer}'`, { code: 'resource_missing', param: 'customer' });
    const methodId = typeof params.payment_method === 'string' ? params.payment_method : null;
    const method = methodId === null ? undefined : this.paymentMethods.get(methodId);
    if (methodId !== null && method === undefined) return stripeError(400, 'invalid_request_error', `No such PaymentMethod: '${methodId}'`, { code: 'resource_missing', param: 'payment_method' });
    if (method !== undefined && method.paymentMethod.customer !== customer) {
      return stripeError(400, 'invalid_request_error', 'The provided PaymentMethod was previously used with a PaymentIntent without Customer attachment, shared with a connected account without Customer attachment, or was detached from a Customer. It may not be used again.', { param: 'payment_method' });
    }
    const id = randomId('pi_');
    const intent: JsonObject = {
      id, object: 'payment_intent', amount, amount_received: 0, amount_capturable: 0, capture_method: 'automatic', confirmation_method: 'automatic',
      client_secret: `${id}_secret_${randomBytes(12).toString('hex')}`, created: nowSeconds(), currency: 'usd', customer, description: params.description ?? null,
      last_payment_error: null, latest_charge: null, livemode: false, metadata: objectAt(params.metadata) ?? {}, next_action: null,
      payment_method: methodId, payment_method_types: ['card'], setup_future_usage: null, status: 'requires_confirmation',
    };
    this.paymentIntents.set(id, intent);
    if (params.confirm !== 'true') return { status: 200, body: structuredClone(intent) };
    if (method === undefined) {
      intent.status = 'requires_payment_method';
      return { status: 200, body: structuredClone(intent) };
    }
    switch (method.behaviour) {
      case 'succeeds':
        this.chargeIntent(intent);
        return { status: 200, body: structuredClone(intent) };
      case 'processing':
        intent.status = 'processing';
        this.emit('payment_intent.processing', intent);
        return { status: 200, body: structuredClone(intent) };
      case 'declined':
      case 'authentication_required': {
        const code = method.behaviour === 'declined' ? 'card_declined' : 'authentication_required';
        this.declineIntent(intent, code);
        const error = intent.last_payment_error as JsonObject;
        return stripeError(402, 'card_error', String(error.message), {
          code, decline_code: error.decline_code, charge: error.charge ?? null, payment_intent: structuredClone(intent), payment_method: structuredClone(method.paymentMethod),
          doc_url: `https://stripe.com/docs/error-codes/${code.replace(/_/g, '-')}`,
        });
      }
      default: {
        const unreachable: never = method.behaviour;
        return unreachable;
      }
    }
  }

  private chargeIntent(intent: JsonObject): void {
    const amount = Number(intent.amount);
    const charge: JsonObject = {
      id: randomId('ch_'), object: 'charge', amount, amount_captured: amount, amount_refunded: 0, captured: true, currency: 'usd',
      paid: true, payment_intent: intent.id, refunded: false, status: 'succeeded', livemode: false, created: nowSeconds(), metadata: intent.metadata,
    };
    this.intentCharges.set(String(intent.id), charge);
    Object.assign(intent, { status: 'succeeded', amount_received: amount, latest_charge: charge.id, last_payment_error: null });
    this.emit('payment_intent.succeeded', intent);
  }

  private declineIntent(intent: JsonObject, code: string): void {
    const message = code === 'authentication_required' ? 'Your card was declined. This transaction requires authentication.' : 'Your card was declined.';
    intent.status = 'requires_payment_method';
    intent.last_payment_error = {
      type: 'card_error', code, decline_code: code === 'card_declined' ? 'generic_decline' : code, message,
      charge: code === 'card_declined' ? randomId('ch_') : null, payment_method: intent.payment_method,
    };
    this.emit('payment_intent.payment_failed', intent);
  }

  /** A setup session completed: a customer's saved card (payment method) and its succeeded SetupIntent. */
  private saveCard(session: JsonObject, behaviour: CardBehaviour): void {
    const customer = typeof session.customer === 'string' ? session.customer : null;
    const last4 = { succeeds: '4242', declined: '0002', authentication_required: '3155', processing: '1881' }[behaviour];
    const paymentMethod: JsonObject = {
      id: randomId('pm_'), object: 'payment_method', type: 'card', created: nowSeconds(), customer, livemode: false, metadata: {},
      billing_details: { address: null, email: null, name: null, phone: null },
      card: { brand: 'visa', last4, exp_month: 12, exp_year: new Date().getUTCFullYear() + 3, country: 'US', funding: 'credit' },
    };
    this.paymentMethods.set(String(paymentMethod.id), { paymentMethod, behaviour });
    const setupIntent: JsonObject = {
      id: randomId('seti_'), object: 'setup_intent', created: nowSeconds(), customer, livemode: false, metadata: session.metadata,
      payment_method: paymentMethod.id, payment_method_types: ['card'], status: 'succeeded', usage: 'off_session', last_setup_error: null,
    };
    this.setupIntents.set(String(setupIntent.id), setupIntent);
    Object.assign(session, { status: 'complete', setup_intent: setupIntent.id });
  }

  /** Sends an event to the configured webhook URL, as Stripe would on its own (nothing when none is configured). */
  private emit(type: string, object: JsonObject): void {
    if (this.options.webhookUrl === undefined || this.options.webhookSecret === undefined) return;
    void this.deliver(this.event(type, object)).catch(() => undefined);
  }

  private createSession(params: JsonObject): Answer {
    if (params.mode === 'setup') return this.createSetupSession(params);
    for (const name of ['mode', 'success_url', 'line_items']) {
      if (params[name] === undefined) return stripeError(400, 'invalid_request_error', `Missing required param: ${name}.`, { code: 'parameter_missing', param: name });
    }
    if (params.mode !== 'payment') return stripeError(400, 'invalid_request_error', 'This fake supports mode=payment and mode=setup only.', { param: 'mode' });
    const item = objectAt(objectAt(params.line_items)?.['0']);
    const price = objectAt(item?.price_data);
    const unitAmount = Number(price?.unit_amount);
    const quantity = Number(item?.quantity ?? 1);
    if (!Number.isSafeInteger(unitAmount) || !Number.isSafeInteger(quantity) || quantity < 1) {
      return stripeError(400, 'invalid_request_error', 'Invalid integer: line_items[0][price_data][unit_amount].', { code: 'parameter_invalid_integer', param: 'line_items[0][price_data][unit_amount]' });
    }
    if (unitAmount < 50) return stripeError(400, 'invalid_request_error', 'The Checkout Session\'s total amount due must add up to at least $0.50 usd', { code: 'amount_too_small' });
    const amount = unitAmount * quantity;
    const session = this.newSession(params, { mode: 'payment', amount_subtotal: amount, amount_total: amount, currency: String(price?.currency ?? 'usd'), payment_status: 'unpaid' });
    return { status: 200, body: session };
  }

  /** mode=setup: saves a card for later off-session charges (no amount, no line items). */
  private createSetupSession(params: JsonObject): Answer {
    if (params.success_url === undefined) return stripeError(400, 'invalid_request_error', 'Missing required param: success_url.', { code: 'parameter_missing', param: 'success_url' });
    if (params.line_items !== undefined) return stripeError(400, 'invalid_request_error', 'You cannot pass `line_items` in `setup` mode.', { param: 'line_items' });
    const customer = typeof params.customer === 'string' ? params.customer : null;
    if (customer !== null && !this.customers.has(customer)) return stripeError(400, 'invalid_request_error', `No such customer: '${customer}'`, { code: 'resource_missing', param: 'customer' });
    const session = this.newSession(params, {
      mode: 'setup', amount_subtotal: null, amount_total: null, currency: typeof params.currency === 'string' ? params.currency : null,
      payment_status: 'no_payment_required', customer, setup_intent: null,
    });
    return { status: 200, body: session };
  }

  private newSession(params: JsonObject, fields: JsonObject): JsonObject {
    const id = randomId('cs_test_');
    const created = nowSeconds();
    const session: JsonObject = {
      id, object: 'checkout.session', after_expiration: null, allow_promotion_codes: null,
      automatic_tax: { enabled: false, liability: null, status: null }, billing_address_collection: null,
      cancel_url: params.cancel_url ?? null, client_reference_id: params.client_reference_id ?? null, client_secret: null,
      consent: null, created, customer: null, customer_creation: 'if_required',
      customer_details: null, customer_email: null, expires_at: created + 24 * 3600, invoice: null, livemode: false, locale: null,
      metadata: objectAt(params.metadata) ?? {}, payment_intent: null, payment_link: null,
      payment_method_types: ['card'], status: 'open', success_url: params.success_url,
      total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 }, ui_mode: 'hosted', url: `${this.url}/pay/${id}`,
      ...fields,
    };
    this.sessions.set(id, { session, charge: null });
    return session;
  }

  /**
   * Test controls over HTTP (for a fake running as its own process):
   * POST /_fake/sessions/:id/{complete|complete_unpaid|async_succeeded|async_failed|expire|refund|dispute}
   * (complete of a setup session takes `{"card": <CardBehaviour>}`) and
   * POST /_fake/payment_intents/:id/{succeed|fail|refund} answer the event they would send
   * (type, id, payload); with `{"deliver": true}` it is also delivered to the configured
   * webhook URL. POST /_fake/payment_methods/:id/behaviour `{"card"}` changes what a saved
   * card does. POST /_fake/failures `{"mode", "count"}`.
   */
  private control(method: string, path: string, body: string): Answer {
    if (method !== 'POST') return stripeError(405, 'invalid_request_error', 'POST only');
    let input: JsonObject;
    try {
      input = body === '' ? {} : (JSON.parse(body) as JsonObject);
    } catch {
      return stripeError(400, 'invalid_request_error', 'body must be JSON');
    }
    if (path === '/_fake/failures') {
      if (input.mode === null) this.clearFailures();
      else this.failNext(input.mode === 'timeout' ? 'timeout' : 'error500', typeof input.count === 'number' ? input.count : 1);
      return { status: 200, body: { ok: true } };
    }
    const card = typeof input.card === 'string' && (CARD_BEHAVIOURS as readonly string[]).includes(input.card) ? (input.card as CardBehaviour) : undefined;
    const behaviour = /^\/_fake\/payment_methods\/([^/]+)\/behaviour$/.exec(path);
    if (behaviour !== null) {
      if (card === undefined || !this.paymentMethods.has(behaviour[1] ?? '')) return stripeError(404, 'invalid_request_error', `no such payment method, or card is not one of ${CARD_BEHAVIOURS.join(', ')}`);
      this.setCardBehaviour(behaviour[1] ?? '', card);
      return { status: 200, body: { ok: true } };
    }
    const intentAction = /^\/_fake\/payment_intents\/([^/]+)\/(succeed|fail|refund)$/.exec(path);
    if (intentAction !== null) {
      const intentId = intentAction[1] ?? '';
      if (!this.paymentIntents.has(intentId)) return stripeError(404, 'invalid_request_error', 'no such payment intent');
      let intentEvent: FakeEvent;
      if (intentAction[2] === 'succeed') intentEvent = this.event('payment_intent.succeeded', this.succeedPaymentIntent(intentId));
      else if (intentAction[2] === 'fail') intentEvent = this.event('payment_intent.payment_failed', this.failPaymentIntent(intentId));
      else intentEvent = this.event('charge.refunded', this.refundPaymentIntent(intentId, typeof input.amount === 'number' ? input.amount : Number(this.paymentIntent(intentId).amount)));
      if (input.deliver === true) void this.deliver(intentEvent).catch(() => undefined);
      return { status: 200, body: { type: intentEvent.type, id: intentEvent.id, payload: intentEvent.payload } };
    }
    const match = /^\/_fake\/sessions\/([^/]+)\/([a-z_]+)$/.exec(path);
    const id = match?.[1] ?? '';
    if (match === null || !this.sessions.has(id)) return stripeError(404, 'invalid_request_error', 'no such session or action');
    const cents = typeof input.amount === 'number' ? input.amount : undefined;
    let event: FakeEvent;
    switch (match[2]) {
      case 'complete': event = this.event('checkout.session.completed', this.completeSession(id, { card })); break;
      case 'complete_unpaid': event = this.event('checkout.session.completed', this.completeSession(id, { paid: false })); break;
      case 'async_succeeded': event = this.event('checkout.session.async_payment_succeeded', this.asyncPaymentSucceeded(id)); break;
      case 'async_failed': event = this.event('checkout.session.async_payment_failed', this.asyncPaymentFailed(id)); break;
      case 'expire': event = this.event('checkout.session.expired', this.expireSession(id)); break;
      case 'refund': event = this.event('charge.refunded', this.refund(id, cents ?? Number(this.chargeOf(id).amount))); break;
      case 'dispute': event = this.event('charge.dispute.created', this.dispute(id, cents)); break;
      default: return stripeError(404, 'invalid_request_error', 'unknown action');
    }
    if (input.deliver === true) void this.deliver(event).catch(() => undefined);
    return { status: 200, body: { type: event.type, id: event.id, payload: event.payload } };
  }

  /**
   * The hosted checkout page a browser is sent to (session.url): GET shows the amount and a
   * Pay button; POST pays (as completeSession), delivers checkout.session.completed to the
   * webhook URL when one is configured, and redirects to the session's success_url.
   */
  private async hostedPage(method: string, id: string, response: ServerResponse): Promise<void> {
    const state = this.sessions.get(id);
    if (state === undefined) {
      response.statusCode = 404;
      response.setHeader('content-type', 'text/plain; charset=utf-8');
      response.end('no such checkout session');
      return;
    }
    const session = state.session;
    if (method === 'POST') {
      if (session.status === 'open') {
        const event = this.event('checkout.session.completed', this.completeSession(id));
        if (this.options.webhookUrl !== undefined && this.options.webhookSecret !== undefined) await this.deliver(event);
      }
      response.statusCode = 303;
      response.setHeader('location', String(session.success_url).replace('{CHECKOUT_SESSION_ID}', id));
      response.end();
      return;
    }
    const cancel = typeof session.cancel_url === 'string' ? session.cancel_url : null;
    const escape = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
    if (session.mode === 'setup') {
      response.statusCode = 200;
      response.setHeader('content-type', 'text/html; charset=utf-8');
      response.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Fake Stripe Checkout</title></head>
<body><main><h1>Fake Stripe Checkout</h1><p>Save a card for later payments (session <code>${escape(id)}</code>).</p>
<form method="post" action="/pay/${encodeURIComponent(id)}"><button type="submit">Save card</button></form>
${cancel === null ? '' : `<p><a href="${escape(cancel)}">Cancel and go back</a></p>`}</main></body></html>`);
      return;
    }
    const amount = (Number(session.amount_total) / 100).toFixed(2);
    response.statusCode = 200;
    response.setHeader('content-type', 'text/html; charset=utf-8');
    response.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Fake Stripe Checkout</title></head>
<body><main><h1>Fake Stripe Checkout</h1><p>Pay <strong>$${amount}</strong> (${escape(String(session.currency))}) for session <code>${escape(id)}</code>.</p>
<form method="post" action="/pay/${encodeURIComponent(id)}"><button type="submit">Pay $${amount}</button></form>
${cancel === null ? '' : `<p><a href="${escape(cancel)}">Cancel and go back</a></p>`}</main></body></html>`);
  }

  /** Where the hosted page (and deliver() without a url) sends events; set once the receiver's URL is known. */
  setWebhookUrl(url: string): void {
    this.options.webhookUrl = url;
  }

  private send(response: ServerResponse, result: { status: number; body: JsonObject }): void {
    response.statusCode = result.status;
    response.setHeader('content-type', 'application/json');
    response.setHeader('request-id', randomId('req_'));
    response.end(JSON.stringify(result.body));
  }
}
