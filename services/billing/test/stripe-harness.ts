import { redisKeys } from '@svc/contracts';
import { newRequestId } from '@svc/ids';
import { inProcessServiceEnv, redisUrl, waitFor } from '@svc/test-kit';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { FakeStripe } from '../../../tools/fake-stripe/src';
import { createLogger, startBilling } from '../src/app/app';
import type { BillingHooks, RunningBilling } from '../src/app/app';
import { parseBillingConfig } from '../src/config';
import type { createBillingDatabase } from '../src/db/prisma.repository';
import { Transactions } from '../src/db/transactions';
import type { AutoTopupStores } from '../src/services/purchases/auto-topup.service';
import { PurchaseCredit } from '../src/services/purchases/purchase-credit';
import { parseWebhookConfig } from '../src/services/outbound-webhooks/webhook-config';
import type { WebhookConfig } from '../src/services/outbound-webhooks/webhook-config';
import { AuditRepository } from '../src/stores/audit.repository';
import { AutoTopupRepository } from '../src/stores/auto-topups.repository';
import { EventsRepository } from '../src/stores/events.repository';
import { LedgerAppendRepository } from '../src/stores/ledger-append.repository';
import { LedgerRepository } from '../src/stores/ledger.repository';
import { PurchasesRepository } from '../src/stores/purchases.repository';
import { ThresholdsRepository } from '../src/stores/thresholds.repository';
import { DeliveriesRepository } from '../src/stores/webhook-deliveries.repository';
import { outboundProcessors } from '../src/worker/outbound';
import type { OutboundParts } from '../src/worker/outbound';
import { startQueues } from '../src/worker/queue-processor';
import { call, FakeAccountAdmin, INTERNAL_TOKEN, OPERATOR_TOKEN, operatorHeaders } from './billing-harness';
import type { JsonResponse } from './billing-harness';
import { migratedBillingDatabase } from './ledger-fixtures';

/** Redis database of billing's Stripe suites (they flush it first; run them serially). */
export const STRIPE_REDIS_DB = 14;
export const STRIPE_SECRET = 'sk_test_fake_billing';
export const WEBHOOK_SECRET = 'whsec_fake_billing';

export interface StripeHarness {
  billing: RunningBilling;
  stripe: FakeStripe;
  accountAdmin: FakeAccountAdmin;
  db: Client;
  redis: Redis;
  webhookUrl: string;
  databaseUrl: string;
  close(): Promise<void>;
}

export interface StripeHarnessOptions {
  /** Leave STRIPE_SECRET_KEY unset (checkout is payment_disabled). */
  disabled?: boolean;
  timeoutMs?: number;
  hooks?: BillingHooks;
  /** More of billing's environment. */
  env?: Record<string, string>;
}

/** Fresh database `svc_billing_test_stripe_<suite>`, a fake Stripe, billing in-process. */
export async function startStripeHarness(suite: string, options: StripeHarnessOptions = {}): Promise<StripeHarness> {
  const databaseUrl = await migratedBillingDatabase(`svc_billing_test_stripe_${suite}`);
  const redis = new Redis(redisUrl(STRIPE_REDIS_DB));
  await redis.flushdb();
  const accountAdmin = await FakeAccountAdmin.start();
  const stripe = await FakeStripe.start({ secretKey: STRIPE_SECRET, webhookSecret: WEBHOOK_SECRET });
  const env: Record<string, string> = {
    ...await inProcessServiceEnv(['PORT', 'OPERATOR_PORT'], { databaseUrl, redisDb: STRIPE_REDIS_DB, internalToken: INTERNAL_TOKEN }),
    OPERATOR_TOKEN,
    ACCOUNT_ADMIN_GRPC_URL: accountAdmin.address,
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    STRIPE_API_BASE: stripe.url,
    STRIPE_TIMEOUT_MS: String(options.timeoutMs ?? 2_000),
  };
  if (options.disabled !== true) env.STRIPE_SECRET_KEY = STRIPE_SECRET;
  const config = parseBillingConfig({ ...env, ...options.env });
  const billing = await startBilling(config, createLogger(config.LOG_LEVEL), options.hooks);
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  return {
    billing, stripe, accountAdmin, db, redis, databaseUrl,
    webhookUrl: `${billing.publicUrl}/v1/credits/webhook`,
    async close() {
      await billing.close();
      await stripe.stop();
      await accountAdmin.stop();
      await db.end();
      await redis.quit();
    },
  };
}

/** The headers the gateway adds when it forwards a request of this account's key. */
export function asKey(accountId: string, kind: 'api' | 'management' = 'management', keyId = kind === 'api' ? 'key_AAAAAAAAAAAAAAAAAAAAAAAA' : 'mkey_AAAAAAAAAAAAAAAAAAAAAAAA'): Record<string, string> {
  return {
    'x-svc-internal-token': INTERNAL_TOKEN, 'x-svc-account-id': accountId, 'x-svc-key-id': keyId, 'x-svc-key-kind': kind,
    'x-svc-request-id': newRequestId(), 'content-type': 'application/json',
  };
}

