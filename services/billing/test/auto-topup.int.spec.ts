import { redisKeys } from '@svc/contracts';
import type { SettlementRecord } from '@svc/contracts';
import { verifyWebhook } from '@svc/sdk';
import { waitFor, WebhookReceiver } from '@svc/test-kit';
import pino from 'pino';
import { AutoTopupService, DEFAULT_AUTO_TOPUP_TIMING } from '../src/services/purchases/auto-topup.service';
import { createBillingDatabase } from '../src/db/prisma.repository';
import { LedgerRepository } from '../src/stores/ledger.repository';
import { SpendableBalanceAdapter } from '../src/services/spendable/spendable-balance.adapter';
import { SpendableOutboxService } from '../src/services/spendable/spendable-outbox.service';
import { StripeAdapter } from '../src/adapters/stripe.adapter';
import { call, errorOf, operatorHeaders } from './billing-harness';
import type { JsonResponse } from './billing-harness';
import { settlementRecord, TestLedgerAppend } from './ledger-fixtures';
import { api as harnessApi, autoTopupStores, checkout, newAccount, spendableBecomes, startStripeHarness, startTestWebhookProcessor, STRIPE_SECRET } from './stripe-harness';
import type { StripeHarness, TestOutbound } from './stripe-harness';

/**
 * Automatic top-up on real PostgreSQL and Redis, billing's /v1 routes in-process, the ledger
 * worker's outbound processors (the auto-topup processor evaluates top-ups, as dist/worker.js runs it), and
 * the fake Stripe over HTTP through the official `stripe` client. The fake also sends each
 * PaymentIntent's own webhook event to billing as it answers, so the synchronous answer and
 * the webhook race on every top-up, as they do with Stripe.
 */
const silent = pino({ level: 'silent' });
let h: StripeHarness;
let processor: TestOutbound;
let db: ReturnType<typeof createBillingDatabase>;
let ledger: TestLedgerAppend;
const replicas: { db: ReturnType<typeof createBillingDatabase>; service: AutoTopupService }[] = [];
const receivers: WebhookReceiver[] = [];

function topUpService(database: ReturnType<typeof createBillingDatabase>): AutoTopupService {
  const repository = new LedgerRepository(database.prisma);
  const outbox = new SpendableOutboxService(repository, new SpendableBalanceAdapter(h.redis), silent);
  const stripe = new StripeAdapter({ secretKey: STRIPE_SECRET, apiBase: h.stripe.url, timeoutMs: 2_000 });
  return new AutoTopupService(autoTopupStores(database), stripe, outbox, silent, { ...DEFAULT_AUTO_TOPUP_TIMING, retryAfterMs: 300 });
}

beforeAll(async () => {
  h = await startStripeHarness('auto_topup', { env: { WEBHOOK_ALLOW_HTTP_AND_LOOPBACK: 'true' } });
  h.stripe.setWebhookUrl(h.webhookUrl);
  db = createBillingDatabase(h.databaseUrl, () => undefined);
  ledger = new TestLedgerAppend(db);
  processor = await startTestWebhookProcessor(h, db, { retryWindowMs: 4_000, autoTopups: topUpService(db) });
}, 60_000);

afterAll(async () => {
  await processor?.close();
  for (const replica of replicas) await replica.db.close();
  await db?.close();
  for (const receiver of receivers) await receiver.stop();
  await h?.close();
});

function api(method: string, accountId: string, path: string, body?: unknown, kind: 'api' | 'management' = 'management'): Promise<JsonResponse> {
  return harnessApi(h, method, accountId, path, body, kind);
}

async function deliver(type: string, object: Record<string, unknown>): Promise<void> {
  const result = await h.stripe.deliver(h.stripe.event(type, object), { url: h.webhookUrl });
  if (result.status !== 200) throw new Error(`webhook ${type}: ${result.status} ${result.body}`);
}

async function purchase(accountId: string, usd: number): Promise<void> {
  const { stripeSessionId } = await checkout(h, accountId, usd);
  await deliver('checkout.session.completed', h.stripe.completeSession(stripeSessionId));
}

