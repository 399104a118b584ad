import { verifyWebhook } from '@svc/sdk';
import { waitFor, WebhookReceiver } from '@svc/test-kit';
import { createBillingDatabase } from '../src/db/prisma.repository';
import { newId } from '@svc/ids';
import { ProtoLimitReset } from '@svc/grpc';
import pino from 'pino';
import { LedgerDrainService } from '../src/services/settlement/ledger-drain.service';
import { SettlementStreamAdapter } from '../src/services/settlement/settlement-stream.adapter';
import { enqueue, settlementRecord, TestLedgerAppend } from './ledger-fixtures';
import { errorOf, expectInvalidRequest } from './billing-harness';
import type { JsonResponse } from './billing-harness';
import { api as harnessApi, checkout, newAccount, startStripeHarness, startTestWebhookProcessor } from './stripe-harness';
import type { StripeHarness, TestOutbound } from './stripe-harness';

/**
 * Events and webhooks on real PostgreSQL and Redis: billing's /v1 routes in-process, the
 * ledger worker's outbound processors (the code dist/worker.js runs) in-process with short
 * retry delays, the fake Stripe for purchases, and loopback receivers.
 */
const WINDOW_MS = 4_000;
let h: StripeHarness;
let processor: TestOutbound;
let db: ReturnType<typeof createBillingDatabase>;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  h = await startStripeHarness('webhooks', { env: { WEBHOOK_ALLOW_HTTP_AND_LOOPBACK: 'true' } });
  db = createBillingDatabase(h.databaseUrl, () => undefined);
  processor = await startTestWebhookProcessor(h, db, { retryWindowMs: WINDOW_MS });
}, 60_000);

afterAll(async () => {
  await processor?.close();
  await db?.close();
  for (const receiver of receivers) await receiver.stop();
  await h?.close();
});

async function receiver(): Promise<WebhookReceiver> {
  const started = await WebhookReceiver.start();
  receivers.push(started);
  return started;
}

function api(method: string, accountId: string, path: string, body?: unknown, kind: 'api' | 'management' = 'management'): Promise<JsonResponse> {
  return harnessApi(h, method, accountId, path, body, kind);
}

async function endpoint(accountId: string, url: string, events: string[]): Promise<{ id: string; secret: string }> {
  const created = await api('POST', accountId, '/v1/webhook-endpoints', { url, events });
  if (created.status !== 201) throw new Error(`endpoint create: ${created.status} ${JSON.stringify(created.body)}`);
  return { id: created.body.id as string, secret: created.body.secret as string };
}

async function purchase(accountId: string, usd: number): Promise<string> {
  const { stripeSessionId } = await checkout(h, accountId, usd);
  const paid = await h.stripe.deliver(h.stripe.event('checkout.session.completed', h.stripe.completeSession(stripeSessionId)), { url: h.webhookUrl });
  expect(paid.status).toBe(200);
  return stripeSessionId;
}

const eventIds = (list: { rawBody: string }[]): string[] => list.map((r) => (JSON.parse(r.rawBody) as { id: string }).id);

