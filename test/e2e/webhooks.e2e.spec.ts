import { verifyWebhook } from '@svc/sdk';
import type { WebhookEvent } from '@svc/sdk';
import { redisKeys } from '@svc/contracts';
import { bearer, call, newAccount, newApiKey, waitFor, WebhookReceiver, SETTLING_STACK } from '@svc/test-kit';
import { useStripeStack } from './stripe-stack';

/**
 * Events and signed webhooks through the public edge, on the whole stack (gateways, billing,
 * the ledger worker as its own process): searches that drain the balance and a key's limit
 * produce balance.low and key.limit.threshold, a Stripe purchase credits.purchased, each
 * delivered once to a loopback receiver with a valid signature; a receiver that is down
 * receives everything once it recovers.
 */
const STRIPE_KEY = 'sk_test_fake_webhooks';
const STRIPE_WEBHOOK_SECRET = 'whsec_fake_webhooks';

describe('events and webhooks end to end', () => {
  const receivers: WebhookReceiver[] = [];
  afterAll(async () => {
    for (const receiver of receivers) await receiver.stop();
  });
  const suite = useStripeStack({ secretKey: STRIPE_KEY, webhookSecret: STRIPE_WEBHOOK_SECRET }, (stripe) => ({
    ...SETTLING_STACK, name: 'webhooks', redisDb: 9, gateways: [{}, {}], billingEnv: stripe.billingEnv(),
    workerEnv: { LEDGER_DRAIN_INTERVAL_MS: '100', WEBHOOK_DISPATCH_INTERVAL_MS: '100', WEBHOOK_RETRY_BASE_DELAY_MS: '200', WEBHOOK_RETRY_MAX_DELAY_MS: '1000' },
  }));

  async function receiver(): Promise<WebhookReceiver> {
    const started = await WebhookReceiver.start();
    receivers.push(started);
    return started;
  }

  const events = async (hook: WebhookReceiver, secret: string): Promise<WebhookEvent[]> =>
    Promise.all(hook.accepted().map((r) => verifyWebhook(r.rawBody, r.signature, secret)));

  it('refuses a private address and an API key, and serves the same routes to the dashboard', async () => {
    const { managementKey, session } = await newAccount(suite.gw, 'webhooks-refusals');
    const apiKey = await newApiKey(suite.gw, managementKey);
    for (const url of ['https://10.0.0.1/hook', 'http://169.254.169.254/latest/meta-data', 'https://[fd00::1]/hook']) {
      const refused = await call('POST', `${suite.gw}/v1/webhook-endpoints`, { body: { url, events: ['balance.low'] }, headers: bearer(managementKey) });
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe('invalid_request');
    }
    const wrongKey = await call('GET', `${suite.gw}/v1/events`, { headers: bearer(apiKey.secret) });
    expect(wrongKey.status).toBe(403);
    const created = await call('POST', `${suite.gw}/dashboard/api/webhook-endpoints`, { body: { url: 'https://hooks.example.com/x', events: ['balance.low'] }, headers: session });
    expect(created.status).toBe(201);
    const listed = await call('GET', `${suite.gw}/v1/webhook-endpoints`, { headers: bearer(managementKey) });
    expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([created.body.id]);
    const settings = await call('PATCH', `${suite.gw}/dashboard/api/billing/settings`, { body: { low_balance_threshold_usd: 2 }, headers: session });
    expect(settings.body).toMatchObject({ low_balance_threshold_usd: 2 });
    expect((await call('GET', `${suite.gw}/v1/billing/settings`, { headers: bearer(managementKey) })).body).toMatchObject({ low_balance_threshold_usd: 2 });
  });

  it('searches that drain the balance and a key\'s limit, and a purchase: each event delivered once, signed; a receiver down for a while gets them all after', async () => {
    const { accountId, managementKey } = await newAccount(suite.gw, 'webhooks-money');
    const up = await receiver();
    const down = await receiver();
    down.status = 503;
    const all = ['balance.low', 'key.limit.threshold', 'credits.purchased'];
    const first = await call('POST', `${suite.gw}/v1/webhook-endpoints`, { body: { url: up.url, events: all }, headers: bearer(managementKey) });
    const second = await call('POST', `${suite.gw}/v1/webhook-endpoints`, { body: { url: down.url, events: all }, headers: bearer(managementKey) });
    expect([first.status, second.status]).toEqual([201, 201]);

    // 0.06 USD granted; searches of 0.006 (brave/web) on a key limited to 0.03 a month.
    const grant = await call('POST', `${suite.stack.billing.operatorUrl}/operator/accounts/${accountId}/grants`, { body: { amount_usd: 0.06, reason: 'e2e' }, headers: bearer(suite.stack.operatorToken) });
    expect(grant.status).toBe(201);
    await waitFor('the grant in the spendable balance', async () => ((await suite.redis.get(redisKeys.accountBalance(accountId))) === '60000' ? true : undefined));
    // Set once the balance is above it (setting a threshold above the balance sends one balance.low at once).
    const threshold = await call('PATCH', `${suite.gw}/v1/billing/settings`, { body: { low_balance_threshold_usd: 0.04 }, headers: bearer(managementKey) });
    expect(threshold.status).toBe(200);
    const key = await newApiKey(suite.gw, managementKey, { limit_usd: 0.03, limit_reset: 'monthly' });
    const search = (i: number) => call('POST', `${suite.stack.gateways[i % 2]?.url ?? suite.gw}/v1/search`, { body: { query: `webhooks ${i}`, model: 'brave/web' }, headers: bearer(key.secret) });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await search(i)).status);
    // Five searches fill the limit (and take the balance from 0.06 to 0.03, below 0.04); the sixth is refused.
    expect(statuses).toEqual([200, 200, 200, 200, 200, 402]);
    const secret = String(first.body.secret);
    // The worker writes the searches to the ledger, sees the crossing and sends balance.low.
    await waitFor('balance.low', async () => ((await events(up, secret)).some((e) => e.type === 'balance.low') ? true : undefined), { timeoutMs: 20_000 });
    // Then a purchase (the balance goes back above the threshold).
    const checkout = await call('POST', `${suite.gw}/v1/credits/checkout`, { body: { amount_usd: 5 }, headers: bearer(managementKey) });
    expect(checkout.status).toBe(201);
    const session = [...suite.stripe.sessions.values()].reverse().find((s) => (s.session.metadata as Record<string, string>).account_id === accountId);
    const paid = await suite.stripe.deliver(suite.stripe.event('checkout.session.completed', suite.stripe.completeSession(String(session?.session.id))), { url: `${suite.gw}/v1/credits/webhook` });
    expect(paid.status).toBe(200);

    const seen = await waitFor('all four events at the receiver that is up', async () => {
      const got = await events(up, secret);
      return got.length >= 4 ? got : undefined;
    }, { timeoutMs: 30_000 }).catch(async (error: unknown) => {
      throw new Error(`${String(error)}; received: ${JSON.stringify((await events(up, secret)).map((e) => [e.type, e.data]))}`);
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const got = await events(up, secret);
    expect(got.map((e) => e.type).sort()).toEqual(['balance.low', 'credits.purchased', 'key.limit.threshold', 'key.limit.threshold']);
    expect(got).toHaveLength(seen.length);
    const limits = got.filter((e) => e.type === 'key.limit.threshold').map((e) => e.data);
    expect(limits).toEqual(expect.arrayContaining([
      expect.objectContaining({ key_id: key.id, percent: 80, limit_usd: 0.03 }),
      expect.objectContaining({ key_id: key.id, percent: 100, limit_usd: 0.03, usage_usd: 0.03 }),
    ]));
    const low = got.find((e) => e.type === 'balance.low')?.data as { balance_usd: number; threshold_usd: number };
    expect(low.threshold_usd).toBe(0.04);
    expect([0.036, 0.03]).toContain(low.balance_usd);
    // The worker had written every search before the purchase: the balance after it is exact.
    const purchased = got.find((e) => e.type === 'credits.purchased')?.data as { amount_usd: number; balance_usd: number };
    expect(purchased).toMatchObject({ amount_usd: 5 });
    // balance_usd is the durable balance after the credit: 5.03 once the worker has written every search.
    expect([5.03, 5.036]).toContain(purchased.balance_usd);
    const listed = await call('GET', `${suite.gw}/v1/events?limit=100`, { headers: bearer(managementKey) });
    expect(new Set(listed.body.data.map((e: { id: string }) => e.id))).toEqual(new Set(got.map((e) => e.id)));

    // The receiver that was down: failed attempts, then, once up, every event, none lost.
    await waitFor('failed attempts at the down receiver', () => (down.received.length >= 4 ? true : undefined));
    down.status = 200;
    const recovered = await waitFor('every event at the recovered receiver', async () => {
      const ids = new Set((await events(down, String(second.body.secret))).map((e) => e.id));
      return ids.size === got.length ? ids : undefined;
    }, { timeoutMs: 30_000 });
    expect(recovered).toEqual(new Set(got.map((e) => e.id)));
    // A forged or stale signature is refused.
    const sample = up.accepted()[0];
    await expect(verifyWebhook(sample?.rawBody ?? '', sample?.signature, 'whsec_forged')).rejects.toMatchObject({ reason: 'no_matching_signature' });
    await expect(verifyWebhook(sample?.rawBody ?? '', sample?.signature, secret, { nowSeconds: Math.floor(Date.now() / 1000) + 600 })).rejects.toMatchObject({ reason: 'timestamp_outside_tolerance' });
  }, 90_000);
});
