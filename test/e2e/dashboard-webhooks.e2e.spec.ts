import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { waitFor, WebhookReceiver, useStack } from '@svc/test-kit';
import { verifyWebhook } from '@svc/sdk';
import { useChromium } from './chromium';

/**
 * The dashboard's webhooks and billing-settings pages in Chromium against the local stack:
 * add an endpoint (its secret shown once), set the low-balance threshold, and the event that
 * threshold sends arrives at the endpoint signed with the secret the page showed; both pages
 * pass axe-core at desktop and phone width without overflow.
 */
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

describe('the webhooks and billing settings pages in Chromium', () => {
  let hook: WebhookReceiver;
  const pageErrors: string[] = [];
  const browser = useChromium('svc-dashboard-webhooks-', { viewport: { width: 1280, height: 800 } });
  afterAll(() => hook?.stop());
  const suite = useStack({ name: 'dash_webhooks', redisDb: 7, worker: true, logLevel: 'warn', workerEnv: { WEBHOOK_DISPATCH_INTERVAL_MS: '100' } }, { timeoutMs: 180_000 });

  beforeAll(async () => {
    hook = await WebhookReceiver.start();
    browser.context.on('page', (page) => {
      page.on('pageerror', (error) => pageErrors.push(`pageerror: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())) pageErrors.push(`console: ${message.text()}`);
      });
    });
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
    const page = await browser.context.newPage();
    await page.goto(`${suite.gw}/dashboard/signup`);
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
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    problems.push(...(await accessibility(page, 'billing-settings')));
    expect(problems).toEqual([]);

    // The new account's balance (0) is below 5: setting the threshold sends one balance.low.
    const [delivered] = await waitFor('balance.low at the endpoint', () => (hook.accepted().length > 0 ? hook.accepted() : undefined));
    await expect(verifyWebhook(delivered?.rawBody ?? '', delivered?.signature, secret)).resolves.toMatchObject({ type: 'balance.low', data: { balance_usd: 0, threshold_usd: 5 } });
    // The page's settings are the API's.
    const me = (await (await page.request.get(`${suite.gw}/dashboard/api/me`)).json()) as { account_id: string };
    expect(me.account_id).toMatch(/^acct_/);
    const settings = await page.request.get(`${suite.gw}/dashboard/api/billing/settings`);
    expect(await settings.json()).toMatchObject({ low_balance_threshold_usd: 5 });
    expect(pageErrors).toEqual([]);
  }, 120_000);
});
