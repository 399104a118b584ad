import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { BrowserContext, Page } from 'playwright-core';
import { repoRoot, startStack, waitFor, WebhookReceiver } from '@svc/test-kit';
import type { Stack } from '@svc/test-kit';
import { verifyWebhook } from '@svc/sdk';
import { FakeStripe } from '../../tools/fake-stripe/src';

/**
 * The dashboard's webhooks and billing-settings pages in Chromium against the local stack:
 * add an endpoint (its secret shown once), set the low-balance threshold, and the event that
 * threshold sends arrives at the endpoint signed with the secret the page showed; both pages
 * pass axe-core at desktop and phone width without overflow. Then automatic top-up: a card
 * saved on the fake Stripe's setup page, the amounts saved, and the top-up the worker makes
 * shown on the page (screenshots in test/e2e/screenshots/, ignored by git).
 */
const STRIPE_KEY = 'sk_test_fake_dash_webhooks';
const STRIPE_WEBHOOK_SECRET = 'whsec_fake_dash_webhooks';
const SHOTS = join(repoRoot(), 'test/e2e/screenshots');
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

describe('the webhooks and billing settings pages in Chromium', () => {
  let stack: Stack;
  let context: BrowserContext;
  let profile: string;
  let gw: string;
  let hook: WebhookReceiver;
  let stripe: FakeStripe;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    stripe = await FakeStripe.start({ secretKey: STRIPE_KEY, webhookSecret: STRIPE_WEBHOOK_SECRET });
    const stripeEnv = { STRIPE_SECRET_KEY: STRIPE_KEY, STRIPE_API_BASE: stripe.url, STRIPE_TIMEOUT_MS: '2000' };
    stack = await startStack({
      name: 'dash_webhooks', redisDb: 7, worker: true, logLevel: 'warn', workerEnv: { WEBHOOK_DISPATCH_INTERVAL_MS: '100', ...stripeEnv },
      billingEnv: { ...stripeEnv, STRIPE_WEBHOOK_SECRET },
    });
    gw = stack.gateways[0]?.url ?? '';
    // The fake's pages and PaymentIntents send their events here, as Stripe would.
    stripe.setWebhookUrl(`${gw}/v1/credits/webhook`);
    mkdirSync(SHOTS, { recursive: true });
    hook = await WebhookReceiver.start();
    profile = mkdtempSync(join(tmpdir(), 'svc-dashboard-webhooks-'));
    context = await chromium.launchPersistentContext(profile, { executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 800 }, locale: 'en-US', timezoneId: 'UTC' });
    context.on('page', (page) => {
      page.on('pageerror', (error) => pageErrors.push(`pageerror: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())) pageErrors.push(`console: ${message.text()}`);
      });
    });
  }, 180_000);

  afterAll(async () => {
    await context?.close();
    if (profile !== undefined) rmSync(profile, { recursive: true, force: true });
    await hook?.stop();
    await stack?.stop();
    await stripe?.stop();
  });

  async function accessibility(page: Page, name: string): Promise<string[]> {
    const problems: string[] = [];
    for (const viewport of [{ width: 1280, height: 800 }, { width: 375, height: 812 }]) {
      await page.setViewportSize(viewport);
      await page.waitForTimeout(100);
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      if (overflow > 0) problems.push(`${name} at ${viewport.width}px: ${overflow}px too wide`);
      if (!(await page.evaluate<boolean>("'axe' in window"))) await page.evaluate(AXE_SOURCE);
      const violations = await page.evaluate<{ id: string; impact: string | null }[]>(
        "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact })))");
      for (const v of violations) if (v.impact === 'serious' || v.impact === 'critical') problems.push(`${name} at ${viewport.width}px: ${v.impact} ${v.id}`);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    return problems;
  }

  it('adds an endpoint, shows its secret once, sets the threshold, and the balance.low it sends verifies with that secret', async () => {
    const page = await context.newPage();
    await page.goto(`${gw}/dashboard/signup`);
    await page.getByLabel('Email').fill(`hooks-${Date.now().toString(36)}@example.com`);
    await page.getByLabel('Password').fill('a long enough password');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();

    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a webhook endpoint' });
    await dialog.getByLabel('URL').fill(hook.url);
    await dialog.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = await page.getByLabel('Secret', { exact: true }).inputValue();
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('row').filter({ hasText: hook.url }).waitFor();
    const problems = await accessibility(page, 'webhooks');

    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Billing settings', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Billing settings' }).waitFor();
    await page.getByLabel('Low-balance threshold (USD)').fill('5');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    problems.push(...(await accessibility(page, 'billing-settings')));
    expect(problems).toEqual([]);

    // The new account's balance (0) is below 5: setting the threshold sends one balance.low.
    const [delivered] = await waitFor('balance.low at the endpoint', () => (hook.accepted().length > 0 ? hook.accepted() : undefined));
    await expect(verifyWebhook(delivered?.rawBody ?? '', delivered?.signature, secret)).resolves.toMatchObject({ type: 'balance.low', data: { balance_usd: 0, threshold_usd: 5 } });
    // The page's settings are the API's.
    const me = (await (await page.request.get(`${gw}/dashboard/api/me`)).json()) as { account_id: string };
    expect(me.account_id).toMatch(/^acct_/);
    const settings = await page.request.get(`${gw}/dashboard/api/billing/settings`);
    expect(await settings.json()).toMatchObject({ low_balance_threshold_usd: 5 });
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 120_000);

  it('automatic top-up: saves a card on Stripe\'s setup page, saves the amounts, and shows the top-up the worker made', async () => {
    const page = await context.newPage();
    await page.goto(`${gw}/dashboard/billing-settings`);
    await page.getByRole('heading', { level: 1, name: 'Billing settings' }).waitFor();
    await page.getByText('No card saved yet.').waitFor();
    await page.getByRole('button', { name: 'Save a card' }).click();
    // The fake Stripe's setup page; saving returns to the dashboard, which waits for the webhook.
    await page.getByRole('button', { name: 'Save card' }).click();
    await page.waitForURL(/\/dashboard\/billing-settings\?card=saved/);
    await page.getByText(/Visa ending in 4242/).waitFor({ timeout: 30_000 });
    await page.getByLabel('Top up automatically').check();
    await page.getByLabel('When the balance falls below (USD)').fill('10');
    await page.getByLabel('Top up by (USD)').fill('25');
    await page.getByLabel('Monthly cap (USD)').fill('100');
    await page.getByRole('button', { name: 'Save automatic top-up' }).click();
    // The new account's balance (0) is below 10: the worker tops it up once, and the page shows it after a reload.
    const me = (await (await page.request.get(`${gw}/dashboard/api/me`)).json()) as { account_id: string };
    await waitFor('the top-up credited', async () => {
      const read = (await (await page.request.get(`${gw}/dashboard/api/billing/settings`)).json()) as { auto_topup: { last_topup: { status: string } | null } };
      return read.auto_topup.last_topup?.status === 'succeeded' ? true : undefined;
    }, { timeoutMs: 30_000 });
    expect([...stripe.paymentIntents.values()].filter((p) => (p.metadata as Record<string, string>).account_id === me.account_id)).toHaveLength(1);
    await page.reload();
    await page.getByText(/Last top-up: \$25\.00 on .*, credited\./).waitFor();
    await expect(page.getByLabel('Top up automatically').isChecked()).resolves.toBe(true);
    const credits = (await (await page.request.get(`${gw}/dashboard/api/credits`)).json()) as { balance_usd: number };
    expect(credits.balance_usd).toBe(25);
    await page.screenshot({ path: join(SHOTS, 'dashboard-billing-settings-auto-topup.png'), fullPage: true });
    expect(await accessibility(page, 'billing-settings with automatic top-up')).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 120_000);
});
