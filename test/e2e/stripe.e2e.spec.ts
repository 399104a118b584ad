import { redisKeys } from '@svc/contracts';
import { bearer, call, newAccount, newApiKey, waitFor, useStack, SETTLING_STACK } from '@svc/test-kit';
import { useStripeStack } from './stripe-stack';

/**
 * Buying credits through the public edge: the gateway forwards checkout (management key),
 * the webhook (no key, raw bytes and Stripe-Signature passed through) and usage to billing,
 * which talks to a fake Stripe with the real `stripe` client. Then a mixed run (purchase,
 * searches, a timeout, a refund, a dispute) reconciles to zero drift.
 */
const STRIPE_KEY = 'sk_test_fake_e2e';
const WEBHOOK_SECRET = 'whsec_fake_e2e';

describe('checkout through the gateway on a deployment without Stripe', () => {
  const suite = useStack({ name: 'stripe_off', redisDb: 14, logLevel: 'warn' });

  it('validates the body first (400), then answers 503 payment_disabled', async () => {
    const gw = suite.gw;
    const { managementKey } = await newAccount(gw, 'stripe-off');
    const bad = await call('POST', `${gw}/v1/credits/checkout`, { body: { amount_usd: 10_001 }, headers: bearer(managementKey) });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_request');
    const off = await call('POST', `${gw}/v1/credits/checkout`, { body: { amount_usd: 20 }, headers: bearer(managementKey) });
    expect(off.status).toBe(503);
    expect(off.body.error.code).toBe('payment_disabled');
    expect(off.headers.get('x-svc-request-id')).toBe(off.body.error.request_id);
  });
});

