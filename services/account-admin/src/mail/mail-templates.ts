import type { AccountMailKind, AlertEvent } from '@svc/contracts';

/** A message's words: its subject, and paragraphs with at most one button-like link. */
export interface MailContent {
  subject: string;
  text: string;
  html: string;
}

/** What a template may say besides its kind: the dashboard's address, the link it carries, an alert's event. */
export interface MailContext {
  /** The dashboard's address (`<PUBLIC_BASE_URL>/dashboard`); every message links it. */
  dashboardUrl: string;
  /** The single-use link of a confirmation or reset, and how long it works. */
  link?: { url: string; validFor: string };
  /** An alert's event (kind `alert`). */
  event?: AlertEvent;
}

/** One block of a message: words, or a link shown as a button (its address also written out). */
type Block = { text: string } | { action: string; url: string };

interface Template {
  subject: string;
  blocks: Block[];
  /** Why the recipient gets it, shown small at the end. */
  footer: string;
}

const BRAND = 'Search gateway';

/** Renders a message of `kind`; a template that needs a link or an event and has none is a fault. */
export function renderMail(kind: AccountMailKind | 'alert', context: MailContext): MailContent {
  return layout(templateOf(kind, context), context.dashboardUrl);
}

function templateOf(kind: AccountMailKind | 'alert', context: MailContext): Template {
  const page = (path: string): string => `${context.dashboardUrl}${path}`;
  switch (kind) {
    case 'signup.confirm': {
      const link = required(context.link, kind);
      return {
        subject: 'Confirm your email address',
        blocks: [
          { text: `Someone, we hope you, asked for a ${BRAND} account with this address. Confirm the address to finish: the account is made only then.` },
          { action: 'Confirm my email address', url: link.url },
          { text: `The link works once, for ${link.validFor}. If it has expired, sign up again for a new one.` },
          { text: 'If you did not sign up, ignore this message: no account is made without this link.' },
        ],
        footer: 'You receive this because this address was entered on the sign-up page.',
      };
    }
    case 'signup.registered':
      return {
        subject: 'Someone tried to sign up with your address',
        blocks: [
          { text: `Someone tried to create a ${BRAND} account with this address, which already has one. Nothing was changed.` },
          { text: 'If it was you, sign in with your password, or reset it if you have forgotten it:' },
          { action: 'Sign in', url: page('/login') },
          { text: `Forgot your password? Reset it at ${page('/forgot-password')}` },
          { text: 'If it was not you, there is nothing to do: your account and its password are unchanged.' },
        ],
        footer: 'You receive this because this address was entered on the sign-up page.',
      };
    case 'password_reset.link': {
      const link = required(context.link, kind);
      return {
        subject: 'Reset your password',
        blocks: [
          { text: `Someone, we hope you, asked to reset the password of your ${BRAND} account.` },
          { action: 'Choose a new password', url: link.url },
          { text: `The link works once, for ${link.validFor}. Choosing a new password signs out every other session of your account.` },
          { text: 'If you did not ask, ignore this message: your password stays as it is.' },
        ],
        footer: 'You receive this because this address was entered on the password-reset page.',
      };
    }
    case 'password_reset.unknown':
      return {
        subject: 'Password reset requested',
        blocks: [
          { text: `Someone asked to reset the password of a ${BRAND} account for this address, but no account uses this address.` },
          { text: 'If it was you, your account may use another address of yours. Or create an account with this one:' },
          { action: 'Create an account', url: page('/signup') },
          { text: 'If it was not you, ignore this message.' },
        ],
        footer: 'You receive this because this address was entered on the password-reset page.',
      };
    case 'password_reset.done':
      return {
        subject: 'Your password was changed',
        blocks: [
          { text: `The password of your ${BRAND} account was just changed with a reset link, and every other session of the account was signed out.` },
          { text: 'If this was not you, reset the password again at once and check the audit log of your account:' },
          { action: 'Reset my password', url: page('/forgot-password') },
        ],
        footer: 'You receive this because your password was changed.',
      };
    case 'alert':
      return alertTemplate(required(context.event, kind), page);
  }
}

