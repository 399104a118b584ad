import { randomBytes } from 'node:crypto';
import { bearer, call } from '@svc/test-kit';
import type { JsonResponse } from '@svc/test-kit';
import { entryShape, useAuditStack } from './audit-entries';
import type { ExpectedEntry as Expected } from './audit-entries';

/** A parsed JSON answer, as test-kit's call gives it. */
type Body = JsonResponse['body'];

/**
 * billing's management changes in the audit log (docs/api.md, "Audit log"; issue 45, item 8):
 * webhook endpoints created, their URL, events or state changed, their secret rotated, deleted;
 * billing settings and automatic top-up changed; a card setup started. Each is an entry of
 * GET /v1/audit-log, by the management key through the gateway (with the client's address) or
 * by a dashboard session, written in the change's transaction: a refused or empty change makes
 * none, and no entry holds a signing secret or any of the card's data.
 */
const STRIPE_KEY = 'sk_test_fake_audit_billing';
const WEBHOOK_SECRET = 'whsec_fake_audit_billing';
const PASSWORD = 'correct horse battery staple billing audit';

describe('the audit log: billing\'s management changes', () => {
  const suite = useAuditStack('audit_billing', { secretKey: STRIPE_KEY, webhookSecret: WEBHOOK_SECRET });

  it('records endpoints, settings, auto top-up and card setup changes, and nothing secret', async () => {
    const KEY_IP = '203.0.113.9';
    const SESSION_IP = '198.51.100.31';
    const email = `audit-billing-${randomBytes(6).toString('hex')}@example.com`;
    const signup = await call('POST', `${suite.gw}/dashboard/api/signup`, { body: { email, password: PASSWORD }, headers: { 'x-forwarded-for': SESSION_IP } });
    expect(signup.status).toBe(201);
    const accountId = String(signup.body.account_id);
    const cookie = (signup.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const session = { cookie, 'x-csrf-token': String(signup.body.csrf_token), 'x-forwarded-for': SESSION_IP };
    const userId = String((await suite.accountsDb.query('SELECT id FROM users WHERE email = $1', [email])).rows[0]?.id);
    const admin = await call('POST', `${suite.gw}/dashboard/api/management-keys`, { body: { name: 'billing-admin' }, headers: session });
    expect(admin.status).toBe(201);
    const mgmt = { ...bearer(String(admin.body.secret)), 'x-forwarded-for': KEY_IP };
    const asKey = { kind: 'management_key', id: String(admin.body.id) };
    const secrets: string[] = [STRIPE_KEY, WEBHOOK_SECRET, String(admin.body.secret)];
    const expected: Expected[] = [];

    const step = async (method: string, path: string, headers: Record<string, string>, body: unknown, status: number, entry: ((reply: Body) => Expected) | null): Promise<Body> => {
      const reply = await call(method, `${suite.gw}${path}`, { body, headers });
      expect([method, path, reply.status]).toEqual([method, path, status]);
      if (entry !== null) expected.push(entry(reply.body));
      return reply.body as Body;
    };

    // A webhook endpoint: created, its URL and events changed, turned off, its secret rotated, deleted.
    const created = await step('POST', '/v1/webhook-endpoints', mgmt, { url: 'https://hooks.example.com/in', events: ['balance.low'] }, 201, (r) => ({
      action: 'webhook_endpoint.create', actor: asKey, client_address: KEY_IP, target_id: String(r.id),
      changes: { url: { before: null, after: 'https://hooks.example.com/in' }, events: { before: null, after: ['balance.low'] }, enabled: { before: null, after: true } },
    }));
    const endpointId = String(created.id);
    secrets.push(String(created.secret));
    await step('PATCH', `/v1/webhook-endpoints/${endpointId}`, mgmt, { url: 'https://attacker.example.net/in', events: ['balance.low', 'credits.purchased'] }, 200, () => ({
      action: 'webhook_endpoint.update', actor: asKey, client_address: KEY_IP, target_id: endpointId,
      changes: { url: { before: 'https://hooks.example.com/in', after: 'https://attacker.example.net/in' }, events: { before: ['balance.low'], after: ['balance.low', 'credits.purchased'] } },
    }));
    // A change that changes nothing, and a refused one, are not entries.
    await step('PATCH', `/v1/webhook-endpoints/${endpointId}`, mgmt, { events: ['balance.low', 'credits.purchased'] }, 200, null);
    await step('PATCH', `/v1/webhook-endpoints/${endpointId}`, mgmt, { url: 'https://10.0.0.1/in' }, 400, null);
    await step('PATCH', `/v1/webhook-endpoints/${endpointId}`, mgmt, { enabled: false }, 200, () => ({
      action: 'webhook_endpoint.update', actor: asKey, client_address: KEY_IP, target_id: endpointId, changes: { enabled: { before: true, after: false } },
    }));
    const rotated = await step('POST', `/v1/webhook-endpoints/${endpointId}/rotate-secret`, mgmt, undefined, 200, () => ({
      action: 'webhook_endpoint.rotate_secret', actor: asKey, client_address: KEY_IP, target_id: endpointId,
      changes: { secret: { before: 'previous secret', after: 'new secret' } },
    }));
    secrets.push(String(rotated.secret));
    await step('DELETE', `/v1/webhook-endpoints/${endpointId}`, mgmt, undefined, 200, () => ({
      action: 'webhook_endpoint.delete', actor: asKey, client_address: KEY_IP, target_id: endpointId, changes: { deleted: { before: false, after: true } },
    }));
    await step('DELETE', `/v1/webhook-endpoints/${endpointId}`, mgmt, undefined, 404, null);

    // A session's endpoint (the dashboard, relayed by account-admin).
    const fromDashboard = await step('POST', '/dashboard/api/webhook-endpoints', session, { url: 'https://hooks.example.com/dash', events: ['credits.purchased'] }, 201, (r) => ({
      action: 'webhook_endpoint.create', actor: { kind: 'session', id: userId }, client_address: SESSION_IP, target_id: String(r.id),
      changes: { url: { before: null, after: 'https://hooks.example.com/dash' }, events: { before: null, after: ['credits.purchased'] }, enabled: { before: null, after: true } },
    }));
    secrets.push(String(fromDashboard.secret));

    // Billing settings: the low-balance threshold set; a refused value and an unchanged one are not entries.
    await step('PATCH', '/v1/billing/settings', mgmt, { low_balance_threshold_usd: 15 }, 200, () => ({
      action: 'billing_settings.update', actor: asKey, client_address: KEY_IP, target_id: accountId, changes: { low_balance_threshold_usd: { before: null, after: 15 } },
    }));
    await step('PATCH', '/v1/billing/settings', mgmt, { low_balance_threshold_usd: 15 }, 200, null);
    await step('PATCH', '/v1/billing/settings', mgmt, { low_balance_threshold_usd: 1.001 }, 400, null);

    // A card setup started (a person saves the card on Stripe's page), then automatic top-up turned on at the cap.
    const setup = await step('POST', '/v1/billing/auto-topup/setup', mgmt, {}, 201, null);
    const stripeSession = [...suite.stripe.sessions.values()].map((s) => s.session).find((s) => s.url === setup.url);
    expect(stripeSession).toBeDefined();
    expected.push({
      action: 'card_setup.start', actor: asKey, client_address: KEY_IP, target_id: String(stripeSession?.id), changes: { status: { before: null, after: 'pending' } },
    });
    const completed = suite.stripe.event('checkout.session.completed', suite.stripe.completeSession(String(stripeSession?.id)));
    const delivered = await call('POST', `${suite.gw}/v1/credits/webhook`, {
      raw: completed.payload, headers: { 'stripe-signature': suite.stripe.sign(completed.payload, WEBHOOK_SECRET), 'content-type': 'application/json' },
    });
    expect(delivered.status).toBe(200);
    const card = suite.stripe.setupIntents.get(String(suite.stripe.session(String(stripeSession?.id)).setup_intent));
    secrets.push(String(card?.payment_method), '4242');
    await step('PATCH', '/v1/billing/settings', mgmt, { auto_topup: { enabled: true, threshold_usd: 10, amount_usd: 20, monthly_cap_usd: 10_000 } }, 200, () => ({
      action: 'billing_settings.update', actor: asKey, client_address: KEY_IP, target_id: accountId,
      changes: {
        'auto_topup.enabled': { before: false, after: true }, 'auto_topup.threshold_usd': { before: null, after: 10 },
        'auto_topup.amount_usd': { before: null, after: 20 }, 'auto_topup.monthly_cap_usd': { before: null, after: 10_000 },
      },
    }));
    await step('PATCH', '/v1/billing/settings', mgmt, { auto_topup: { amount_usd: 5, monthly_cap_usd: 1 } }, 400, null);
    await step('PATCH', '/dashboard/api/billing/settings', session, { low_balance_threshold_usd: null, auto_topup: { enabled: false } }, 200, () => ({
      action: 'billing_settings.update', actor: { kind: 'session', id: userId }, client_address: SESSION_IP, target_id: accountId,
      changes: { low_balance_threshold_usd: { before: 15, after: null }, 'auto_topup.enabled': { before: true, after: false } },
    }));

    // The log holds exactly these of billing's, newest first (account-admin's own entries, the management key's creation, aside).
    const log = await call('GET', `${suite.gw}/v1/audit-log?limit=100`, { headers: mgmt });
    expect(log.status).toBe(200);
    const billingActions = new Set(expected.map((e) => e.action));
    expect(log.body.data.filter((entry: Body) => billingActions.has(entry.action)).map(entryShape)).toEqual([...expected].reverse());
    // Each action is a filter of its own.
    for (const action of billingActions) {
      const filtered = await call('GET', `${suite.gw}/v1/audit-log?action=${action}`, { headers: mgmt });
      expect([action, filtered.status, filtered.body.data.length]).toEqual([action, 200, expected.filter((e) => e.action === action).length]);
    }

    // No signing secret, no card data, no key anywhere in billing's audit table.
    expect(secrets.filter((s) => s.length < 4)).toEqual([]);
    for (const secret of secrets) {
      const found = await suite.db.query('SELECT count(*)::int AS n FROM audit_entries a WHERE strpos(row_to_json(a)::text, $1) > 0', [secret]);
      expect({ secret: secret.slice(0, 6), n: found.rows[0].n }).toEqual({ secret: secret.slice(0, 6), n: 0 });
    }
    // The search finds what is there: the check can fail.
    expect((await suite.db.query('SELECT count(*)::int AS n FROM audit_entries a WHERE strpos(row_to_json(a)::text, $1) > 0', [endpointId])).rows[0].n).toBeGreaterThan(0);
  }, 120_000);
});
