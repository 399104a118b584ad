import { errorOf } from './billing-harness';
import { checkout, moneyOf, newAccount, spendableBecomes, startStripeHarness, WEBHOOK_SECRET } from './stripe-harness';
import type { StripeHarness } from './stripe-harness';

let h: StripeHarness;
/** Test seam: when set, the webhook throws once after its commit for this event id. */
let failAfterCommitFor: string | null = null;

beforeAll(async () => {
  h = await startStripeHarness('webhook', {
    hooks: {
      webhook: {
        afterCommit: async (event) => {
          if (event.id === failAfterCommitFor) {
            failAfterCommitFor = null;
            throw new Error('injected failure after commit');
          }
        },
      },
    },
  });
}, 60_000);

afterAll(async () => {
  await h.close();
});

const TWENTY_FIVE = 25_000_000;

async function paidSession(amountUsd = 25): Promise<{ accountId: string; sessionId: string }> {
  const accountId = await newAccount(h);
  const { stripeSessionId } = await checkout(h, accountId, amountUsd);
  h.stripe.completeSession(stripeSessionId);
  return { accountId, sessionId: stripeSessionId };
}

async function expectOneGrant(accountId: string, micros = TWENTY_FIVE): Promise<void> {
  const money = await moneyOf(h, accountId);
  expect(money).toMatchObject({ purchases: 1, purchasedMicros: micros, grants: 1, balanceMicros: micros });
  await spendableBecomes(h, accountId, micros);
}

describe('POST /v1/credits/webhook grants a paid session exactly once', () => {
  it('the same signed event delivered 10 times in a row grants once', async () => {
    const { accountId, sessionId } = await paidSession();
    const event = h.stripe.event('checkout.session.completed', h.stripe.session(sessionId));
    for (let i = 0; i < 10; i += 1) {
      const delivery = await h.stripe.deliver(event, { url: h.webhookUrl });
      expect(delivery.status).toBe(200);
    }
    await expectOneGrant(accountId);
  });

  it('the same signed event delivered 10 times concurrently grants once', async () => {
    const { accountId, sessionId } = await paidSession();
    const event = h.stripe.event('checkout.session.completed', h.stripe.session(sessionId));
    const deliveries = await Promise.all(Array.from({ length: 10 }, () => h.stripe.deliver(event, { url: h.webhookUrl })));
    expect(deliveries.map((d) => d.status)).toEqual(Array(10).fill(200));
    await expectOneGrant(accountId);
  });

  it('ten different events for one session, concurrently, grant once', async () => {
    const { accountId, sessionId } = await paidSession();
    const events = Array.from({ length: 10 }, (_, i) =>
      h.stripe.event(i % 2 === 0 ? 'checkout.session.completed' : 'checkout.session.async_payment_succeeded', h.stripe.session(sessionId)));
    const deliveries = await Promise.all(events.map((event) => h.stripe.deliver(event, { url: h.webhookUrl })));
    expect(deliveries.map((d) => d.status)).toEqual(Array(10).fill(200));
    await expectOneGrant(accountId);
  });

  it.each([
    ['completed first', ['checkout.session.completed', 'checkout.session.async_payment_succeeded']],
    ['async_payment_succeeded first', ['checkout.session.async_payment_succeeded', 'checkout.session.completed']],
  ])('completed and async_payment_succeeded for one session grant once (%s)', async (_order, types) => {
    const accountId = await newAccount(h);
    const { stripeSessionId } = await checkout(h, accountId, 25);
    // An async payment method: the page completes unpaid, the bank confirms later.
    h.stripe.completeSession(stripeSessionId, { paid: false });
    const unpaidSnapshot = h.stripe.session(stripeSessionId);
    h.stripe.asyncPaymentSucceeded(stripeSessionId);
    for (const type of types) {
      const snapshot = type === 'checkout.session.completed' ? unpaidSnapshot : h.stripe.session(stripeSessionId);
      expect((await h.stripe.deliver(h.stripe.event(type, snapshot), { url: h.webhookUrl })).status).toBe(200);
    }
    await expectOneGrant(accountId);
  });

  it('completed while unpaid, then async_payment_failed: no credit, the session is failed', async () => {
    const accountId = await newAccount(h);
    const { id, stripeSessionId } = await checkout(h, accountId, 10);
    expect((await h.stripe.deliver(h.stripe.event('checkout.session.completed', h.stripe.completeSession(stripeSessionId, { paid: false })), { url: h.webhookUrl })).status).toBe(200);
    expect((await h.stripe.deliver(h.stripe.event('checkout.session.async_payment_failed', h.stripe.asyncPaymentFailed(stripeSessionId)), { url: h.webhookUrl })).status).toBe(200);
    expect(await moneyOf(h, accountId)).toMatchObject({ purchases: 0, grants: 0, balanceMicros: 0 });
    const row = await h.db.query<{ status: string }>('SELECT status FROM checkout_sessions WHERE id = $1', [id]);
    expect(row.rows[0]?.status).toBe('failed');
  });

  it('an expired session closes without credit', async () => {
    const accountId = await newAccount(h);
    const { id, stripeSessionId } = await checkout(h, accountId, 10);
    expect((await h.stripe.deliver(h.stripe.event('checkout.session.expired', h.stripe.expireSession(stripeSessionId)), { url: h.webhookUrl })).status).toBe(200);
    expect(await moneyOf(h, accountId)).toMatchObject({ purchases: 0, grants: 0 });
    expect((await h.db.query<{ status: string }>('SELECT status FROM checkout_sessions WHERE id = $1', [id])).rows[0]?.status).toBe('expired');
  });

  it('a completed event whose session is not paid on re-read grants nothing (the event is not trusted)', async () => {
    const accountId = await newAccount(h);
    const { stripeSessionId } = await checkout(h, accountId, 10);
    // A forged-looking snapshot saying "paid", while Stripe says the session is still open and unpaid.
    const snapshot = { ...h.stripe.session(stripeSessionId), payment_status: 'paid', status: 'complete' };
    expect((await h.stripe.deliver(h.stripe.event('checkout.session.completed', snapshot), { url: h.webhookUrl })).status).toBe(200);
    expect(await moneyOf(h, accountId)).toMatchObject({ purchases: 0, grants: 0 });
  });
});