/** A call of billing's public API as the gateway forwards it for this account's key (`body` as JSON). */
export function api(h: StripeHarness, method: string, accountId: string, path: string, body?: unknown, kind: 'api' | 'management' = 'management'): Promise<JsonResponse> {
  const headers = asKey(accountId, kind);
  if (body === undefined) delete headers['content-type'];
  return call(`${h.billing.publicUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

/** The ledger worker's outbound processors running in this process (stopped by `close`). */
export interface TestOutbound {
  close(): Promise<void>;
}

/**
 * The ledger worker's outbound processors (webhook dispatch and delivery, thresholds, automatic
 * top-up: the code dist/worker.js runs) in this process, on the harness's Redis and
 * account-admin; by default with short retry delays that give up after `retryWindowMs`, or with
 * `config` as given.
 */
export async function startTestWebhookProcessor(
  h: StripeHarness,
  db: ReturnType<typeof createBillingDatabase>,
  { retryWindowMs, autoTopups, config, onWait }: { retryWindowMs?: number; autoTopups?: OutboundParts['autoTopups']; config?: WebhookConfig; onWait?: OutboundParts['onWait'] },
): Promise<TestOutbound> {
  const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', 'ledger-worker');
  const redis = { url: redisUrl(STRIPE_REDIS_DB), cluster: false };
  const outbound = outboundProcessors({
    stores: { transactions: new Transactions(db.prisma), deliveries: new DeliveriesRepository(db.prisma), thresholds: new ThresholdsRepository(db.prisma), events: new EventsRepository(db.prisma) },
    config: config ?? parseWebhookConfig({
      WEBHOOK_ALLOW_HTTP_AND_LOOPBACK: 'true', WEBHOOK_DISPATCH_INTERVAL_MS: '50', WEBHOOK_RETRY_BASE_DELAY_MS: '100',
      WEBHOOK_RETRY_MAX_DELAY_MS: '400', WEBHOOK_RETRY_WINDOW_MS: String(retryWindowMs ?? 4_000), WEBHOOK_TIMEOUT_MS: '1000',
    }),
    redis, logger, accountAdminGrpcUrl: h.accountAdmin.address,
    ...(autoTopups === undefined ? {} : { autoTopups }),
    ...(onWait === undefined ? {} : { onWait }),
  });
  const queues = await startQueues(outbound.processors, redis, logger).catch(async (error: unknown) => {
    await outbound.close();
    throw error;
  });
  return {
    async close() {
      await queues.close();
      await outbound.close();
    },
  };
}

/** The stores automatic top-up writes, on `database` (as the worker composes them). */
export function autoTopupStores(database: ReturnType<typeof createBillingDatabase>): AutoTopupStores {
  return {
    transactions: new Transactions(database.prisma), autoTopups: new AutoTopupRepository(database.prisma), ledger: new LedgerRepository(database.prisma),
    events: new EventsRepository(database.prisma), audit: new AuditRepository(database.prisma),
    credit: new PurchaseCredit(new PurchasesRepository(database.prisma), new LedgerAppendRepository(database.pool)),
  };
}

export async function newAccount(h: StripeHarness): Promise<string> {
  const created = await call(`${h.billing.operatorUrl}/operator/accounts`, { method: 'POST', headers: operatorHeaders(), body: '{}' });
  if (created.status !== 201) throw new Error(`account create failed: ${created.status}`);
  return created.body.account_id as string;
}

/** Checkout through billing's public API; returns the Stripe session id behind it. */
export async function checkout(h: StripeHarness, accountId: string, amountUsd: number): Promise<{ id: string; stripeSessionId: string }> {
  const response = await call(`${h.billing.publicUrl}/v1/credits/checkout`, { method: 'POST', headers: asKey(accountId), body: JSON.stringify({ amount_usd: amountUsd }) });
  if (response.status !== 201) throw new Error(`checkout failed: ${response.status} ${JSON.stringify(response.body)}`);
  const row = await h.db.query<{ stripe_session_id: string }>('SELECT stripe_session_id FROM checkout_sessions WHERE id = $1', [response.body.id]);
  const stripeSessionId = row.rows[0]?.stripe_session_id;
  if (stripeSessionId === undefined) throw new Error('checkout row missing');
  return { id: response.body.id as string, stripeSessionId };
}

export interface MoneyState {
  purchases: number;
  purchasedMicros: number;
  grants: number;
  balanceMicros: number;
  spendableMicros: number | null;
}

/** What the ledger and Redis hold for the account's purchases. */
export async function moneyOf(h: StripeHarness, accountId: string): Promise<MoneyState> {
  const entries = await h.db.query<{ n: string; s: string }>(
    `SELECT count(*)::text AS n, coalesce(sum(amount_micros), 0)::text AS s FROM ledger_entries WHERE account_id = $1 AND kind = 'purchase'`, [accountId]);
  const grants = await h.db.query<{ n: string }>('SELECT count(*)::text AS n FROM purchase_grants WHERE account_id = $1', [accountId]);
  const balance = await h.db.query<{ b: string }>('SELECT balance_micros::text AS b FROM account_balances WHERE account_id = $1', [accountId]);
  const spendable = await h.redis.get(redisKeys.accountBalance(accountId));
  return {
    purchases: Number(entries.rows[0]?.n ?? 0),
    purchasedMicros: Number(entries.rows[0]?.s ?? 0),
    grants: Number(grants.rows[0]?.n ?? 0),
    balanceMicros: Number(balance.rows[0]?.b ?? 0),
    spendableMicros: spendable === null ? null : Number(spendable),
  };
}

/** Waits until the account's spendable balance in Redis is `micros` (the outbox applied every entry). */
export async function spendableBecomes(h: StripeHarness, accountId: string, micros: number): Promise<void> {
  await waitFor(`spendable balance of ${accountId} = ${micros}`, async () => ((await moneyOf(h, accountId)).spendableMicros === micros ? true : undefined), { timeoutMs: 5_000 });
}