/** The owner saves a card through the setup session (the fake's page), as the dashboard sends them there. */
async function saveCard(accountId: string, card: 'succeeds' | 'declined' | 'authentication_required' | 'processing' = 'succeeds'): Promise<string> {
  const created = await api('POST', accountId, '/v1/billing/auto-topup/setup', {});
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ object: 'auto_topup_setup' });
  const session = [...h.stripe.sessions.values()].map((s) => s.session).find((s) => s.url === created.body.url);
  if (session === undefined) throw new Error('setup session not found in the fake');
  expect(session).toMatchObject({ mode: 'setup', client_reference_id: accountId });
  await deliver('checkout.session.completed', h.stripe.completeSession(String(session.id), { card }));
  const setupIntent = h.stripe.setupIntents.get(String(h.stripe.session(String(session.id)).setup_intent));
  return String(setupIntent?.payment_method);
}

async function enable(accountId: string, settings: { threshold_usd: number; amount_usd: number; monthly_cap_usd: number }): Promise<JsonResponse> {
  const saved = await api('PATCH', accountId, '/v1/billing/settings', { auto_topup: { enabled: true, ...settings } });
  expect(saved.status).toBe(200);
  return saved;
}

/** Searches: the gateway takes the charge from the spendable balance, the ledger worker writes it (the durable balance falls). */
async function search(accountId: string, micros: number): Promise<void> {
  const record: SettlementRecord = settlementRecord(accountId, micros);
  await h.redis.decrby(redisKeys.accountBalance(accountId), micros);
  await ledger.writeSettlements(accountId, [record]);
}

async function balanceOf(accountId: string): Promise<number> {
  const row = await h.db.query<{ b: string }>('SELECT balance_micros::text AS b FROM account_balances WHERE account_id = $1', [accountId]);
  return Number(row.rows[0]?.b ?? 0);
}

interface TopUpRow { id: string; status: string; amount_micros: string; payment_intent_id: string | null; failure_code: string | null }

async function topUps(accountId: string): Promise<TopUpRow[]> {
  return (await h.db.query<TopUpRow>(
    'SELECT id, status, amount_micros::text, payment_intent_id, failure_code FROM auto_topups WHERE account_id = $1 ORDER BY created_at, id', [accountId])).rows;
}

async function topUpEntries(accountId: string): Promise<{ n: number; micros: number }> {
  const row = await h.db.query<{ n: string; s: string }>(
    `SELECT count(*)::text AS n, coalesce(sum(amount_micros), 0)::text AS s FROM ledger_entries WHERE account_id = $1 AND kind = 'purchase' AND reason = 'Automatic top-up'`, [accountId]);
  return { n: Number(row.rows[0]?.n), micros: Number(row.rows[0]?.s) };
}

/** The PaymentIntents Stripe holds for the account's top-ups. */
const intentsOf = (accountId: string): Record<string, unknown>[] =>
  [...h.stripe.paymentIntents.values()].filter((p) => (p.metadata as Record<string, string>).account_id === accountId);

async function receiver(accountId: string): Promise<{ hook: WebhookReceiver; secret: string }> {
  const hook = await WebhookReceiver.start();
  receivers.push(hook);
  const created = await api('POST', accountId, '/v1/webhook-endpoints', { url: hook.url, events: ['auto_topup.succeeded', 'auto_topup.failed'] });
  expect(created.status).toBe(201);
  return { hook, secret: created.body.secret as string };
}