describe('webhook endpoints', () => {
  it('creates (the secret answered once), lists, reads, updates and deletes; only for the owner and a management key', async () => {
    const accountId = await newAccount(h);
    const created = await api('POST', accountId, '/v1/webhook-endpoints', { url: 'https://hooks.example.com/in', events: ['balance.low', 'credits.purchased'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: 'webhook_endpoint', url: 'https://hooks.example.com/in', events: ['balance.low', 'credits.purchased'], enabled: true, disabled_reason: null });
    expect(created.body.id).toMatch(/^whe_[0-9A-Za-z]{24}$/);
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const id = created.body.id as string;
    const read = await api('GET', accountId, `/v1/webhook-endpoints/${id}`);
    expect(read.status).toBe(200);
    expect(read.body.secret).toBeUndefined();
    const listed = await api('GET', accountId, '/v1/webhook-endpoints');
    expect((listed.body.data as { id: string; secret?: string }[]).map((e) => [e.id, e.secret])).toEqual([[id, undefined]]);
    const patched = await api('PATCH', accountId, `/v1/webhook-endpoints/${id}`, { enabled: false, events: ['balance.low'] });
    expect(patched.body).toMatchObject({ enabled: false, events: ['balance.low'] });

    const other = await newAccount(h);
    expect((await api('GET', other, `/v1/webhook-endpoints/${id}`)).status).toBe(404);
    expect((await api('DELETE', other, `/v1/webhook-endpoints/${id}`)).status).toBe(404);
    const withApiKey = await api('GET', accountId, '/v1/webhook-endpoints', undefined, 'api');
    expect(withApiKey.status).toBe(403);
    expect(errorOf(withApiKey).code).toBe('wrong_key_type');

    expect((await api('DELETE', accountId, `/v1/webhook-endpoints/${id}`)).status).toBe(200);
    expect((await api('GET', accountId, `/v1/webhook-endpoints/${id}`)).status).toBe(404);
  });

  it.each([
    ['a private address', { url: 'https://10.1.2.3/in', events: ['balance.low'] }, 'url must not name a private, link-local or reserved address'],
    ['the metadata address', { url: 'http://169.254.169.254/latest', events: ['balance.low'] }, 'url must not name a private, link-local or reserved address'],
    ['a non-http URL', { url: 'ftp://hooks.example.com/in', events: ['balance.low'] }, 'url must be an http(s) URL'],
    ['no events', { url: 'https://hooks.example.com/in', events: [] }, 'events must be a list of distinct event types'],
    ['an unknown event', { url: 'https://hooks.example.com/in', events: ['balance.high'] }, 'events must be a list of distinct event types'],
    ['a repeated event', { url: 'https://hooks.example.com/in', events: ['balance.low', 'balance.low'] }, 'events must be a list of distinct event types'],
    ['no url', { events: ['balance.low'] }, 'url is required'],
  ])('refuses %s as 400 invalid_request', async (_what, body, message) => {
    const response = await api('POST', await newAccount(h), '/v1/webhook-endpoints', body);
    expectInvalidRequest(response, message);
  });
});

describe('events and their delivery', () => {
  it('credits.purchased: one event in GET /v1/events, delivered once, signed with the endpoint secret', async () => {
    const accountId = await newAccount(h);
    const hook = await receiver();
    const { id: endpointId, secret } = await endpoint(accountId, hook.url, ['credits.purchased']);
    await purchase(accountId, 20);
    const delivered = await waitFor('the delivery', () => (hook.accepted().length > 0 ? hook.accepted() : undefined));
    const event = await verifyWebhook(delivered[0]?.rawBody ?? '', delivered[0]?.signature, secret);
    expect(event).toMatchObject({ object: 'event', type: 'credits.purchased', account_id: accountId, data: { amount_usd: 20, balance_usd: 20, source: 'checkout' } });
    const listed = await api('GET', accountId, '/v1/events');
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([{ id: event.id, object: 'event', type: 'credits.purchased', account_id: accountId, created_at: event.created_at, data: event.data }]);
    expect((await api('GET', accountId, `/v1/events/${event.id}`)).body).toMatchObject({ id: event.id, type: 'credits.purchased' });
    expect((await api('GET', await newAccount(h), `/v1/events/${event.id}`)).status).toBe(404);
    // The attempt is recorded: status, duration, the first bytes of the answer.
    // (The receiver answered before the worker committed the attempt: wait for it.)
    const deliveries = await waitFor('the attempt recorded', async () => {
      const read = await api('GET', accountId, `/v1/webhook-endpoints/${endpointId}/deliveries`);
      return (read.body.data as { status: string }[])[0]?.status === 'pending' ? undefined : read;
    });
    expect(deliveries.body.data).toMatchObject([{ event_id: event.id, event_type: 'credits.purchased', status: 'succeeded', attempt_count: 1, attempts: [{ status_code: 200, error: null, response_head: 'ok' }] }]);
    // Nothing more arrives (once).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(hook.received).toHaveLength(1);
    // A forged or stale signature is refused by verifyWebhook.
    await expect(verifyWebhook(delivered[0]?.rawBody ?? '', delivered[0]?.signature, 'whsec_forged')).rejects.toMatchObject({ reason: 'no_matching_signature' });
    await expect(verifyWebhook(delivered[0]?.rawBody ?? '', delivered[0]?.signature, secret, { nowSeconds: Math.floor(Date.now() / 1000) + 3_600 }))
      .rejects.toMatchObject({ reason: 'timestamp_outside_tolerance' });
  });

  it('pages GET /v1/events by cursor, newest first, and filters by type', async () => {
    const accountId = await newAccount(h);
    for (const usd of [5, 6, 7]) await purchase(accountId, usd);
    const first = await api('GET', accountId, '/v1/events?limit=2');
    expect((first.body.data as { data: { amount_usd: number } }[]).map((e) => e.data.amount_usd)).toEqual([7, 6]);
    const second = await api('GET', accountId, `/v1/events?limit=2&cursor=${String(first.body.next_cursor)}`);
    expect((second.body.data as { data: { amount_usd: number } }[]).map((e) => e.data.amount_usd)).toEqual([5]);
    expect(second.body.next_cursor).toBeNull();
    expect((await api('GET', accountId, '/v1/events?type=balance.low')).body.data).toEqual([]);
    expect((await api('GET', accountId, '/v1/events?type=nope')).status).toBe(400);
    expect((await api('GET', accountId, '/v1/events?cursor=!!')).status).toBe(400);
  });

  it('balance.low: once per downward crossing, armed again when the balance is back above', async () => {
    const accountId = await newAccount(h);
    const hook = await receiver();
    const { secret } = await endpoint(accountId, hook.url, ['balance.low']);
    const session = await purchase(accountId, 20);
    const bad = await api('PATCH', accountId, '/v1/billing/settings', { low_balance_threshold_usd: 1.001 });
    expect(bad.status).toBe(400);
    const set = await api('PATCH', accountId, '/v1/billing/settings', { low_balance_threshold_usd: 15 });
    expect(set.body).toMatchObject({ low_balance_threshold_usd: 15 });
    expect((await api('GET', accountId, '/v1/billing/settings')).body).toMatchObject({ low_balance_threshold_usd: 15 });
    // A refund of 10 USD takes the balance to 10: one crossing.
    const refunded = await h.stripe.deliver(h.stripe.event('charge.refunded', h.stripe.refund(session, 1_000)), { url: h.webhookUrl });
    expect(refunded.status).toBe(200);
    const first = await waitFor('balance.low', () => (hook.accepted().length > 0 ? hook.accepted() : undefined));
    expect(await verifyWebhook(first[0]?.rawBody ?? '', first[0]?.signature, secret)).toMatchObject({ type: 'balance.low', data: { balance_usd: 10, threshold_usd: 15 } });
    // Still below: nothing more. Then a purchase lifts it above (armed), a refund drops it again: a second event.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(hook.received).toHaveLength(1);
    const second = await purchase(accountId, 10);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(hook.received).toHaveLength(1);
    await h.stripe.deliver(h.stripe.event('charge.refunded', h.stripe.refund(second, 1_000)), { url: h.webhookUrl });
    await waitFor('a second balance.low', () => (hook.accepted().length === 2 ? true : undefined));
    expect((await api('GET', accountId, '/v1/events?type=balance.low')).body.data).toHaveLength(2);
  });

  it('a receiver down for a while receives every event after it recovers, none lost', async () => {
    const accountId = await newAccount(h);
    const hook = await receiver();
    hook.status = 503;
    const { secret } = await endpoint(accountId, hook.url, ['credits.purchased']);
    for (const usd of [5, 6, 7, 8]) await purchase(accountId, usd);
    await waitFor('failed attempts', () => (hook.received.length >= 8 ? true : undefined));
    hook.status = 200;
    await waitFor('every event accepted', () => (new Set(eventIds(hook.accepted())).size === 4 ? true : undefined), { timeoutMs: WINDOW_MS });
    const events = (await api('GET', accountId, '/v1/events')).body.data as { id: string }[];
    expect(new Set(eventIds(hook.accepted()))).toEqual(new Set(events.map((e) => e.id)));
    for (const accepted of hook.accepted()) await expect(verifyWebhook(accepted.rawBody, accepted.signature, secret)).resolves.toMatchObject({ type: 'credits.purchased' });
  });

  it('rotation: both secrets sign for the overlap; a manual redeliver sends the event again', async () => {
    const accountId = await newAccount(h);
    const hook = await receiver();
    const { id, secret: old } = await endpoint(accountId, hook.url, ['credits.purchased']);
    const rotated = await api('POST', accountId, `/v1/webhook-endpoints/${id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.secret as string;
    expect(fresh).not.toBe(old);
    expect(Date.parse(String(rotated.body.previous_secret_expires_at)) - Date.now()).toBeGreaterThan(23 * 3_600_000);
    await purchase(accountId, 5);
    const [delivered] = await waitFor('the delivery', () => (hook.accepted().length > 0 ? hook.accepted() : undefined));
    expect(delivered?.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    await expect(verifyWebhook(delivered?.rawBody ?? '', delivered?.signature, fresh)).resolves.toBeTruthy();
    await expect(verifyWebhook(delivered?.rawBody ?? '', delivered?.signature, old)).resolves.toBeTruthy();

    const deliveries = (await api('GET', accountId, `/v1/webhook-endpoints/${id}/deliveries`)).body.data as { id: string }[];
    const again = await api('POST', accountId, `/v1/webhook-endpoints/${id}/deliveries/${deliveries[0]?.id ?? ''}/redeliver`);
    expect(again.status).toBe(202);
    await waitFor('the redelivery', () => (hook.accepted().length === 2 ? true : undefined));
    expect(eventIds(hook.accepted())).toEqual([...eventIds([delivered as { rawBody: string }]), ...eventIds([delivered as { rawBody: string }])]);
    expect((await api('POST', accountId, `/v1/webhook-endpoints/${id}/deliveries/whd_AAAAAAAAAAAAAAAAAAAAAAAA/redeliver`)).status).toBe(404);
  });

  it('an endpoint failing for the whole retry window is disabled, and its delivery failed', async () => {
    const accountId = await newAccount(h);
    const hook = await receiver();
    hook.status = 500;
    const { id } = await endpoint(accountId, hook.url, ['credits.purchased']);
    await purchase(accountId, 5);
    const disabled = await waitFor('the endpoint disabled', async () => {
      const read = await api('GET', accountId, `/v1/webhook-endpoints/${id}`);
      return read.body.enabled === false ? read.body : undefined;
    }, { timeoutMs: WINDOW_MS * 3 });
    expect(disabled).toMatchObject({ disabled_reason: 'failing' });
    const deliveries = (await api('GET', accountId, `/v1/webhook-endpoints/${id}/deliveries`)).body.data as { status: string; attempts: { status_code: number }[] }[];
    expect(deliveries[0]?.status).toBe('failed');
    expect(deliveries[0]?.attempts.length).toBeGreaterThan(2);
    expect(deliveries[0]?.attempts.every((a) => a.status_code === 500)).toBe(true);
    // Enabling it again clears the failure.
    const enabled = await api('PATCH', accountId, `/v1/webhook-endpoints/${id}`, { enabled: true });
    expect(enabled.body).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
  });
});

describe('key.limit.threshold', () => {
  it('is sent at 80 % and at 100 % of a key\'s limit, each once per period, from settlements the drain wrote', async () => {
    const accountId = await newAccount(h);
    const hook = await receiver();
    const { secret } = await endpoint(accountId, hook.url, ['key.limit.threshold']);
    const keyId = newId('apiKey');
    const otherKey = newId('apiKey');
    h.accountAdmin.limits.set(keyId, { keyId, accountId, limitMicros: 10_000, limitReset: ProtoLimitReset.LIMIT_RESET_MONTHLY });
    const drain = new LedgerDrainService(new SettlementStreamAdapter(h.redis), new TestLedgerAppend(db), pino({ level: 'silent' }), { batchSize: 100 });
    const settle = async (micros: number, key = keyId): Promise<void> => {
      await enqueue(h.redis, [settlementRecord(accountId, micros, { keyId: key })]);
      await drain.drain();
    };
    // 7,000 of 10,000: nothing. 8,000: 80 %. A key without a limit: nothing.
    await settle(7_000);
    await settle(50_000, otherKey);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(hook.received).toHaveLength(0);
    await settle(1_000);
    const first = await waitFor('80 %', () => (hook.accepted().length === 1 ? hook.accepted() : undefined));
    expect(await verifyWebhook(first[0]?.rawBody ?? '', first[0]?.signature, secret)).toMatchObject({
      type: 'key.limit.threshold', data: { key_id: keyId, percent: 80, limit_usd: 0.01, usage_usd: 0.008, limit_reset: 'monthly' },
    });
    // More spend under 100 %: nothing new. Then 100 %: one event; past it: nothing more.
    await settle(1_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(hook.received).toHaveLength(1);
    await settle(1_000);
    await settle(5_000);
    await waitFor('100 %', () => (hook.accepted().length === 2 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const events = hook.accepted().map((r) => JSON.parse(r.rawBody) as { data: { percent: number } });
    expect(events.map((e) => e.data.percent)).toEqual([80, 100]);
    const notices = await h.db.query('SELECT percent FROM key_limit_notices WHERE key_id = $1 ORDER BY percent', [keyId]);
    expect(notices.rows).toEqual([{ percent: 80 }, { percent: 100 }]);
  });
});