describe('POST /v1/credits/webhook rejects what Stripe did not sign', () => {
  const now = (): number => Math.floor(Date.now() / 1000);

  it.each([
    ['a tampered body', (payload: string) => ({ body: payload.replace('"livemode": false', '"livemode": true ') })],
    ['a wrong secret', () => ({ secret: 'whsec_not_the_endpoint_secret' })],
    ['a missing Stripe-Signature header', () => ({ unsigned: true })],
    ['a timestamp older than the 300 s tolerance', () => ({ timestamp: now() - 301 })],
    ['the body re-serialised as JSON', (payload: string) => ({ body: JSON.stringify(JSON.parse(payload)) })],
  ])('%s is 400 invalid_request and grants nothing', async (_what, change) => {
    const { accountId, sessionId } = await paidSession();
    const event = h.stripe.event('checkout.session.completed', h.stripe.session(sessionId));
    const delivery = await h.stripe.deliver(event, { url: h.webhookUrl, ...change(event.payload) });
    expect(delivery.status).toBe(400);
    expect(errorOf({ status: delivery.status, headers: new Headers(), body: JSON.parse(delivery.body) as Record<string, unknown> }).code).toBe('invalid_request');
    expect(await moneyOf(h, accountId)).toMatchObject({ purchases: 0, grants: 0, balanceMicros: 0 });
    // The genuine delivery still works afterwards.
    expect((await h.stripe.deliver(event, { url: h.webhookUrl, secret: WEBHOOK_SECRET })).status).toBe(200);
    await expectOneGrant(accountId);
  });
});

