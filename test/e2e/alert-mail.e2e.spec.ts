import { bearer, call, grantCredits, MailCatcher, newAccount, smtpEnv, useStack, waitFor, SETTLING_STACK } from '@svc/test-kit';

/**
 * Alerts by email, end to end: billing's ledger worker makes balance.low (decision 28) and hands
 * it to account-admin's mail queue, which mails the owner through a real SMTP server on this
 * machine (the test-kit's MailCatcher), once per crossing, as the owner's notification settings
 * say (decision 54).
 */
describe('alerts by email', () => {
  let catcher: MailCatcher | undefined;
  beforeAll(async () => {
    catcher = await MailCatcher.start({ httpPort: null });
  });
  const suite = useStack(() => ({ ...SETTLING_STACK, name: 'alert_mail', redisDb: 7, accountAdminEnv: smtpEnv(catcher as MailCatcher) }), { accountsDb: true });
  afterAll(async () => {
    await catcher?.stop();
  });

  const lowBalanceMails = (to: string): string[] => (catcher as MailCatcher).to(to).map((m) => m.subject).filter((s) => s.startsWith('Your balance is low'));
  const settle = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

  it('a low balance mails the owner once per crossing, and not at all once the owner turns it off', async () => {
    const owner = await newAccount(suite.gw, 'alert');
    const me = await call('GET', `${suite.gw}/dashboard/api/me`, { headers: owner.session });
    const email = String(me.body.email);
    const mgmt = bearer(owner.managementKey);
    await grantCredits(suite.stack, owner.accountId, 3_000_000, { redis: suite.redis });

    // A threshold above the balance: one balance.low at once (docs/api.md 17.4), one mail.
    expect((await call('PATCH', `${suite.gw}/v1/billing/settings`, { body: { low_balance_threshold_usd: 5 }, headers: mgmt })).status).toBe(200);
    const first = await (catcher as MailCatcher).waitFor((m) => m.envelope.to.includes(email) && m.subject.startsWith('Your balance is low'));
    expect(first.subject).toBe('Your balance is low: $3.00');
    expect(first.text).toContain('fell below the threshold you set, $5.00');
    expect(first.text).toContain(`${suite.gw}/dashboard/credits`);
    expect(first.html).toContain(`${suite.gw}/dashboard/notifications`);
    // The balance stays below for many ticks of the worker: still one event, one mail.
    await settle(4_000);
    expect(lowBalanceMails(email)).toEqual(['Your balance is low: $3.00']);
    const events = await call('GET', `${suite.gw}/v1/events?type=balance.low`, { headers: mgmt });
    expect(events.body.data).toHaveLength(1);

    // Credits bring it back above; a new threshold above it is a second crossing: a second mail.
    await grantCredits(suite.stack, owner.accountId, 10_000_000);
    await waitFor('the balance back at 13 USD', async () => {
      const credits = await call('GET', `${suite.gw}/v1/credits`, { headers: mgmt });
      return credits.body.balance_usd === 13 ? true : undefined;
    });
    expect((await call('PATCH', `${suite.gw}/v1/billing/settings`, { body: { low_balance_threshold_usd: 20 }, headers: mgmt })).status).toBe(200);
    await waitFor('the second mail', () => (lowBalanceMails(email).length === 2 ? true : undefined));
    expect(lowBalanceMails(email)).toEqual(['Your balance is low: $3.00', 'Your balance is low: $13.00']);

    // The owner turns the low-balance email off: the next crossing is an event (and a webhook's
    // business), recorded as skipped, and mailed to nobody.
    const off = await call('PUT', `${suite.gw}/dashboard/api/notifications/balance.low`, { body: { email: false }, headers: owner.session });
    expect(off.status).toBe(200);
    await grantCredits(suite.stack, owner.accountId, 100_000_000);
    await waitFor('the balance back at 113 USD', async () => {
      const credits = await call('GET', `${suite.gw}/v1/credits`, { headers: mgmt });
      return credits.body.balance_usd === 113 ? true : undefined;
    });
    expect((await call('PATCH', `${suite.gw}/v1/billing/settings`, { body: { low_balance_threshold_usd: 200 }, headers: mgmt })).status).toBe(200);
    const third = await waitFor('the third event', async () => {
      const listed = await call('GET', `${suite.gw}/v1/events?type=balance.low`, { headers: mgmt });
      return listed.body.data.length === 3 ? String(listed.body.data[0].id) : undefined;
    });
    const record = await waitFor('its record', async () => {
      const rows = await suite.accountsDb.query<{ status: string; detail: string }>('SELECT status, detail FROM mail_messages WHERE event_id = $1', [third]);
      return rows.rows[0];
    });
    expect(record).toEqual({ status: 'skipped', detail: "email is off for balance.low in the owner's notification settings" });
    await settle(1_500);
    expect(lowBalanceMails(email)).toHaveLength(2);
  }, 90_000);
});