describe('buying credits with Stripe through the gateway, then a mixed run that reconciles', () => {
  const suite = useStripeStack(
    { secretKey: STRIPE_KEY, webhookSecret: WEBHOOK_SECRET },
    (stripe) => ({ ...SETTLING_STACK, name: 'stripe', redisDb: 14, gatewayEnv: { PROVIDER_TIMEOUT_MS: '1000' }, billingEnv: stripe.billingEnv(1000) }),
    { db: true },
  );

  const sessionOf = (accountId: string): string => {
    const found = [...suite.stripe.sessions.values()].reverse().find((s) => (s.session.metadata as Record<string, string>).account_id === accountId);
    if (found === undefined) throw new Error('no Stripe session for the account');
    return String(found.session.id);
  };

  const spendable = async (accountId: string, micros: number): Promise<void> => {
    await waitFor(`spendable balance ${micros}`, async () => ((await suite.redis.get(redisKeys.accountBalance(accountId))) === String(micros) ? true : undefined));
  };

  it('checkout: 400 for a bad amount, 403 for an API key, 502 payment_error when Stripe fails, 201 otherwise', async () => {
    const { accountId, managementKey } = await newAccount(suite.gw, 'stripe');
    const apiKey = await newApiKey(suite.gw, managementKey);
    for (const amount of [4.99, 10_000.01, '20']) {
      const bad = await call('POST', `${suite.gw}/v1/credits/checkout`, { body: { amount_usd: amount }, headers: bearer(managementKey) });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('invalid_request');
    }
    const wrongKey = await call('POST', `${suite.gw}/v1/credits/checkout`, { body: { amount_usd: 20 }, headers: bearer(apiKey.secret) });
    expect(wrongKey.status).toBe(403);
    expect(wrongKey.body.error.code).toBe('wrong_key_type');
    for (const mode of ['error500', 'timeout'] as const) {
      suite.stripe.failNext(mode, Number.POSITIVE_INFINITY);
      const failed = await call('POST', `${suite.gw}/v1/credits/checkout`, { body: { amount_usd: 20 }, headers: bearer(managementKey) });
      suite.stripe.clearFailures();
      expect(failed.status).toBe(502);
      expect(failed.body.error.code).toBe('payment_error');
    }
    const created = await call('POST', `${suite.gw}/v1/credits/checkout`, { body: { amount_usd: 20 }, headers: bearer(managementKey) });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ amount_usd: 20 });
    expect(created.body.id).toMatch(/^chk_/);
    expect(suite.stripe.session(sessionOf(accountId))).toMatchObject({ amount_total: 2000, client_reference_id: accountId });
  });

  it('a mixed run (purchase, searches, a timeout, a refund, a dispute) leaves zero drift and usage equal to the ledger', async () => {
    const { accountId, managementKey } = await newAccount(suite.gw, 'stripe-mixed');
    const apiKey = await newApiKey(suite.gw, managementKey);
    const created = await call('POST', `${suite.gw}/v1/credits/checkout`, { body: { amount_usd: 20 }, headers: bearer(managementKey) });
    expect(created.status).toBe(201);
    const sessionId = sessionOf(accountId);
    const completed = suite.stripe.event('checkout.session.completed', suite.stripe.completeSession(sessionId));
    // Through the gateway, with duplicates: one grant.
    const deliveries = await Promise.all([0, 1, 2].map(() => suite.stripe.deliver(completed, { url: `${suite.gw}/v1/credits/webhook` })));
    expect(deliveries.map((d) => d.status)).toEqual([200, 200, 200]);
    const tampered = await suite.stripe.deliver(completed, { url: `${suite.gw}/v1/credits/webhook`, body: JSON.stringify(JSON.parse(completed.payload)) });
    expect(tampered.status).toBe(400);
    await spendable(accountId, 20_000_000);

    const search = (query: string) => call('POST', `${suite.gw}/v1/search`, { body: { query, model: 'exa/fast', max_results: 10 }, headers: bearer(apiKey.secret) });
    for (const i of [1, 2, 3]) expect((await search(`credits ${i}`)).status).toBe(200);
    const timedOut = await search('slow one sim:exa=timeout');
    expect(timedOut.status).toBe(502);

    await suite.stripe.deliver(suite.stripe.event('charge.refunded', suite.stripe.refund(sessionId, 500)), { url: `${suite.gw}/v1/credits/webhook` });
    const dispute = await suite.stripe.deliver(suite.stripe.event('charge.dispute.created', suite.stripe.dispute(sessionId, 1500)), { url: `${suite.gw}/v1/credits/webhook` });
    expect(dispute.status).toBe(200);

    // Wait for the ledger worker to write every settled search.
    const charged = await waitFor('every search settled in the ledger', async () => {
      const rows = await suite.db.query<{ n: string; s: string | null }>('SELECT count(*)::text AS n, sum(charged_micros)::text AS s FROM settlements WHERE account_id = $1', [accountId]);
      return Number(rows.rows[0]?.n) >= 4 ? Number(rows.rows[0]?.s ?? 0) : undefined;
    }, { timeoutMs: 30_000 });
    expect(charged).toBeGreaterThan(0);
    // The dispute took the account negative: its keys stop spending.
    const negative = -charged;
    await spendable(accountId, negative);
    const refused = await search('after the dispute');
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('insufficient_credits');

    const finance = await call('GET', `${suite.stack.billing.operatorUrl}/operator/finance/reconciliation`, { headers: bearer(suite.stack.operatorToken) });
    expect(finance.status).toBe(200);
    expect(finance.body).toMatchObject({ balanced: true, spendable: { drifting: [] }, ledger: { accounts_off_sum: [] } });
    const recon = await call('GET', `${suite.stack.billing.operatorUrl}/operator/reconciliation?account_id=${accountId}&include=finance`, { headers: bearer(suite.stack.operatorToken) });
    expect(recon.status).toBe(200);
    expect(recon.body.data[0]).toMatchObject({ drift_usd: 0, durable_usd: negative / 1_000_000 });
    // The operator report carries the Stripe side too: every paid session has its purchase.
    expect(recon.body.finance).toMatchObject({ balanced: true, stripe: { purchase_drift_usd: 0, unmatched_sessions: [], unmatched_entries: [] } });

    const usage = await call('GET', `${suite.gw}/v1/usage`, { headers: bearer(managementKey) });
    expect(usage.status).toBe(200);
    const ledger = await suite.db.query<{ s: string }>(`SELECT (-sum(amount_micros))::text AS s FROM ledger_entries WHERE account_id = $1 AND kind = 'search_charge'`, [accountId]);
    expect(Math.round(usage.body.total.cost_usd * 1_000_000)).toBe(Number(ledger.rows[0]?.s));
    expect(usage.body.total.searches).toBe(4);
    const own = await call('GET', `${suite.gw}/v1/usage?group_by=key`, { headers: bearer(apiKey.secret) });
    expect(own.body.data).toEqual([expect.objectContaining({ key_id: apiKey.id, searches: 4 })]);
  });
});