const settle = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('auto top-up settings', () => {
  it('answers the defaults, and refuses what could never top up, each as 400 invalid_request naming the field', async () => {
    const accountId = await newAccount(h);
    const read = await api('GET', accountId, '/v1/billing/settings');
    expect(read.body).toMatchObject({
      low_balance_threshold_usd: null,
      auto_topup: { enabled: false, threshold_usd: null, amount_usd: null, monthly_cap_usd: null, payment_method: null, month_to_date_usd: 0, consecutive_failures: 0, disabled_reason: null, last_topup: null },
    });
    const cases: [unknown, string][] = [
      [{ enabled: true, threshold_usd: 10, amount_usd: 20, monthly_cap_usd: 100 }, 'auto_topup needs a saved card'],
      [{ amount_usd: 4.99 }, 'auto_topup.amount_usd must be from 5 to 10000'],
      [{ amount_usd: 10_000.01 }, 'auto_topup.amount_usd must be from 5 to 10000'],
      [{ amount_usd: 5.001 }, 'amount_usd must be a whole number of cents'],
      [{ threshold_usd: -1 }, 'auto_topup.threshold_usd must be from 0 to 1000000'],
      [{ amount_usd: 50, monthly_cap_usd: 20 }, 'auto_topup.monthly_cap_usd must be at least auto_topup.amount_usd'],
      [{ enabled: 'yes' }, 'enabled must be true or false'],
      [{ amount: 5 }, 'unknown field "auto_topup.amount"'],
      ['on', 'auto_topup must be an object'],
    ];
    for (const [autoTopup, message] of cases) {
      const response = await api('PATCH', accountId, '/v1/billing/settings', { auto_topup: autoTopup });
      expect([response.status, errorOf(response).code]).toEqual([400, 'invalid_request']);
      expect(errorOf(response).message).toContain(message);
    }
    await saveCard(accountId);
    const incomplete = await api('PATCH', accountId, '/v1/billing/settings', { auto_topup: { enabled: true, amount_usd: 20 } });
    expect(errorOf(incomplete).message).toContain('needs threshold_usd, amount_usd and monthly_cap_usd');
    const withApiKey = await api('PATCH', accountId, '/v1/billing/settings', { auto_topup: { enabled: false } }, 'api');
    expect([withApiKey.status, errorOf(withApiKey).code]).toEqual([403, 'wrong_key_type']);
    expect((await api('POST', accountId, '/v1/billing/auto-topup/setup', {}, 'api')).status).toBe(403);
    const saved = await enable(accountId, { threshold_usd: 10.5, amount_usd: 25, monthly_cap_usd: 100 });
    expect(saved.body).toMatchObject({
      auto_topup: { enabled: true, threshold_usd: 10.5, amount_usd: 25, monthly_cap_usd: 100, payment_method: { brand: 'visa', last4: '4242' } },
    });
    // A partial change keeps the rest.
    const partial = await api('PATCH', accountId, '/v1/billing/settings', { auto_topup: { amount_usd: 30 } });
    expect(partial.body).toMatchObject({ auto_topup: { enabled: true, threshold_usd: 10.5, amount_usd: 30, monthly_cap_usd: 100 } });
  });
});

describe('auto_topups in the database', () => {
  it('refuses a row with an unknown status or an amount that is not positive (the table\'s trigger), and takes a valid one', async () => {
    const accountId = await newAccount(h);
    const insert = (id: string, status: string, micros: number) => h.db.query(
      'INSERT INTO auto_topups (id, account_id, status, amount_micros, month) VALUES ($1, $2, $3, $4, $5)', [id, accountId, status, micros, '2031-01'],
    );
    await expect(insert('atu_check1', 'weird', 1_000_000)).rejects.toMatchObject({ code: '23514' });
    await expect(insert('atu_check2', 'skipped', 0)).rejects.toMatchObject({ code: '23514' });
    await insert('atu_check3', 'skipped', 1_000_000);
    await expect(h.db.query("UPDATE auto_topups SET status = 'gone' WHERE id = 'atu_check3'")).rejects.toMatchObject({ code: '23514' });
  });
});

