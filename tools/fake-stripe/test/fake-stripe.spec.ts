import Stripe from 'stripe';
import { FakeStripe, parseStripeForm } from '../src';

describe('parseStripeForm', () => {
  it("reads Stripe's bracket encoding into nested objects", () => {
    expect(parseStripeForm('mode=payment&line_items[0][quantity]=1&line_items[0][price_data][unit_amount]=500&metadata[account_id]=acct_1')).toEqual({
      mode: 'payment', line_items: { 0: { quantity: '1', price_data: { unit_amount: '500' } } }, metadata: { account_id: 'acct_1' },
    });
  });
});

describe('FakeStripe with the real stripe client', () => {
  let fake: FakeStripe;
  let client: Stripe;

  beforeAll(async () => {
    fake = await FakeStripe.start({ secretKey: 'sk_test_fake_unit' });
    const port = Number(new URL(fake.url).port);
    client = new Stripe('sk_test_fake_unit', { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0, telemetry: false });
  });

  afterAll(async () => {
    await fake.stop();
  });

  const create = (idempotencyKey: string) => client.checkout.sessions.create({
    mode: 'payment', success_url: 'https://example.com/ok', client_reference_id: 'acct_1', metadata: { account_id: 'acct_1' },
    line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: 1500, product_data: { name: 'credits' } } }],
  }, { idempotencyKey });

  it('creates and retrieves sessions, replaying an idempotency key', async () => {
    const first = await create('idem-1');
    const again = await create('idem-1');
    expect(again.id).toBe(first.id);
    expect(first).toMatchObject({ object: 'checkout.session', amount_total: 1500, payment_status: 'unpaid', status: 'open', client_reference_id: 'acct_1' });
    fake.completeSession(first.id);
    const paid = await client.checkout.sessions.retrieve(first.id);
    expect(paid).toMatchObject({ payment_status: 'paid', status: 'complete' });
    expect(paid.payment_intent).toMatch(/^pi_/);
  });

  it("answers Stripe's error shapes, which the client raises as typed errors", async () => {
    await expect(client.checkout.sessions.retrieve('cs_test_missing')).rejects.toMatchObject({ type: 'StripeInvalidRequestError', code: 'resource_missing', statusCode: 404 });
    const wrongKey = new Stripe('sk_test_other', { host: '127.0.0.1', port: Number(new URL(fake.url).port), protocol: 'http', maxNetworkRetries: 0 });
    await expect(wrongKey.checkout.sessions.retrieve('cs_test_x')).rejects.toMatchObject({ statusCode: 401 });
    fake.failNext('error500');
    await expect(create('idem-2')).rejects.toMatchObject({ type: 'StripeAPIError', statusCode: 500 });
  });

  it('signs events so that constructEvent accepts them, and only unchanged', async () => {
    const event = fake.event('checkout.session.completed', { id: 'cs_test_1', object: 'checkout.session' });
    const header = fake.sign(event.payload, 'whsec_unit');
    expect(Stripe.webhooks.constructEvent(event.payload, header, 'whsec_unit').id).toBe(event.id);
    expect(() => Stripe.webhooks.constructEvent(event.payload.replace('cs_test_1', 'cs_test_2'), header, 'whsec_unit')).toThrow();
  });
});
