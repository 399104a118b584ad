import type { Page } from 'playwright-core';
import { MailCatcher, smtpEnv, useStack } from '@svc/test-kit';
import type { CaughtMail } from '@svc/test-kit';
import { checkPage, DESKTOP, useChromium } from './chromium';

/**
 * The dashboard's mail pages in Chromium, on a stack that confirms sign-ups by mail
 * (SIGNUP_CONFIRMATION=required) and sends through a real SMTP server on this machine: sign up
 * and see "check your email", open the link from the message and confirm, sign in, choose the
 * alerts mailed on Notifications, forget the password and set a new one from the reset link.
 * Every page is screenshotted and scanned by axe-core at desktop and phone width.
 */
const PASSWORD = 'a long enough password';
const NEW_PASSWORD = 'an even longer new password';

describe('the dashboard\'s mail pages in Chromium', () => {
  const pageErrors: string[] = [];
  const browser = useChromium('svc-dashboard-email-', { viewport: DESKTOP });
  let catcher: MailCatcher | undefined;
  beforeAll(async () => {
    catcher = await MailCatcher.start({ httpPort: null });
  });
  const suite = useStack(() => ({ name: 'dash_email', redisDb: 6, accountAdminEnv: { ...smtpEnv(mails()), SIGNUP_CONFIRMATION: 'required' }, logLevel: 'warn' }));
  afterAll(async () => {
    await catcher?.stop();
  });

  function mails(): MailCatcher {
    if (catcher === undefined) throw new Error('the mail catcher has not started');
    return catcher;
  }

  beforeAll(() => {
    browser.context.on('page', (page) => {
      page.on('pageerror', (error) => pageErrors.push(`pageerror: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())) pageErrors.push(`console: ${message.text()}`);
      });
    });
  });

  afterEach(() => {
    expect(pageErrors.splice(0)).toEqual([]);
  });

  /** The link of the message to `address` with `subject`, as the message's HTML links it. */
  async function linkOf(address: string, subject: string): Promise<string> {
    const mail: CaughtMail = await mails().waitFor((m) => m.envelope.to.includes(address) && m.subject === subject);
    const href = /href="([^"]+#token=[A-Za-z0-9_-]{43})"/.exec(mail.html ?? '')?.[1];
    if (href === undefined) throw new Error(`no link in ${subject}`);
    return href.replace(/&amp;/g, '&');
  }

  it('sign up, confirm from the mail, sign in, choose alerts by email, then reset a forgotten password from the mail', async () => {
    await browser.context.clearCookies();
    const page: Page = await browser.context.newPage();
    const problems: string[] = [];
    const email = `browser-${Date.now().toString(36)}@example.com`;

    // Sign up: "check your email", the same words whoever the address belongs to.
    await page.goto(`${suite.gw}/dashboard/signup`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Check your email' }).waitFor();
    await page.getByRole('status').getByText(email).waitFor();
    await checkPage(page, 'sign-up-check-email', problems);

    // The link from the message: a page with one button, and the token gone from the address bar.
    await page.goto(await linkOf(email, 'Confirm your email address'));
    await page.getByRole('heading', { name: 'Confirm your email address' }).waitFor();
    expect(page.url()).toBe(`${suite.gw}/dashboard/confirm`);
    await checkPage(page, 'confirm', problems);
    await page.getByRole('button', { name: 'Confirm email address' }).click();
    await page.getByRole('heading', { name: 'Your address is confirmed' }).waitFor();
    await checkPage(page, 'confirmed', problems);

    await page.getByRole('link', { name: 'Sign in' }).first().click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();

    // A webhook endpoint for balance.low, so the page shows both ways of hearing about it.
    const csrf = await page.evaluate<string>("window.localStorage.getItem('svc_dashboard_csrf') ?? ''");
    const hook = await page.request.post(`${suite.gw}/dashboard/api/webhook-endpoints`, { data: { url: 'http://127.0.0.1:9/hooks', events: ['balance.low'] }, headers: { 'x-csrf-token': csrf } });
    expect(hook.status()).toBe(201);

    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Notifications', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Notifications' }).waitFor();
    const row = (type: string) => page.locator(`tr[data-event-type="${type}"]`);
    await row('balance.low').getByText('http://127.0.0.1:9/hooks').waitFor();
    expect(await row('balance.low').getByRole('switch').getAttribute('aria-checked')).toBe('true');
    expect(await row('auto_topup.failed').getByRole('switch').getAttribute('aria-checked')).toBe('true');
    const keyLimit = row('key.limit.threshold').getByRole('switch');
    expect(await keyLimit.getAttribute('aria-checked')).toBe('false');
    await keyLimit.click();
    await page.locator('tr[data-event-type="key.limit.threshold"] [role="switch"][aria-checked="true"]').waitFor();
    await checkPage(page, 'notifications', problems);
    const stored = await page.request.get(`${suite.gw}/dashboard/api/notifications`);
    expect(((await stored.json()) as { data: { event_type: string; email: boolean }[] }).data.find((s) => s.event_type === 'key.limit.threshold')?.email).toBe(true);

    // Forgotten: sign out, ask for a link, set a new password from it.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    await checkPage(page, 'forgot-password', problems);
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page.getByRole('heading', { name: 'Check your email' }).waitFor();

    await page.goto(await linkOf(email, 'Reset your password'));
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    expect(page.url()).toBe(`${suite.gw}/dashboard/reset-password`);
    await checkPage(page, 'reset-password', problems);
    await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Save new password' }).click();
    await page.getByRole('heading', { name: 'Your password is changed' }).waitFor();
    await page.getByRole('button', { name: 'Continue to the dashboard' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const me = await page.request.get(`${suite.gw}/dashboard/api/me`);
    expect(((await me.json()) as { email: string }).email).toBe(email);

    // The old password no longer signs in; the new one does.
    expect((await page.request.post(`${suite.gw}/dashboard/api/login`, { data: { email, password: PASSWORD } })).status()).toBe(400);
    expect((await page.request.post(`${suite.gw}/dashboard/api/login`, { data: { email, password: NEW_PASSWORD } })).status()).toBe(200);
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);
});
