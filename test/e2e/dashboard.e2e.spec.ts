import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { bearer, call, waitFor, grantCredits, useStack, SETTLING_STACK } from '@svc/test-kit';
import { useStripeStack } from './stripe-stack';
import { checkPage, DESKTOP, SHOTS, useChromium } from './chromium';

/**
 * The dashboard in a real browser (Debian's Chromium driven by playwright-core) against the
 * real local stack through the public edge: the journey of a new user, key editing,
 * provider keys, and an axe-core scan of every page at desktop and phone width. Screenshots
 * of every page go to test/e2e/screenshots/ (ignored by git).
 */
const STRIPE_KEY = 'sk_test_fake_dashboard';
const WEBHOOK_SECRET = 'whsec_fake_dashboard';
const PASSWORD = 'a long enough password';

const PAGES = [
  { path: '', name: 'overview', heading: 'Overview' },
  { path: '/keys', name: 'api-keys', heading: 'API keys' },
  { path: '/management-keys', name: 'management-keys', heading: 'Management keys' },
  { path: '/provider-keys', name: 'provider-keys', heading: 'Provider keys' },
  { path: '/credits', name: 'credits', heading: 'Credits' },
  { path: '/usage', name: 'usage', heading: 'Usage' },
  { path: '/activity', name: 'activity', heading: 'Activity' },
  { path: '/audit-log', name: 'audit-log', heading: 'Audit log' },
  { path: '/status', name: 'provider-status', heading: 'Provider status' },
  { path: '/notifications', name: 'notifications', heading: 'Notifications' },
] as const;

