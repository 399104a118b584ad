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
 * POST /v1/checkout/sessions and GET /v1/checkout/sessions/:id with Stripe's shapes,
 * idempotency keys and error bodies; test controls to move a session (paid, async
 * succeeded/failed, expired), refund or dispute its charge; and signed webhook events
 * (stripe.webhooks.generateTestHeaderString) delivered to a URL.
 */
export class FakeStripe {
  readonly sessions = new Map<string, SessionState>();
  readonly requests: RecordedRequest[] = [];
  private readonly idempotent = new Map<string, { fingerprint: string; status: number; body: JsonObject }>();
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

  /** The customer finished the page: paid at once (card), or unpaid while an async method settles. */
  completeSession(id: string, { paid = true } = {}): JsonObject {
    const state = this.state(id);
    state.session.status = 'complete';
    if (paid) this.markPaid(state);
    return state.session;
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
    if (method === 'POST' && url.pathname === '/v1/checkout/sessions') {
      if (idempotencyKey !== null) {
        const seen = this.idempotent.get(idempotencyKey);
        if (seen !== undefined) {
          if (seen.fingerprint !== body) {
            this.send(response, stripeError(400, 'idempotency_error', `Keys for idempotent requests can only be used with the same parameters they were first used with.`));
          } else {
            response.setHeader('idempotent-replayed', 'true');
            this.send(response, { status: seen.status, body: seen.body });
          }
          return;
        }
      }
      const result = this.createSession(parseStripeForm(body));
      if (idempotencyKey !== null) this.idempotent.set(idempotencyKey, { fingerprint: body, ...result });
      this.send(response, result);
      return;
    }
    const match = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(url.pathname);
    if (method === 'GET' && match !== null) {
      const state = this.sessions.get(decodeURIComponent(match[1] ?? ''));
      this.send(response, state === undefined
        ? stripeError(404, 'invalid_request_error', `No such checkout.session: '${match[1] ?? ''}'`, { code: 'resource_missing', param: 'session' })
        : { status: 200, body: state.session });
      return;
    }
    this.send(response, stripeError(404, 'invalid_request_error', `Unrecognized request URL (${method}: ${url.pathname}).`));
  }

  private createSession(params: JsonObject): { status: number; body: JsonObject } {
    for (const name of ['mode', 'success_url', 'line_items']) {
      if (params[name] === undefined) return stripeError(400, 'invalid_request_error', `Missing required param: ${name}.`, { code: 'parameter_missing', param: name });
    }
    if (params.mode !== 'payment') return stripeError(400, 'invalid_request_error', 'This fake supports mode=payment only.', { param: 'mode' });
    const item = objectAt(objectAt(params.line_items)?.['0']);
    const price = objectAt(item?.price_data);
    const unitAmount = Number(price?.unit_amount);
    const quantity = Number(item?.quantity ?? 1);
    if (!Number.isSafeInteger(unitAmount) || !Number.isSafeInteger(quantity) || quantity < 1) {
      return stripeError(400, 'invalid_request_error', 'Invalid integer: line_items[0][price_data][unit_amount].', { code: 'parameter_invalid_integer', param: 'line_items[0][price_data][unit_amount]' });
    }
    if (unitAmount < 50) return stripeError(400, 'invalid_request_error', 'The Checkout Session\'s total amount due must add up to at least $0.50 usd', { code: 'amount_too_small' });
    const id = randomId('cs_test_');
    const created = nowSeconds();
    const amount = unitAmount * quantity;
    const session: JsonObject = {
      id, object: 'checkout.session', after_expiration: null, allow_promotion_codes: null, amount_subtotal: amount, amount_total: amount,
      automatic_tax: { enabled: false, liability: null, status: null }, billing_address_collection: null,
      cancel_url: params.cancel_url ?? null, client_reference_id: params.client_reference_id ?? null, client_secret: null,
      consent: null, created, currency: String(price?.currency ?? 'usd'), customer: null, customer_creation: 'if_required',
      customer_details: null, customer_email: null, expires_at: created + 24 * 3600, invoice: null, livemode: false, locale: null,
      metadata: objectAt(params.metadata) ?? {}, mode: 'payment', payment_intent: null, payment_link: null,
      payment_method_types: ['card'], payment_status: 'unpaid', status: 'open', success_url: params.success_url,
      total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 }, ui_mode: 'hosted', url: `${this.url}/pay/${id}`,
    };
    this.sessions.set(id, { session, charge: null });
    return { status: 200, body: session };
  }

  /**
   * Test controls over HTTP (for a fake running as its own process):
   * POST /_fake/sessions/:id/{complete|complete_unpaid|async_succeeded|async_failed|expire|refund|dispute}
   * answer the event it would send (type, id, payload); with `{"deliver": true}` it is also
   * delivered to the configured webhook URL. POST /_fake/failures `{"mode", "count"}`.
   */
  private control(method: string, path: string, body: string): { status: number; body: JsonObject } {
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
    const match = /^\/_fake\/sessions\/([^/]+)\/([a-z_]+)$/.exec(path);
    const id = match?.[1] ?? '';
    if (match === null || !this.sessions.has(id)) return stripeError(404, 'invalid_request_error', 'no such session or action');
    const cents = typeof input.amount === 'number' ? input.amount : undefined;
    let event: FakeEvent;
    switch (match[2]) {
      case 'complete': event = this.event('checkout.session.completed', this.completeSession(id)); break;
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
    const amount = (Number(session.amount_total) / 100).toFixed(2);
    const cancel = typeof session.cancel_url === 'string' ? session.cancel_url : null;
    const escape = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
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