describe('auto top-up', () => {
  it('searches that drain the balance below the threshold make exactly one top-up per crossing, credited once, with auto_topup.succeeded delivered signed', async () => {
    const accountId = await newAccount(h);
    const { hook, secret } = await receiver(accountId);
    await purchase(accountId, 20);
    await spendableBecomes(h, accountId, 20_000_000);
    await saveCard(accountId);
    await enable(accountId, { threshold_usd: 10, amount_usd: 25, monthly_cap_usd: 100 });
    await search(accountId, 6_000_000);
    await settle(300);
    expect(await topUps(accountId)).toEqual([]);
    // 14 - 4.000123 = 9.999877: below 10.
    await search(accountId, 4_000_123);
    const [row] = await waitFor('the top-up credited', async () => {
      const rows = await topUps(accountId);
      return rows[0]?.status === 'succeeded' ? rows : undefined;
    });
    expect(row).toMatchObject({ status: 'succeeded', amount_micros: '25000000', failure_code: null });
    expect(await balanceOf(accountId)).toBe(20_000_000 - 10_000_123 + 25_000_000);
    await spendableBecomes(h, accountId, 34_999_877);
    const delivered = await waitFor('auto_topup.succeeded', () => (hook.accepted().length > 0 ? hook.accepted() : undefined));
    expect(await verifyWebhook(delivered[0]?.rawBody ?? '', delivered[0]?.signature, secret)).toMatchObject({
      type: 'auto_topup.succeeded', data: { auto_topup_id: row?.id, amount_usd: 25, balance_usd: 34.999877, payment_intent_id: row?.payment_intent_id },
    });
    // Still below? No: above now. Several ticks later: still one top-up, one PaymentIntent, one credit, one event.
    await settle(500);
    expect(await topUps(accountId)).toHaveLength(1);
    expect(intentsOf(accountId)).toHaveLength(1);
    expect(intentsOf(accountId)[0]).toMatchObject({ id: row?.payment_intent_id, amount: 2_500, status: 'succeeded', customer: expect.stringMatching(/^cus_/) });
    expect(await topUpEntries(accountId)).toEqual({ n: 1, micros: 25_000_000 });
    expect(hook.received).toHaveLength(1);
    // A second crossing: a second top-up.
    await search(accountId, 30_000_000);
    await waitFor('the second top-up', async () => ((await topUpEntries(accountId)).n === 2 ? true : undefined));
    expect(await balanceOf(accountId)).toBe(34_999_877 - 30_000_000 + 25_000_000);
    const settings = await api('GET', accountId, '/v1/billing/settings');
    expect(settings.body).toMatchObject({ auto_topup: { month_to_date_usd: 50, consecutive_failures: 0, last_topup: { status: 'succeeded', amount_usd: 25 } } });
  });

  it('credits exactly once whichever arrives first, the answer or the webhook, however many times Stripe repeats it', async () => {
    const accountId = await newAccount(h);
    await saveCard(accountId, 'processing');
    await enable(accountId, { threshold_usd: 5, amount_usd: 10, monthly_cap_usd: 100 });
    const [pending] = await waitFor('a pending top-up with its PaymentIntent', async () => {
      const rows = await topUps(accountId);
      return rows[0]?.payment_intent_id !== null && rows[0] !== undefined ? rows : undefined;
    });
    expect(pending?.status).toBe('pending');
    // In flight: no second top-up while it is processing, whatever the ticks do.
    await settle(400);
    expect(await topUps(accountId)).toHaveLength(1);
    expect(intentsOf(accountId)).toHaveLength(1);
    const intentId = String(pending?.payment_intent_id);
    const succeeded = h.stripe.succeedPaymentIntent(intentId);
    // The same event five times at once, two more events for the same intent, and the worker's poll, all racing.
    const event = h.stripe.event('payment_intent.succeeded', succeeded);
    const results = await Promise.all([
      ...Array.from({ length: 5 }, () => h.stripe.deliver(event, { url: h.webhookUrl })),
      h.stripe.deliver(h.stripe.event('payment_intent.succeeded', succeeded), { url: h.webhookUrl }),
      h.stripe.deliver(h.stripe.event('payment_intent.succeeded', succeeded), { url: h.webhookUrl }),
    ]);
    expect(results.map((r) => r.status)).toEqual(Array(7).fill(200));
    await settle(700);
    expect(await topUpEntries(accountId)).toEqual({ n: 1, micros: 10_000_000 });
    expect(await balanceOf(accountId)).toBe(10_000_000);
    await spendableBecomes(h, accountId, 10_000_000);
    const grants = await h.db.query('SELECT stripe_session_id FROM purchase_grants WHERE account_id = $1', [accountId]);
    expect(grants.rows).toEqual([{ stripe_session_id: intentId }]);
    expect((await api('GET', accountId, '/v1/events?type=auto_topup.succeeded')).body.data).toHaveLength(1);
  });

  it('Stripe unreachable leaves the top-up pending; the retry, with the same idempotency key, makes one payment', async () => {
    const accountId = await newAccount(h);
    await saveCard(accountId);
    // Both tries of the first call (the client retries once) answer 500.
    h.stripe.failNext('error500', 2);
    await enable(accountId, { threshold_usd: 5, amount_usd: 7, monthly_cap_usd: 100 });
    const [pending] = await waitFor('the failed first call', async () => {
      const rows = await h.db.query<{ status: string; attempts: number }>('SELECT status, attempts FROM auto_topups WHERE account_id = $1', [accountId]);
      return rows.rows[0]?.attempts === 1 ? rows.rows : undefined;
    });
    expect(pending).toMatchObject({ status: 'pending' });
    await waitFor('the retry credited', async () => ((await topUpEntries(accountId)).n === 1 ? true : undefined));
    const [row] = await topUps(accountId);
    const calls = h.stripe.requests.filter((r) => r.method === 'POST' && r.path === '/v1/payment_intents' && r.idempotencyKey === row?.id);
    expect(calls.length).toBeGreaterThanOrEqual(3);
    expect(intentsOf(accountId)).toHaveLength(1);
    expect(await balanceOf(accountId)).toBe(7_000_000);
  });

  it('a declined card gives auto_topup.failed and no credit; two consecutive failures turn it off with a notice until the owner acts', async () => {
    const accountId = await newAccount(h);
    const { hook, secret } = await receiver(accountId);
    await purchase(accountId, 10);
    const card = await saveCard(accountId, 'declined');
    await enable(accountId, { threshold_usd: 5, amount_usd: 20, monthly_cap_usd: 200 });
    await search(accountId, 6_000_000);
    const first = await waitFor('the first failure', async () => ((await topUps(accountId))[0]?.status === 'failed' ? topUps(accountId) : undefined));
    expect(first[0]).toMatchObject({ failure_code: 'card_declined', payment_intent_id: expect.stringMatching(/^pi_/) });
    const failedEvent = await waitFor('auto_topup.failed', () => (hook.accepted().length > 0 ? hook.accepted() : undefined));
    expect(await verifyWebhook(failedEvent[0]?.rawBody ?? '', failedEvent[0]?.signature, secret)).toMatchObject({
      type: 'auto_topup.failed', data: { reason: 'payment_failed', failure_code: 'card_declined', amount_usd: 20, consecutive_failures: 1, auto_topup_disabled: false },
    });
    expect(await topUpEntries(accountId)).toEqual({ n: 0, micros: 0 });
    expect(await balanceOf(accountId)).toBe(4_000_000);
    expect((await api('GET', accountId, '/v1/billing/settings')).body).toMatchObject({ auto_topup: { enabled: true, consecutive_failures: 1, disabled_reason: null } });
    // Still below the threshold: the same crossing makes no second attempt.
    await settle(400);
    expect(await topUps(accountId)).toHaveLength(1);
    // Back above (a purchase), down again: a new crossing, the card fails again (needs authentication this time): off.
    h.stripe.setCardBehaviour(card, 'authentication_required');
    await purchase(accountId, 10);
    await settle(300);
    await search(accountId, 10_000_000);
    const settings = await waitFor('auto top-up turned off', async () => {
      const read = await api('GET', accountId, '/v1/billing/settings');
      return (read.body.auto_topup as { enabled: boolean }).enabled ? undefined : read.body;
    });
    expect(settings).toMatchObject({
      auto_topup: { enabled: false, disabled_reason: 'payment_failed', consecutive_failures: 2, last_topup: { status: 'failed', failure_code: 'authentication_required' } },
    });
    await waitFor('the second auto_topup.failed', () => (hook.accepted().length === 2 ? true : undefined));
    expect(JSON.parse(hook.accepted()[1]?.rawBody ?? '{}')).toMatchObject({ data: { consecutive_failures: 2, auto_topup_disabled: true, failure_code: 'authentication_required' } });
    expect(await topUpEntries(accountId)).toEqual({ n: 0, micros: 0 });
    // Off: a further crossing makes nothing.
    await purchase(accountId, 10);
    await search(accountId, 10_000_000);
    await settle(400);
    expect(await topUps(accountId)).toHaveLength(2);
    expect(intentsOf(accountId)).toHaveLength(2);
    // The owner acts: a working card and the settings saved again; the balance is below: one top-up at once.
    await saveCard(accountId);
    const again = await api('PATCH', accountId, '/v1/billing/settings', { auto_topup: { enabled: true } });
    expect(again.body).toMatchObject({ auto_topup: { enabled: true, disabled_reason: null, consecutive_failures: 0, payment_method: { last4: '4242' } } });
    await waitFor('the top-up with the new card', async () => ((await topUpEntries(accountId)).n === 1 ? true : undefined));
    expect(await balanceOf(accountId)).toBe(4_000_000 + 20_000_000);
  });

  it('never passes the monthly cap, even when crossings race on several worker replicas', async () => {
    const accountId = await newAccount(h);
    await purchase(accountId, 30);
    await saveCard(accountId);
    // Cap 45: one top-up of 20, a second of 20 (40), then a third would be 60: refused.
    await enable(accountId, { threshold_usd: 10, amount_usd: 20, monthly_cap_usd: 45 });
    for (let i = 0; i < 4; i++) {
      const database = createBillingDatabase(h.databaseUrl, () => undefined);
      replicas.push({ db: database, service: topUpService(database) });
    }
    const race = (): Promise<unknown> => Promise.all(replicas.map(({ service }) => service.evaluate()));
    for (let crossing = 1; crossing <= 3; crossing++) {
      // Down below 10 (the worker's own tick races the replicas too).
      await search(accountId, (await balanceOf(accountId)) - 5_000_000);
      await Promise.all([race(), race()]);
      await waitFor(`crossing ${crossing} decided`, async () => ((await topUps(accountId)).filter((t) => t.status !== 'pending').length === crossing ? true : undefined));
    }
    const rows = await topUps(accountId);
    expect(rows.map((r) => [r.status, r.failure_code])).toEqual([['succeeded', null], ['succeeded', null], ['skipped', 'monthly_cap_reached']]);
    expect(intentsOf(accountId)).toHaveLength(2);
    expect(await topUpEntries(accountId)).toEqual({ n: 2, micros: 40_000_000 });
    const capped = (await api('GET', accountId, '/v1/events?type=auto_topup.failed')).body.data as { data: Record<string, unknown> }[];
    expect(capped).toHaveLength(1);
    expect(capped[0]?.data).toMatchObject({ reason: 'monthly_cap_reached', amount_usd: 20, month_to_date_usd: 40, monthly_cap_usd: 45, payment_intent_id: null });
    // A cap refusal is not a payment failure: auto top-up stays on.
    expect((await api('GET', accountId, '/v1/billing/settings')).body).toMatchObject({ auto_topup: { enabled: true, consecutive_failures: 0, month_to_date_usd: 40 } });
    // The database refuses a second top-up in flight whatever the code does.
    await expect(h.db.query(`INSERT INTO auto_topups (id, account_id, status, amount_micros, month) VALUES ('atu_x1', $1, 'pending', 1, '2026-01'), ('atu_x2', $1, 'pending', 1, '2026-01')`, [accountId]))
      .rejects.toThrow(/auto_topups_one_pending_idx/);
  });

  it('a top-up given up after 23 hours that Stripe later reports succeeded is credited once and counts against the cap of the month it lands in', async () => {
    const accountId = await newAccount(h);
    await saveCard(accountId);
    // Stripe cannot be reached: the top-up stays pending, tried again and again.
    h.stripe.failNext('error500', Infinity);
    await enable(accountId, { threshold_usd: 10, amount_usd: 20, monthly_cap_usd: 40 });
    const [lost] = await waitFor('the top-up Stripe never answered', async () => {
      const rows = await h.db.query<{ id: string; status: string; attempts: number }>('SELECT id, status, attempts FROM auto_topups WHERE account_id = $1', [accountId]);
      return rows.rows[0]?.status === 'pending' && rows.rows[0].attempts > 0 ? rows.rows : undefined;
    });
    const lostId = String(lost?.id);
    // Decided last month, more than 23 hours ago: the worker gives it up.
    await h.db.query(
      `UPDATE auto_topups SET created_at = clock_timestamp() - interval '24 hours',
         month = to_char((clock_timestamp() AT TIME ZONE 'UTC') - interval '1 month', 'YYYY-MM') WHERE id = $1`, [lostId]);
    await waitFor('the top-up given up', async () => ((await topUps(accountId))[0]?.failure_code === 'processor_unreachable' ? true : undefined));
    expect((await topUps(accountId))[0]).toMatchObject({ status: 'failed', payment_intent_id: null });
    h.stripe.clearFailures();
    // The owner acts: the settings saved again, a new top-up this month, credited.
    expect((await api('PATCH', accountId, '/v1/billing/settings', { auto_topup: { enabled: true } })).status).toBe(200);
    await waitFor('the second top-up credited', async () => ((await topUpEntries(accountId)).n === 1 ? true : undefined));

    // Stripe had taken the first payment after all (its answer was lost): its success arrives now.
    const card = await h.db.query<{ stripe_customer_id: string; payment_method_id: string }>(
      'SELECT stripe_customer_id, payment_method_id FROM billing_settings WHERE account_id = $1', [accountId]);
    const stripe = new StripeAdapter({ secretKey: STRIPE_SECRET, apiBase: h.stripe.url, timeoutMs: 2_000 });
    const late = await stripe.chargeOffSession({
      customerId: String(card.rows[0]?.stripe_customer_id), paymentMethodId: String(card.rows[0]?.payment_method_id), amountCents: 2_000, accountId,
      autoTopupId: lostId, creditMicros: 20_000_000, idempotencyKey: lostId,
    });
    if (late.kind !== 'intent') throw new Error('the late charge did not succeed in the fake');
    await waitFor('the late success credited', async () => ((await topUpEntries(accountId)).n === 2 ? true : undefined));
    // Stripe sends its event again: nothing more.
    await deliver('payment_intent.succeeded', h.stripe.paymentIntent(late.intent.id));
    await settle(300);
    expect(await topUpEntries(accountId)).toEqual({ n: 2, micros: 40_000_000 });
    expect(await balanceOf(accountId)).toBe(40_000_000);
    const month = (await h.db.query<{ m: string }>("SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM') AS m")).rows[0]?.m;
    const rows = await h.db.query<{ id: string; status: string; month: string; payment_intent_id: string | null }>(
      'SELECT id, status, month, payment_intent_id FROM auto_topups WHERE id = $1', [lostId]);
    expect(rows.rows[0]).toMatchObject({ status: 'succeeded', month, payment_intent_id: late.intent.id });
    // It counts in this month, when it landed: 40 of the cap of 40.
    expect((await api('GET', accountId, '/v1/billing/settings')).body).toMatchObject({ auto_topup: { month_to_date_usd: 40 } });

    // The next crossing this month would pass the cap: refused, no payment.
    await search(accountId, 35_000_000);
    await waitFor('the crossing refused by the cap', async () => ((await topUps(accountId)).some((t) => t.status === 'skipped') ? true : undefined));
    expect((await topUps(accountId)).map((t) => [t.status, t.failure_code])).toEqual([['succeeded', null], ['succeeded', null], ['skipped', 'monthly_cap_reached']]);
    expect(intentsOf(accountId)).toHaveLength(2);
    expect(await topUpEntries(accountId)).toEqual({ n: 2, micros: 40_000_000 });
  });

  it('a refund of a top-up is debited once, and the ledger, the finance report and Stripe agree to the micro-dollar', async () => {
    const accountId = await newAccount(h);
    await saveCard(accountId);
    await enable(accountId, { threshold_usd: 1, amount_usd: 12.34, monthly_cap_usd: 50 });
    await waitFor('the top-up', async () => ((await topUpEntries(accountId)).n === 1 ? true : undefined));
    const [row] = await topUps(accountId);
    const refund = h.stripe.refundPaymentIntent(String(row?.payment_intent_id), 234);
    await deliver('charge.refunded', refund);
    await deliver('charge.refunded', refund);
    const debits = await h.db.query<{ s: string }>(`SELECT sum(amount_micros)::text AS s FROM ledger_entries WHERE account_id = $1 AND kind = 'stripe_refund'`, [accountId]);
    expect(debits.rows[0]?.s).toBe('-2340000');
    await spendableBecomes(h, accountId, 10_000_000);

    const report = await call(`${h.billing.operatorUrl}/operator/finance/reconciliation`, { headers: operatorHeaders() });
    expect(report.status).toBe(200);
    const stripe = report.body.stripe as Record<string, unknown>;
    // Stripe's side: every succeeded PaymentIntent billing made for a top-up, and every paid Checkout session.
    const topUpCents = [...h.stripe.paymentIntents.values()].filter((p) => p.status === 'succeeded').reduce((sum, p) => sum + Number(p.amount), 0);
    const sessionCents = [...h.stripe.sessions.values()].filter((s) => s.session.payment_status === 'paid').reduce((sum, s) => sum + Number(s.session.amount_total), 0);
    const purchased = await h.db.query<{ s: string }>(`SELECT sum(amount_micros)::text AS s FROM ledger_entries WHERE kind = 'purchase'`);
    expect(Number(purchased.rows[0]?.s)).toBe((topUpCents + sessionCents) * 10_000);
    expect(stripe).toMatchObject({
      auto_topups: { amount_usd: topUpCents / 100 }, paid_sessions: { amount_usd: sessionCents / 100 },
      purchase_drift_usd: 0, unmatched_sessions: [], unmatched_entries: [], taken_back: { drift_usd: 0 },
    });
    expect(report.body.ledger).toMatchObject({ accounts_off_sum: [] });
    expect(report.body.balanced).toBe(true);
  });
});