describe('the dashboard in Chromium', () => {
  /** Errors the pages wrote to the console (a CSP violation shows up here) or threw. */
  const pageErrors: string[] = [];
  const browser = useChromium('svc-dashboard-chromium-', { viewport: DESKTOP });
  // The result cache on: the activity and usage pages show a search answered from it.
  const suite = useStripeStack(
    { secretKey: STRIPE_KEY, webhookSecret: WEBHOOK_SECRET },
    (stripe) => ({ ...SETTLING_STACK, name: 'dashboard', redisDb: 12, gatewayEnv: { CACHE_ENABLED: 'true' }, billingEnv: stripe.billingEnv(2000) }),
    { timeoutMs: 180_000 },
  );

  beforeAll(async () => {
    // The fake's hosted page delivers checkout.session.completed here, as Stripe would.
    suite.stripe.setWebhookUrl(`${suite.gw}/v1/credits/webhook`);
    mkdirSync(SHOTS, { recursive: true });
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: suite.gw });
    browser.context.on('page', (page) => watch(page));
  });

  afterEach(() => {
    // No page error and no console error (a refused script, style or connection under the CSP included).
    expect(pageErrors.splice(0)).toEqual([]);
  });

  function watch(page: Page): void {
    page.on('pageerror', (error) => pageErrors.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      // A 4xx the page asked for and showed (e.g. 401 before signing in) is logged by Chromium as a failed resource.
      if (message.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())) {
        pageErrors.push(`console: ${message.text()}`);
      }
    });
  }

  async function newPage(): Promise<Page> {
    await browser.context.clearCookies();
    const page = await browser.context.newPage();
    await page.setViewportSize(DESKTOP);
    return page;
  }

  async function signUp(page: Page, label: string): Promise<string> {
    const email = `${label}-${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}@example.com`;
    await page.goto(`${suite.gw}/dashboard/signup`);
    await page.getByRole('heading', { name: 'Create an account' }).waitFor();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    return email;
  }

  async function go(page: Page, name: string): Promise<void> {
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true }).click();
    await page.getByRole('heading', { level: 1, name }).waitFor();
  }

  /** A new page, signed up as a new account (`label` in its email), on the dashboard page `name`. */
  async function newAccountOn(name: string, label: string): Promise<Page> {
    const page = await newPage();
    await signUp(page, label);
    await go(page, name);
    return page;
  }

  /** Sign-up's account id, read through the session (the page never shows it). */
  async function accountIdOf(page: Page): Promise<string> {
    const me = await page.request.get(`${suite.gw}/dashboard/api/me`);
    return String(((await me.json()) as { account_id: string }).account_id);
  }

  async function grant(accountId: string, usd: number): Promise<void> {
    await grantCredits(suite.stack, accountId, Math.round(usd * 1_000_000), { reason: 'dashboard e2e' });
  }

  async function text(page: Page, testId: string): Promise<string> {
    return (await page.getByTestId(testId).textContent()) ?? '';
  }

  /**
   * Opens the create-key dialog of the API keys page and fills it: each field by its label, a
   * text (a choice for 'Limit resets', a select) or `true` to tick a checkbox. Returns the dialog.
   */
  async function openKeyForm(page: Page, fields: Record<string, string | true>): Promise<Locator> {
    await page.getByRole('button', { name: 'Create API key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create an API key' });
    for (const [label, value] of Object.entries(fields)) {
      const field = dialog.getByLabel(label);
      if (value === true) await field.check();
      else if (label === 'Limit resets') await field.selectOption(value);
      else await field.fill(value);
    }
    return dialog;
  }

  /** Creates the key of a filled create-key dialog; returns the box that shows its secret once. */
  async function createKey(dialog: Locator): Promise<Locator> {
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const secretBox = dialog.page().getByRole('dialog', { name: 'Your new API key' }).getByLabel('Secret');
    await secretBox.waitFor();
    return secretBox;
  }

  async function keyRecords(page: Page): Promise<Record<string, unknown>[]> {
    const response = await page.request.get(`${suite.gw}/dashboard/api/keys`);
    expect(response.status()).toBe(200);
    return ((await response.json()) as { data: Record<string, unknown>[] }).data;
  }

  it('journey: sign up, buy credits through Stripe, create a key, search with it, see the search in the chart and in activity, disable the key and see searches refused', async () => {
    const page = await newPage();
    await page.goto(`${suite.gw}/dashboard`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByRole('heading', { name: 'Create an account' }).waitFor();
    await page.getByLabel('Email').fill(`journey-${Date.now()}@example.com`);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.getByRole('alert').filter({ hasText: 'Your balance is low' }).waitFor();
    expect(await text(page, 'balance')).toBe('$0.00');

    // Buy 20 USD: the page sends the browser to (fake) Stripe Checkout and Stripe back to the page.
    await go(page, 'Credits');
    await page.getByLabel('Amount (USD)').fill('20');
    await page.getByRole('button', { name: 'Continue to payment' }).click();
    await page.waitForURL(/\/pay\/cs_test_/);
    await page.getByRole('button', { name: 'Pay $20.00' }).click();
    await page.waitForURL(/\/dashboard\/credits\?checkout=paid$/);
    await page.getByText('$20.00 has been credited to your balance').waitFor({ timeout: 30_000 });
    await waitFor('the balance to show 20 USD', async () => ((await text(page, 'balance')) === '$20.00' ? true : undefined));
    const history = page.getByRole('region', { name: 'Purchase history' });
    expect(await history.getByRole('row').nth(1).textContent()).toContain('Credited');

    // Create an API key with a monthly limit; the secret is shown once, with a copy button.
    await go(page, 'API keys');
    const secretBox = await createKey(await openKeyForm(page, { 'Name': 'journey', 'Spending limit (USD)': '5', 'Limit resets': 'monthly' }));
    const secret = await secretBox.inputValue();
    expect(secret).toMatch(/^svc-[A-Za-z0-9_-]{43}$/);
    await page.getByRole('button', { name: 'Copy secret' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(secret);
    await page.getByRole('button', { name: 'Done' }).click();
    const row = page.getByRole('row').filter({ hasText: 'journey' });
    await row.waitFor();
    expect(await row.textContent()).toContain(`${secret.slice(0, 8)}…`);
    expect(await row.textContent()).not.toContain(secret.slice(8, 20));
    expect(await row.textContent()).toContain('$0.00 of $5.00 per month');

    // Search through the API with it.
    const searched = await call('POST', `${suite.gw}/v1/search`, { body: { query: `dashboard journey ${Date.now().toString(36)}`, model: 'exa/fast' }, headers: bearer(secret) });
    expect(searched.status).toBe(200);
    const requestId = String(searched.body.request_id);

    // The search in activity (with its attempt) once the ledger has it…
    await go(page, 'Activity');
    const searchRow = page.locator(`tr[data-request-id="${requestId}"]`);
    await waitFor('the search in the activity page, with its key\'s name', async () => {
      if ((await searchRow.count()) === 1 && ((await searchRow.textContent()) ?? '').includes('journey')) return true;
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.waitForTimeout(300);
      return undefined;
    }, { timeoutMs: 30_000 });
    expect(await searchRow.textContent()).toContain('journey');
    expect(await searchRow.textContent()).toContain('exa/fast');
    await searchRow.getByRole('button', { name: '1 attempt' }).click();
    expect(await searchRow.getByRole('button', { name: '1 attempt' }).getAttribute('aria-expanded')).toBe('true');
    expect(await page.locator(`#attempts-${requestId}`).textContent()).toContain('exa/fast via exa: success');

    // …in Usage, grouped by model, and in its CSV file…
    await go(page, 'Usage');
    await page.getByLabel('Group by').selectOption('model');
    await page.getByRole('button', { name: 'Show' }).click();
    const usageRow = page.getByRole('region', { name: 'Usage table' }).getByRole('row').filter({ hasText: 'exa/fast' });
    await usageRow.waitFor();
    const cost = Number(searched.body.cost_usd);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download CSV' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^usage-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}-by-model\.csv$/);
    expect(readFileSync(await download.path(), 'utf8')).toBe(`model,searches,failed_attempts,cost_usd,byok_fee_usd,cache_hits,cache_saved_usd\r\nexa/fast,1,0,${cost},0,0,0\r\n`);

    // …and in the overview's chart of spend per day by model.
    await go(page, 'Overview');
    await page.getByTestId('chart-models').waitFor();
    expect(await text(page, 'chart-models')).toContain('exa/fast');
    expect(await page.locator('canvas[role="img"]').getAttribute('aria-label')).toContain('exa/fast');
    expect(await text(page, 'month-spend')).not.toBe('$0.00');
    expect(await page.getByRole('alert').filter({ hasText: 'Your balance is low' }).count()).toBe(0);

    // Disable the key with its switch: the next search is refused.
    await go(page, 'API keys');
    const toggle = page.getByRole('switch', { name: 'journey enabled' });
    expect(await toggle.getAttribute('aria-checked')).toBe('true');
    await toggle.click();
    await page.getByRole('row').filter({ hasText: 'journey' }).getByText('Disabled').waitFor();
    expect(await toggle.getAttribute('aria-checked')).toBe('false');
    const refused = await call('POST', `${suite.gw}/v1/search`, { body: { query: 'after disabling', model: 'exa/fast' }, headers: bearer(secret) });
    expect([refused.status, refused.body.error.code]).toEqual([401, 'key_disabled']);
    await page.close();
  }, 120_000);

  it('key editing: create with every field, edit, see the API refuse a past expiry in the dialog, switch off and on, delete only after confirming; management keys the same', async () => {
    const page = await newAccountOn('API keys', 'editing');
    await page.getByText('No API keys yet').waitFor();

    // Open the dialog from the keyboard; Escape closes it and focus returns to the button.
    const createButton = page.getByRole('button', { name: 'Create API key' });
    await createButton.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Create an API key' });
    await dialog.waitFor();
    expect(await page.evaluate<string>("document.activeElement?.getAttribute('id') ?? ''")).toBe(await dialog.getByLabel('Name').getAttribute('id'));
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.evaluate<string>('document.activeElement?.textContent')).toBe('Create API key');

    const expiry = new Date(Date.now() + 3 * 86_400_000);
    expiry.setUTCSeconds(0, 0);
    const local = expiry.toISOString().slice(0, 16); // the browser runs in UTC
    await createKey(await openKeyForm(page, {
      'Name': 'edit-me', 'Spending limit (USD)': '12.5', 'Limit resets': 'weekly', 'Expires': local, 'Disabled (searches with this key are refused)': true,
    }));
    await page.getByRole('button', { name: 'Done' }).click();
    const [created] = await keyRecords(page);
    expect(created).toMatchObject({ name: 'edit-me', limit_usd: 12.5, limit_reset: 'weekly', expires_at: expiry.toISOString(), disabled: true });
    const row = page.getByRole('row').filter({ hasText: 'edit-me' });
    expect(await row.textContent()).toContain('$0.00 of $12.50 per week');
    expect(await row.textContent()).toContain('Disabled');
    expect(await row.getByRole('progressbar').count()).toBe(1);

    // Edit: a past expiry is refused by the API, whose message the dialog shows.
    await page.getByRole('button', { name: 'Edit edit-me' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit edit-me' });
    await edit.getByLabel('Expires').fill('2020-01-01T00:00');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.getByRole('alert').getByText('expires_at must be in the future').waitFor();
    // Then a real edit: rename, remove the limit (and so its reset) and the expiry, enable.
    await edit.getByLabel('Name').fill('edited');
    await edit.getByLabel('Spending limit (USD)').fill('');
    expect(await edit.getByLabel('Limit resets').isDisabled()).toBe(true);
    await edit.getByLabel('Expires').fill('');
    await edit.getByLabel('Disabled (searches with this key are refused)').uncheck();
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.waitFor({ state: 'hidden' });
    const editedRow = page.getByRole('row').filter({ hasText: 'edited' });
    await editedRow.getByText('Active').waitFor();
    expect((await keyRecords(page))[0]).toMatchObject({ id: created?.id, name: 'edited', limit_usd: null, limit_reset: null, expires_at: null, disabled: false });
    expect(await editedRow.textContent()).toContain('No limit');

    // The switch: off, then on again.
    const toggle = page.getByRole('switch', { name: 'edited enabled' });
    await toggle.click();
    await editedRow.getByText('Disabled').waitFor();
    expect((await keyRecords(page))[0]).toMatchObject({ disabled: true });
    await toggle.press('Space');
    await editedRow.getByText('Active').waitFor();
    expect((await keyRecords(page))[0]).toMatchObject({ disabled: false });

    // Delete: cancelling keeps the key; confirming removes it.
    await page.getByRole('button', { name: 'Delete edited' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete this API key?' });
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'hidden' });
    expect(await keyRecords(page)).toHaveLength(1);
    await page.getByRole('button', { name: 'Delete edited' }).click();
    await confirm.getByRole('button', { name: 'Delete key' }).click();
    await page.getByText('No API keys yet').waitFor();
    expect(await keyRecords(page)).toEqual([]);
    expect((await page.request.get(`${suite.gw}/dashboard/api/keys/${String(created?.id)}`)).status()).toBe(404);

    // Management keys: create (secret once), rename, switch off, delete after confirming.
    await go(page, 'Management keys');
    await page.getByRole('button', { name: 'Create management key' }).click();
    await page.getByRole('dialog', { name: 'Create a management key' }).getByLabel('Name').fill('ops');
    await page.getByRole('button', { name: 'Create key' }).click();
    const mgmtSecret = await page.getByRole('dialog', { name: 'Your new management key' }).getByLabel('Secret').inputValue();
    expect(mgmtSecret).toMatch(/^svc-mgmt-[A-Za-z0-9_-]{43}$/);
    await page.getByRole('button', { name: 'Done' }).click();
    expect((await call('GET', `${suite.gw}/v1/keys`, { headers: bearer(mgmtSecret) })).status).toBe(200);
    await page.getByRole('button', { name: 'Rename ops' }).click();
    await page.getByRole('dialog', { name: 'Rename management key' }).getByLabel('Name').fill('ops-renamed');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const mgmtRow = page.getByRole('row').filter({ hasText: 'ops-renamed' });
    await mgmtRow.waitFor();
    await page.getByRole('switch', { name: 'ops-renamed enabled' }).click();
    await mgmtRow.getByText('Disabled').waitFor();
    const refused = await call('GET', `${suite.gw}/v1/keys`, { headers: bearer(mgmtSecret) });
    expect([refused.status, refused.body.error.code]).toEqual([401, 'key_disabled']);
    await page.getByRole('button', { name: 'Delete ops-renamed' }).click();
    await page.getByRole('dialog', { name: 'Delete this management key?' }).getByRole('button', { name: 'Delete key' }).click();
    await page.getByText('No management keys').waitFor();

    // A session that ends (here: its cookie gone) sends the page back to sign-in, saying why.
    await browser.context.clearCookies();
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'API keys', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByText('Your session has ended. Sign in again to continue.').waitFor();
    await page.close();
  }, 120_000);

  it('key fences in the key form, then the audit log page: the changes, a filter, and a CSV export of them', async () => {
    const page = await newAccountOn('API keys', 'audit');
    const dialog = await openKeyForm(page, { 'Name': 'fenced', 'Allowed models': 'exa/*\nbrave/web', 'Allowed client addresses': '203.0.113.0/24, 2001:db8::/32' });
    const secret = await (await createKey(dialog)).inputValue();
    await page.getByRole('button', { name: 'Done' }).click();
    const [created] = await keyRecords(page);
    expect(created).toMatchObject({ name: 'fenced', allowed_models: ['exa/*', 'brave/web'], allowed_ips: ['203.0.113.0/24', '2001:db8::/32'] });
    await page.getByRole('row').filter({ hasText: 'fenced' }).getByText('Addresses: 203.0.113.0/24, 2001:db8::/32').waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'fenced' }).textContent()).toContain('Models: exa/*, brave/web');
    // Editing: clearing the address box removes that fence, and only that field is sent.
    await page.getByRole('button', { name: 'Edit fenced' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit fenced' });
    expect(await edit.getByLabel('Allowed models').inputValue()).toBe('exa/*\nbrave/web');
    await edit.getByLabel('Allowed client addresses').fill('');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await edit.waitFor({ state: 'hidden' });
    expect((await keyRecords(page))[0]).toMatchObject({ allowed_models: ['exa/*', 'brave/web'], allowed_ips: null });

    await go(page, 'Audit log');
    const rows = page.getByRole('region', { name: 'Audit log' }).getByRole('row');
    await rows.filter({ hasText: 'api_key.update' }).waitFor();
    // Sign-up made no entry; the key's creation and its edit did, newest first (the header row first).
    expect(await rows.count()).toBe(3);
    expect(await rows.nth(1).textContent()).toContain('allowed_ips: 203.0.113.0/24, 2001:db8::/32 → —');
    expect(await rows.nth(2).textContent()).toContain('api_key.create');
    await page.getByLabel('Action').selectOption('api_key.create');
    await page.getByRole('button', { name: 'Filter' }).click();
    await waitFor('the filtered log', async () => ((await page.locator('table.audit tbody tr').count()) === 1 ? true : undefined));

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    const path = await download.path();
    const csv = readFileSync(path, 'utf8');
    const lines = csv.trimEnd().split('\r\n');
    expect(lines[0]).toBe('at,actor_kind,actor_id,client_address,action,target_id,changes');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(',session,usr_');
    expect(lines[1]).toContain(`,api_key.create,${String(created?.id)},`);
    expect(lines[1]).toContain('""allowed_models"":{""after"":[""exa/*"",""brave/web""],""before"":null}');
    expect(csv).not.toContain(secret);
    await page.close();
  }, 60_000);

  it('provider keys: add, replace and delete a key per provider, showing only its masked label', async () => {
    const page = await newAccountOn('Provider keys', 'byok');
    const probe = await page.request.get(`${suite.gw}/dashboard/api/provider-keys`);
    expect(probe.status()).toBe(200);
    const braveRow = page.getByRole('row').filter({ hasText: 'Brave Search' });
    await braveRow.getByText('Not set (platform key)').waitFor();
    await page.getByRole('button', { name: 'Add Brave Search key' }).click();
    await page.getByRole('dialog').getByLabel('Brave Search API key').fill('BSA-dashboard-key-1234');
    await page.getByRole('button', { name: 'Save key' }).click();
    await braveRow.getByText('…1234').waitFor();
    expect(await page.content()).not.toContain('BSA-dashboard-key-1234');
    await page.getByRole('button', { name: 'Replace Brave Search key' }).click();
    await page.getByRole('dialog').getByLabel('Brave Search API key').fill('BSA-dashboard-key-5678');
    await page.getByRole('button', { name: 'Save key' }).click();
    await braveRow.getByText('…5678').waitFor();
    const listed = await page.request.get(`${suite.gw}/dashboard/api/provider-keys`);
    expect(((await listed.json()) as { data: { provider: string; label: string }[] }).data).toEqual([expect.objectContaining({ provider: 'brave', label: '…5678' })]);
    await page.getByRole('button', { name: 'Delete Brave Search key' }).click();
    await page.getByRole('dialog', { name: 'Delete this provider key?' }).getByRole('button', { name: 'Delete key' }).click();
    await braveRow.getByText('Not set (platform key)').waitFor();
    await page.close();
  }, 60_000);

  it('every page, signed out and in, at desktop and phone width: screenshots, no horizontal overflow, and no serious or critical axe-core violation', async () => {
    const page = await newPage();
    const problems: string[] = [];
    const check = (name: string, options: { fullPage?: boolean } = {}): Promise<void> => checkPage(page, name, problems, options);

    await page.goto(`${suite.gw}/dashboard/login`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await check('sign-in');
    await page.goto(`${suite.gw}/dashboard/signup`);
    await page.getByRole('heading', { name: 'Create an account' }).waitFor();
    await check('sign-up');

    // An account with something on every page: credits, keys, searches on two models, a purchase.
    await signUp(page, 'pictures');
    const accountId = await accountIdOf(page);
    await grant(accountId, 3);
    const csrf = await page.evaluate<string>("window.localStorage.getItem('svc_dashboard_csrf') ?? ''");
    const headers = { 'x-csrf-token': csrf };
    const created = await page.request.post(`${suite.gw}/dashboard/api/keys`, { data: { name: 'production', limit_usd: 0.05, limit_reset: 'daily' }, headers });
    const secret = String(((await created.json()) as { secret: string }).secret);
    await page.request.post(`${suite.gw}/dashboard/api/keys`, { data: { name: 'staging' }, headers });
    await page.request.post(`${suite.gw}/dashboard/api/management-keys`, { data: { name: 'deploy bot' }, headers });
    const checkout = await page.request.post(`${suite.gw}/dashboard/api/credits/checkout`, { data: { amount_usd: 50 }, headers });
    expect(checkout.status()).toBe(201);
    // The first query twice: the second time it is answered from the result cache. The
    // second and third with filters, as sent (the activity shows them in canonical form).
    const first = `first ${Date.now().toString(36)}`;
    const searches = [
      { query: first, model: 'exa/fast' },
      { query: 'second', model: 'brave/web', cache: 'off', safesearch: 'strict', language: 'de', country: 'DE', published_after: '2025-01-31T12:00:00+01:00' },
      { query: 'third sim:exa=error500', model: 'exa/fast', models: ['tavily/basic'], cache: 'off', include_domains: ['Example.org', 'docs.example.com'], published_before: '2026-06-30' },
      { query: first, model: 'exa/fast' },
    ];
    const statuses: unknown[] = [];
    const requestIds: string[] = [];
    for (const [i, body] of searches.entries()) {
      const searched = await call('POST', `${suite.gw}/v1/search`, { body, headers: bearer(secret) });
      expect([i, searched.status]).toEqual([i, 200]);
      statuses.push(searched.body.cache.status);
      requestIds.push(String(searched.body.request_id));
    }
    expect(statuses).toEqual(['miss', 'off', 'off', 'hit']);
    // A page read (an extract): one page from Exa, one Exa cannot fetch from Tavily.
    const extracted = await call('POST', `${suite.gw}/v1/extract`, {
      body: { urls: ['https://docs.example.org/guide/setup', 'https://example.com/sim-fail-exa/article'], models: ['exa/contents', 'tavily/extract'], cache: 'off' },
      headers: bearer(secret),
    });
    expect(extracted.status).toBe(200);
    const extractId = String(extracted.body.request_id);
    await waitFor('four searches and a page read in the activity', async () => {
      const activity = await page.request.get(`${suite.gw}/dashboard/api/activity`);
      return ((await activity.json()) as { data: unknown[] }).data.length === 5 ? true : undefined;
    }, { timeoutMs: 30_000 });
    // A provider key for the picture, set after the searches (the simulator would refuse it).
    expect((await page.request.put(`${suite.gw}/dashboard/api/provider-keys/exa`, { data: { key: 'exa-docs-example-9f3c' }, headers })).status()).toBe(200);

    for (const p of PAGES) {
      await page.goto(`${suite.gw}/dashboard${p.path}`);
      await page.getByRole('heading', { level: 1, name: p.heading }).waitFor();
      await page.getByRole('status').filter({ hasText: 'Loading' }).first().waitFor({ state: 'detached' }).catch(() => undefined);
      if (p.name === 'activity') {
        // The page read first (newest), as such, with its two models' pages; the searches as searches.
        expect(await page.getByTestId('activity-kind').allTextContents()).toEqual(['Page read', 'Search', 'Search', 'Search', 'Search']);
        const readRow = page.locator(`tr[data-request-id="${extractId}"]`);
        await readRow.getByRole('button', { name: '2 attempts' }).click();
        const readAttempts = await page.locator(`#attempts-${extractId} li`).allTextContents();
        expect(readAttempts).toEqual([expect.stringContaining('exa/contents via exa: success'), expect.stringContaining('tavily/extract via tavily: success')]);
        expect(readAttempts[0]).toContain('1 page, $0.00125');
        await readRow.getByRole('button', { name: '2 attempts' }).click();
        await page.locator(`tr[data-request-id="${requestIds[2] ?? ''}"]`).getByRole('button', { name: '2 attempts' }).click();
        expect((await page.getByTestId('activity-cache').allTextContents())[1]).toBe('From cache');
        // Each search with the filters it was made with, in the declaration's order; none on the others.
        const filtersOf = (i: number) => page.locator(`tr[data-request-id="${requestIds[i] ?? ''}"] [data-testid="activity-filters"]`);
        expect(await filtersOf(1).locator('li').allTextContents()).toEqual(['country DE', 'language de', 'published after 2025-01-31 11:00:00 UTC', 'safe search strict']);
        expect(await filtersOf(2).locator('li').allTextContents()).toEqual(['only docs.example.com, example.org', 'published before 2026-06-30']);
        expect([await filtersOf(0).textContent(), await filtersOf(3).textContent()]).toEqual(['None', 'None']);
        // The hit's attempt says what the cache saved against exa/fast's full price (0.009 - 0.0009).
        const hitRow = page.locator(`tr[data-request-id="${requestIds[3] ?? ''}"]`);
        await hitRow.getByRole('button', { name: '1 attempt' }).click();
        expect(await page.locator(`#attempts-${requestIds[3] ?? ''}`).textContent()).toContain('(from cache, saved $0.0081)');
        await hitRow.getByRole('button', { name: '1 attempt' }).click();
        // Opening the attempts scrolled the table sideways: back to its first column for the picture.
        await page.getByRole('region', { name: 'Recent searches' }).evaluate((region) => { region.scrollLeft = 0; });
      }
      if (p.name === 'usage') expect(await text(page, 'usage-cache')).toBe('1 answered from the cache, saving $0.0081');
      await check(p.name);
      if (p.name === 'usage') {
        // By kind: the searches and the page reads, each with its cost.
        await page.getByLabel('Group by').selectOption('kind');
        await page.getByRole('button', { name: 'Show' }).click();
        const table = page.getByRole('region', { name: 'Usage table' });
        await table.getByRole('rowheader', { name: 'Page reads (extract)' }).waitFor();
        expect(await table.locator('tbody th').allTextContents()).toEqual(['Page reads (extract)', 'Searches']);
        expect(await table.locator('tbody tr').first().locator('[data-label="Cost"]').textContent()).toBe('$0.01125');
        await check('usage-by-kind');
      }
      if (p.name === 'api-keys') {
        // The dialogs too: creating a key (every field), its secret shown once, and a confirmation.
        const dialog = await openKeyForm(page, { 'Name': 'nightly jobs', 'Spending limit (USD)': '20', 'Limit resets': 'weekly' });
        await check('api-keys-create', { fullPage: false });
        await createKey(dialog);
        await check('api-keys-secret', { fullPage: false });
        await page.getByRole('button', { name: 'Done' }).click();
        await page.getByRole('button', { name: 'Delete staging' }).click();
        await page.getByRole('dialog', { name: 'Delete this API key?' }).waitFor();
        await check('api-keys-delete', { fullPage: false });
        await page.getByRole('button', { name: 'Cancel' }).click();
      }
    }
    expect(problems).toEqual([]);
    await page.close();
  }, 180_000);
});

describe('the provider keys page on a deployment without provider keys', () => {
  const browser = useChromium('svc-dashboard-chromium-', { viewport: DESKTOP });
  const suite = useStack({ name: 'dashboard_nobyok', redisDb: 13, logLevel: 'warn', accountAdminEnv: { BYOK_ENABLED: 'false' } });

  it('says that provider keys are turned off (503 byok_disabled), with no form to add one', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${suite.gw}/dashboard/signup`);
    await page.getByLabel('Email').fill(`nobyok-${Date.now()}@example.com`);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Provider keys', exact: true }).click();
    const probe = await page.request.get(`${suite.gw}/dashboard/api/provider-keys`);
    expect([probe.status(), ((await probe.json()) as { error: { code: string } }).error.code]).toEqual([503, 'byok_disabled']);
    await page.getByText('Provider keys are turned off on this deployment.').waitFor();
    expect(await page.getByRole('button', { name: /^Add / }).count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'dashboard-provider-keys-disabled-desktop.png'), fullPage: true });
    await page.close();
  }, 60_000);
});