function alertTemplate(event: AlertEvent, page: (path: string) => string): Template {
  const data = event.data;
  const footer = `You receive this alert by email because it is on in your notification settings: ${page('/notifications')}`;
  switch (event.type) {
    case 'balance.low':
      return {
        subject: `Your balance is low: ${usd(data['balance_usd'])}`,
        blocks: [
          { text: `Your account's balance, ${usd(data['balance_usd'])}, fell below the threshold you set, ${usd(data['threshold_usd'])}. Searches are refused once it cannot pay for them.` },
          { action: 'Buy credits', url: page('/credits') },
          { text: 'You get this once each time the balance falls below the threshold.' },
        ],
        footer,
      };
    case 'key.limit.threshold':
      return {
        subject: `An API key used ${num(data['percent'])} % of its limit`,
        blocks: [
          { text: `The API key ${str(data['key_id'])} has spent ${usd(data['usage_usd'])} of its ${usd(data['limit_usd'])} limit${periodOf(data)}.` },
          { action: 'See your API keys', url: page('/keys') },
        ],
        footer,
      };
    case 'auto_topup.failed':
      return {
        subject: 'An automatic top-up was not made',
        blocks: [
          {
            text: data['reason'] === 'monthly_cap_reached'
              ? `An automatic top-up of ${usd(data['amount_usd'])} was not made: it would pass your monthly cap of ${usd(data['monthly_cap_usd'])}. Your balance is ${usd(data['balance_usd'])}.`
              : `An automatic top-up of ${usd(data['amount_usd'])} failed (${str(data['failure_code'])}). Your balance is ${usd(data['balance_usd'])}.${data['auto_topup_disabled'] === true ? ' Automatic top-up is now off until you save its settings again.' : ''}`,
          },
          { action: 'Check your billing settings', url: page('/billing-settings') },
        ],
        footer,
      };
    case 'auto_topup.succeeded':
      return {
        subject: `Automatic top-up: ${usd(data['amount_usd'])} added`,
        blocks: [
          { text: `An automatic top-up charged your saved card ${usd(data['amount_usd'])} and added it to your balance, which is now ${usd(data['balance_usd'])}.` },
          { action: 'See your credits', url: page('/credits') },
        ],
        footer,
      };
  }
}

function layout(template: Template, dashboardUrl: string): MailContent {
  const text = [
    ...template.blocks.map((block) => ('text' in block ? block.text : `${block.action}: ${block.url}`)),
    `Your dashboard: ${dashboardUrl}`,
    '--',
    template.footer,
  ].join('\n\n');
  const html = [
    '<!doctype html>',
    `<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(template.subject)}</title></head>`,
    '<body style="margin:0;padding:24px;background:#f4f5f7;font-family:Arial,Helvetica,sans-serif;color:#1f2933">',
    '<div style="max-width:560px;margin:0 auto;background:#ffffff;border-radius:8px;padding:24px">',
    `<p style="margin:0 0 16px;font-weight:bold;color:#3b4cca">${BRAND}</p>`,
    ...template.blocks.map((block) => ('text' in block
      ? `<p style="margin:0 0 16px;line-height:1.5">${escapeHtml(block.text)}</p>`
      : `<p style="margin:0 0 16px"><a href="${escapeHtml(block.url)}" style="display:inline-block;background:#3b4cca;color:#ffffff;padding:10px 16px;border-radius:6px;text-decoration:none">${escapeHtml(block.action)}</a></p>`
        + `<p style="margin:0 0 16px;font-size:13px;color:#52606d">Or open this address: ${escapeHtml(block.url)}</p>`)),
    `<p style="margin:0 0 16px">Your dashboard: <a href="${escapeHtml(dashboardUrl)}">${escapeHtml(dashboardUrl)}</a></p>`,
    `<p style="margin:24px 0 0;font-size:12px;color:#7b8794">${escapeHtml(template.footer)}</p>`,
    '</div></body></html>',
  ].join('\n');
  return { subject: template.subject, text, html };
}

/** The five characters HTML gives a meaning to, in text and in a quoted attribute. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

function required<T>(value: T | undefined, kind: string): T {
  if (value === undefined) throw new Error(`the ${kind} message needs its ${kind === 'alert' ? 'event' : 'link'}`);
  return value;
}

/** A USD amount of an event's data, as the dashboard shows it ($4.98). */
function usd(value: unknown): string {
  return typeof value === 'number' && Number.isFinite(value) ? `$${value.toFixed(2)}` : 'an unknown amount';
}

function num(value: unknown): string {
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : '?';
}

function str(value: unknown): string {
  return typeof value === 'string' && value !== '' ? value : 'unknown';
}

function periodOf(data: AlertEvent['data']): string {
  const end = data['period_end'];
  return typeof end === 'string' ? ` in the period ending ${end.slice(0, 10)}` : '';
}
