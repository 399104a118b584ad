import { createServer } from 'node:http';
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

  it("serves a hosted checkout page whose Pay button completes the session, delivers the signed event once and returns to success_url", async () => {
    const received: { body: string; signature: string }[] = [];
    const receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ body: Buffer.concat(chunks).toString('utf8'), signature: String(request.headers['stripe-signature']) });
        response.end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const address = receiver.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const hosted = await FakeStripe.start({ secretKey: 'sk_test_fake_unit', webhookSecret: 'whsec_unit' });
    try {
      hosted.setWebhookUrl(`http://127.0.0.1:${port}/hook`);
      const hostedClient = new Stripe('sk_test_fake_unit', { host: '127.0.0.1', port: Number(new URL(hosted.url).port), protocol: 'http', maxNetworkRetries: 0, telemetry: false });
      const session = await hostedClient.checkout.sessions.create({
        mode: 'payment', success_url: 'https://example.com/back?session={CHECKOUT_SESSION_ID}', cancel_url: 'https://example.com/cancel',
        line_items: [{ quantity: 1, price_data: { currency: 'usd', unit_amount: 2000, product_data: { name: 'credits' } } }],
      });
      const page = await fetch(String(session.url));
      const html = await page.text();
      expect(page.status).toBe(200);
      expect(html).toContain('Pay $20.00');
      expect(html).toContain('href="https://example.com/cancel"');
      for (let i = 0; i < 2; i++) {
        const paid = await fetch(String(session.url), { method: 'POST', redirect: 'manual' });
        expect([paid.status, paid.headers.get('location')]).toEqual([303, `https://example.com/back?session=${session.id}`]);
      }
      expect(received).toHaveLength(1);
      const event = Stripe.webhooks.constructEvent(received[0]?.body ?? '', received[0]?.signature ?? '', 'whsec_unit');
      expect(event.type).toBe('checkout.session.completed');
      expect(hosted.session(session.id)).toMatchObject({ status: 'complete', payment_status: 'paid' });
      expect((await fetch(`${hosted.url}/pay/cs_test_missing`)).status).toBe(404);
    } finally {
      await hosted.stop();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });

  it("answers Stripe's error shapes, which the client raises as typed errors", async () => {
    await expect(client.checkout.sessions.retrieve('cs_test_missing')).rejects.toMatchObject({ type: 'StripeInvalidRequestError', code: 'resource_missing', statusCode: 404 });
    const wrongKey = new Stripe('sk_test_other', { host: '127.0.0.1', port: Number(new URL(fake.url).port), protocol: 'http', maxNetworkRetries: 0 });
    await expect(wrongKey.checkout.sessions.retrieve('cs_test_x')).rejects.toMatchObject({ statusCode: 401 });
    fake.failNext('error500');
    await expect(create('idem-2')).rejects.toMatchObject({ type: 'StripeAPIError', statusCode: 500 });
  });

  describe('saved cards and off-session PaymentIntents', () => {
    const saveCard = async (card?: 'succeeds' | 'declined' | 'authentication_required' | 'processing'): Promise<{ customer: string; paymentMethod: string }> => {
      const customer = await client.customers.create({ metadata: { account_id: 'acct_1' } });
      const session = await client.checkout.sessions.create({
        mode: 'setup', currency: 'usd', customer: customer.id, success_url: 'https://example.com/ok', metadata: { account_id: 'acct_1' },
      });
      expect(session).toMatchObject({ mode: 'setup', status: 'open', payment_status: 'no_payment_required', setup_intent: null, amount_total: null });
      fake.completeSession(session.id, { card });
      const done = await client.checkout.sessions.retrieve(session.id);
      expect(done.status).toBe('complete');
      const setupIntent = await client.setupIntents.retrieve(String(done.setup_intent), { expand: ['payment_method'] });
      expect(setupIntent).toMatchObject({ status: 'succeeded', usage: 'off_session', customer: customer.id });
      const method = setupIntent.payment_method as Stripe.PaymentMethod;
      expect(method.card).toMatchObject({ brand: 'visa' });
      expect((await client.paymentMethods.retrieve(method.id)).customer).toBe(customer.id);
      return { customer: customer.id, paymentMethod: method.id };
    };
    const charge = (saved: { customer: string; paymentMethod: string }, idempotencyKey: string, amount = 2_000) => client.paymentIntents.create({
      amount, currency: 'usd', customer: saved.customer, payment_method: saved.paymentMethod, off_session: true, confirm: true, metadata: { auto_topup_id: idempotencyKey },
    }, { idempotencyKey });

    it('saves a card through a setup session and charges it off-session, once per idempotency key', async () => {
      const saved = await saveCard();
      const first = await charge(saved, 'topup-1');
      const again = await charge(saved, 'topup-1');
      expect(again.id).toBe(first.id);
      expect(first).toMatchObject({ status: 'succeeded', amount: 2_000, amount_received: 2_000, customer: saved.customer, metadata: { auto_topup_id: 'topup-1' } });
      expect((await client.paymentIntents.retrieve(first.id)).status).toBe('succeeded');
      await expect(charge(saved, 'topup-1', 3_000)).rejects.toMatchObject({ type: 'StripeIdempotencyError' });
    });

    it('answers a declined or authentication-requiring card with a 402 card_error carrying the failed PaymentIntent, replayed for the same key', async () => {
      const saved = await saveCard('declined');
      const declined = await charge(saved, 'topup-declined').catch((error: unknown) => error);
      expect(declined).toMatchObject({ type: 'StripeCardError', code: 'card_declined', statusCode: 402 });
      const intent = (declined as { raw: { payment_intent: Stripe.PaymentIntent } }).raw.payment_intent;
      expect(intent.status).toBe('requires_payment_method');
      const replay = await charge(saved, 'topup-declined').catch((error: unknown) => error);
      expect((replay as { raw: { payment_intent: { id: string } } }).raw.payment_intent.id).toBe(intent.id);
      expect([...fake.paymentIntents.values()].filter((p) => p.metadata !== null && (p.metadata as { auto_topup_id?: string }).auto_topup_id === 'topup-declined')).toHaveLength(1);
      fake.setCardBehaviour(saved.paymentMethod, 'authentication_required');
      await expect(charge(saved, 'topup-auth')).rejects.toMatchObject({ type: 'StripeCardError', code: 'authentication_required' });
      fake.setCardBehaviour(saved.paymentMethod, 'succeeds');
      expect((await charge(saved, 'topup-fixed')).status).toBe('succeeded');
    });

    it('leaves a slow payment processing until it settles', async () => {
      const saved = await saveCard('processing');
      const intent = await charge(saved, 'topup-slow');
      expect(intent.status).toBe('processing');
      fake.succeedPaymentIntent(intent.id);
      expect((await client.paymentIntents.retrieve(intent.id)).status).toBe('succeeded');
      expect(fake.refundPaymentIntent(intent.id, 500)).toMatchObject({ amount_refunded: 500, payment_intent: intent.id });
    });

    it('refuses a card saved without a customer', async () => {
      const session = await client.checkout.sessions.create({ mode: 'setup', currency: 'usd', success_url: 'https://example.com/ok' });
      fake.completeSession(session.id);
      const setupIntent = await client.setupIntents.retrieve(String((await client.checkout.sessions.retrieve(session.id)).setup_intent));
      const customer = await client.customers.create({});
      await expect(client.paymentIntents.create({ amount: 1_000, currency: 'usd', customer: customer.id, payment_method: String(setupIntent.payment_method), off_session: true, confirm: true }))
        .rejects.toMatchObject({ type: 'StripeInvalidRequestError', param: 'payment_method' });
    });
  });

  it('signs events so that constructEvent accepts them, and only unchanged', async () => {
    const event = fake.event('checkout.session.completed', { id: 'cs_test_1', object: 'checkout.session' });
    const header = fake.sign(event.payload, 'whsec_unit');
    expect(Stripe.webhooks.constructEvent(event.payload, header, 'whsec_unit').id).toBe(event.id);
    expect(() => Stripe.webhooks.constructEvent(event.payload.replace('cs_test_1', 'cs_test_2'), header, 'whsec_unit')).toThrow();
  });
});