describe('POST /v1/credits/webhook after a failure past its commit', () => {
  it("answers Stripe's retry 2xx and still grants once", async () => {
    const { accountId, sessionId } = await paidSession();
    const event = h.stripe.event('checkout.session.completed', h.stripe.session(sessionId));
    failAfterCommitFor = event.id;
    const first = await h.stripe.deliver(event, { url: h.webhookUrl });
    expect(first.status).toBe(500);
    expect(first.body).not.toContain('injected');
    // The grant committed before the failure.
    expect(await moneyOf(h, accountId)).toMatchObject({ purchases: 1, grants: 1 });
    const retry = await h.stripe.deliver(event, { url: h.webhookUrl });
    expect(retry.status).toBe(200);
    await expectOneGrant(accountId);
  });
});

describe('refunds and disputes take purchased credit back', () => {
  it('a partial refund, repeated and re-sent cumulatively, debits exactly what was refunded; a dispute takes back at most what is left', async () => {
    const { accountId, sessionId } = await paidSession(20);
    await h.stripe.deliver(h.stripe.event('checkout.session.completed', h.stripe.session(sessionId)), { url: h.webhookUrl });
    const refund = h.stripe.event('charge.refunded', h.stripe.refund(sessionId, 500)); // $5 of $20
    for (let i = 0; i < 3; i += 1) expect((await h.stripe.deliver(refund, { url: h.webhookUrl })).status).toBe(200);
    const second = h.stripe.event('charge.refunded', h.stripe.refund(sessionId, 300)); // cumulative $8
    // Delivered twice, plus the older one again after it: cumulative amounts make order harmless.
    expect((await h.stripe.deliver(second, { url: h.webhookUrl })).status).toBe(200);
    expect((await h.stripe.deliver(second, { url: h.webhookUrl })).status).toBe(200);
    const balance = async (): Promise<number> => (await moneyOf(h, accountId)).balanceMicros;
    expect(await balance()).toBe(12_000_000);
    const debits = await h.db.query<{ kind: string; amount_micros: string }>(
      `SELECT kind, amount_micros::text FROM ledger_entries WHERE account_id = $1 AND kind IN ('stripe_refund', 'dispute') ORDER BY created_at`, [accountId]);
    expect(debits.rows).toEqual([{ kind: 'stripe_refund', amount_micros: '-5000000' }, { kind: 'stripe_refund', amount_micros: '-3000000' }]);
    // A dispute for more than is left of the charge takes back only what is left ($12).
    const dispute = h.stripe.event('charge.dispute.created', h.stripe.dispute(sessionId, 2000));
    expect((await h.stripe.deliver(dispute, { url: h.webhookUrl })).status).toBe(200);
    expect((await h.stripe.deliver(dispute, { url: h.webhookUrl })).status).toBe(200);
    expect(await balance()).toBe(0);
    await spendableBecomes(h, accountId, 0);
    const sum = await h.db.query<{ s: string }>('SELECT sum(amount_micros)::text AS s FROM ledger_entries WHERE account_id = $1', [accountId]);
    expect(Number(sum.rows[0]?.s)).toBe(await balance());
  });

  it('a refund for a payment not granted yet is answered non-2xx so Stripe retries it later', async () => {
    const { accountId, sessionId } = await paidSession(10);
    const refund = h.stripe.event('charge.refunded', h.stripe.refund(sessionId, 1000));
    expect((await h.stripe.deliver(refund, { url: h.webhookUrl })).status).toBe(500);
    await h.stripe.deliver(h.stripe.event('checkout.session.completed', h.stripe.session(sessionId)), { url: h.webhookUrl });
    expect((await h.stripe.deliver(refund, { url: h.webhookUrl })).status).toBe(200);
    expect((await moneyOf(h, accountId)).balanceMicros).toBe(0);
  });
});
