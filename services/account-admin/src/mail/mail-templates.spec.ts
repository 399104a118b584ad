import { ACCOUNT_MAIL_KINDS, ALERT_EVENT_TYPES } from '@svc/contracts';
import type { AlertEvent } from '@svc/contracts';
import { escapeHtml, renderMail } from './mail-templates';

const DASHBOARD = 'https://api.example.com/dashboard';
const LINK = { url: `${DASHBOARD}/confirm#token=abc&def`, validFor: '24 hours' };

function event(type: AlertEvent['type'], data: Record<string, unknown>): AlertEvent {
  return { id: 'evt_1', type, account_id: 'acct_1', created_at: '2026-12-08T10:00:00.000Z', data };
}

describe('mail templates', () => {
  it.each(ACCOUNT_MAIL_KINDS.map((kind) => [kind]))('%s has a subject, both bodies and the dashboard link in each', (kind) => {
    const mail = renderMail(kind, { dashboardUrl: DASHBOARD, link: LINK });
    expect(mail.subject.length).toBeGreaterThan(5);
    expect(mail.text).toContain(`Your dashboard: ${DASHBOARD}`);
    expect(mail.html).toContain(`href="${DASHBOARD}"`);
    expect(mail.html.startsWith('<!doctype html>')).toBe(true);
  });

  it('puts the link in both bodies, escaped in the HTML', () => {
    const mail = renderMail('signup.confirm', { dashboardUrl: DASHBOARD, link: LINK });
    expect(mail.text).toContain(LINK.url);
    expect(mail.html).toContain('href="https://api.example.com/dashboard/confirm#token=abc&amp;def"');
    expect(mail.text).toContain('for 24 hours');
  });

  it('refuses to render a link message without its link, and an alert without its event', () => {
    expect(() => renderMail('password_reset.link', { dashboardUrl: DASHBOARD })).toThrow(/needs its link/);
    expect(() => renderMail('alert', { dashboardUrl: DASHBOARD })).toThrow(/needs its event/);
  });

  it.each(ALERT_EVENT_TYPES.map((type) => [type]))('the %s alert links the notification settings and shows amounts as the dashboard does', (type) => {
    const mail = renderMail('alert', { dashboardUrl: DASHBOARD, event: event(type, { balance_usd: 4.5, threshold_usd: 5, amount_usd: 25, usage_usd: 8, limit_usd: 10, percent: 80, reason: 'payment_failed', failure_code: 'card_declined' }) });
    expect(mail.text).toContain(`${DASHBOARD}/notifications`);
    expect(mail.text).toMatch(/\$\d+\.\d\d/);
    expect(mail.text).not.toContain('unknown amount');
  });

  it('escapes what an event carries in the HTML body', () => {
    const mail = renderMail('alert', { dashboardUrl: DASHBOARD, event: event('key.limit.threshold', { key_id: '<script>x</script>', percent: 80, usage_usd: 8, limit_usd: 10 }) });
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).toContain('&lt;script&gt;x&lt;/script&gt;');
    expect(escapeHtml(`a&b<c>"d"'e'`)).toBe('a&amp;b&lt;c&gt;&quot;d&quot;&#39;e&#39;');
  });
});
