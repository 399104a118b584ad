import { call, errorOf, expectInvalidRequest } from './billing-harness';
import { asKey, newAccount, startStripeHarness, STRIPE_SECRET } from './stripe-harness';
import type { StripeHarness } from './stripe-harness';

let h: StripeHarness;
let disabled: StripeHarness;

beforeAll(async () => {
  h = await startStripeHarness('checkout', { timeoutMs: 300 });
  disabled = await startStripeHarness('checkout_off', { disabled: true });
}, 60_000);

afterAll(async () => {
  await h.close();
  await disabled.close();
});

async function post(target: StripeHarness, accountId: string, body: string, kind: 'api' | 'management' = 'management') {
  return call(`${target.billing.publicUrl}/v1/credits/checkout`, { method: 'POST', headers: asKey(accountId, kind), body });
}

describe('POST /v1/credits/checkout', () => {
  it('creates a one-off Stripe payment session for the amount in cents, records it pending, and answers 201', async () => {
    const accountId = await newAccount(h);
    const response = await post(h, accountId, JSON.stringify({ amount_usd: 12.34, success_url: 'https://example.com/ok' }));
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ amount_usd: 12.34, request_id: response.headers.get('x-svc-request-id') });
    expect(response.body.id).toMatch(/^chk_[0-9A-Za-z]{24}$/);
    expect(String(response.body.url)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/pay\/cs_test_/);
    expect(Date.parse(String(response.body.expires_at))).toBeGreaterThan(Date.now());
    const row = (await h.db.query<{ stripe_session_id: string; status: string; amount_cents: number; credit_micros: string }>(
      'SELECT stripe_session_id, status, amount_cents, credit_micros::text FROM checkout_sessions WHERE id = $1', [response.body.id])).rows[0];
    expect(row).toMatchObject({ status: 'pending', amount_cents: 1234, credit_micros: '12340000' });
    const session = h.stripe.session(row?.stripe_session_id ?? '');
    expect(session).toMatchObject({
      mode: 'payment', amount_total: 1234, currency: 'usd', client_reference_id: accountId,
      metadata: { account_id: accountId, credit_micros: '12340000' }, success_url: 'https://example.com/ok',
      cancel_url: 'http://localhost:8080/dashboard?checkout=cancel', payment_status: 'unpaid',
    });
    const create = h.stripe.requests.filter((r) => r.method === 'POST' && r.path === '/v1/checkout/sessions');
    expect(create.at(-1)?.idempotencyKey).toBe(response.body.id);
  });

  it.each([
    ['an amount below 5', '{"amount_usd": 4.99}', 'amount_usd must be from 5 to 10000'],
    ['an amount above 10,000', '{"amount_usd": 10000.01}', 'amount_usd must be from 5 to 10000'],
    ['a string amount', '{"amount_usd": "20"}', 'amount_usd must be a number'],
    ['no amount', '{}', 'amount_usd is required'],
    ['fractions of a cent', '{"amount_usd": 5.001}', 'whole number of cents'],
    ['an unknown field', '{"amount_usd": 5, "currency": "eur"}', 'unknown field "currency"'],
    ['a non-http success_url', '{"amount_usd": 5, "success_url": "javascript:alert(1)"}', 'success_url must be an http(s) URL'],
    ['a body that is not JSON', '{"amount_usd": 5', 'not valid JSON'],
  ])('rejects %s as 400 invalid_request, before any Stripe call, on every deployment', async (_what, body, message) => {
    for (const target of [h, disabled]) {
      const before = target.stripe.requests.length;
      const response = await post(target, await newAccount(target), body);
      expectInvalidRequest(response, message);
      expect(target.stripe.requests.length).toBe(before);
    }
  });

  it('accepts the bounds 5 and 10,000', async () => {
    const accountId = await newAccount(h);
    expect((await post(h, accountId, '{"amount_usd": 5}')).status).toBe(201);
    expect((await post(h, accountId, '{"amount_usd": 10000}')).status).toBe(201);
  });

  it('is 503 payment_disabled without STRIPE_SECRET_KEY', async () => {
    const response = await post(disabled, await newAccount(disabled), '{"amount_usd": 20}');
    expect(response.status).toBe(503);
    expect(errorOf(response).code).toBe('payment_disabled');
  });

  it.each([
    ['answers 500 (every retry)', 'error500'],
    ['does not answer within STRIPE_TIMEOUT_MS', 'timeout'],
  ] as const)('is 502 payment_error and records nothing when Stripe %s', async (_what, mode) => {
    const accountId = await newAccount(h);
    h.stripe.failNext(mode, Number.POSITIVE_INFINITY);
    try {
      const response = await post(h, accountId, '{"amount_usd": 20}');
      expect(response.status).toBe(502);
      expect(errorOf(response).code).toBe('payment_error');
      expect(JSON.stringify(response.body)).not.toContain(STRIPE_SECRET);
    } finally {
      h.stripe.clearFailures();
    }
    const rows = await h.db.query('SELECT 1 FROM checkout_sessions WHERE account_id = $1', [accountId]);
    expect(rows.rowCount).toBe(0);
  });

  it('recovers from one failed Stripe call by retrying with the same idempotency key (one session)', async () => {
    const accountId = await newAccount(h);
    const before = h.stripe.createdSessions;
    h.stripe.failNext('error500', 1);
    const response = await post(h, accountId, '{"amount_usd": 20}');
    expect(response.status).toBe(201);
    expect(h.stripe.createdSessions).toBe(before + 1);
  });

  it('is 403 wrong_key_type for an API key', async () => {
    const response = await post(h, await newAccount(h), '{"amount_usd": 20}', 'api');
    expect(response.status).toBe(403);
    expect(errorOf(response).code).toBe('wrong_key_type');
  });
});
