import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '@svc/test-kit';
import { parseConfig } from '../src/config';
import { call, errorOf, INTERNAL_TOKEN, startHarness } from './harness';
import type { Harness } from './harness';

const PASSWORD = 'a long enough password';

describe('login and signup are rate limited per email and per client address', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('sign_in_limits', { SIGN_IN_ATTEMPTS_PER_EMAIL: '5', SIGN_IN_ATTEMPTS_PER_ADDRESS: '12', SIGN_IN_WINDOW_SECONDS: '600' });
  });

  afterAll(async () => {
    await h.close();
  });

  // Each test speaks for its own client address (through the gateway's x-forwarded-for).
  const from = (address: string): Record<string, string> => ({ 'x-svc-internal-token': INTERNAL_TOKEN, 'x-forwarded-for': `203.0.113.9, ${address}` });

  it('answers wrong passwords for one email with 400 until the limit, then 429 rate_limited with Retry-After, also for the right password', async () => {
    const email = 'guessed@example.com';
    expect((await call(h.baseUrl, 'POST', '/dashboard/api/signup', { json: { email, password: PASSWORD }, headers: from('198.51.100.1') })).status).toBe(201);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const address = `198.51.100.${10 + i}`;
      statuses.push((await call(h.baseUrl, 'POST', '/dashboard/api/login', { json: { email, password: `wrong password ${i}` }, headers: from(address) })).status);
    }
    // The signup counted once against the email: 4 more attempts fit in its 5.
    expect(statuses).toEqual([400, 400, 400, 400, 429, 429, 429, 429]);
    const right = await call(h.baseUrl, 'POST', '/dashboard/api/login', { json: { email, password: PASSWORD }, headers: from('198.51.100.99') });
    expect(right.status).toBe(429);
    expect(errorOf(right).code).toBe('rate_limited');
    const retryAfter = Number(right.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(600);
  });

  it('limits one client address across many emails', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 14; i++) {
      statuses.push((await call(h.baseUrl, 'POST', '/dashboard/api/login', { json: { email: `nobody-${i}@example.com`, password: 'wrong password' }, headers: from('192.0.2.77') })).status);
    }
    expect(statuses.slice(0, 12).every((s) => s === 400)).toBe(true);
    expect(statuses.slice(12)).toEqual([429, 429]);
    // Another address is not affected.
    expect((await call(h.baseUrl, 'POST', '/dashboard/api/login', { json: { email: 'nobody-0@example.com', password: 'wrong password' }, headers: from('192.0.2.78') })).status).toBe(400);
  });

  it('ignores x-forwarded-for without the internal token (a caller cannot pick its address)', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 14; i++) {
      const spoofed = { 'x-forwarded-for': `10.9.8.${i}` };
      statuses.push((await call(h.baseUrl, 'POST', '/dashboard/api/login', { json: { email: `spoof-${i}@example.com`, password: 'wrong password' }, headers: spoofed })).status);
    }
    expect(statuses.slice(12)).toEqual([429, 429]);
  });

  it('a successful login clears its email count', async () => {
    const email = 'owner@example.com';
    expect((await call(h.baseUrl, 'POST', '/dashboard/api/signup', { json: { email, password: PASSWORD }, headers: from('198.51.100.200') })).status).toBe(201);
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 3; i++) {
        await call(h.baseUrl, 'POST', '/dashboard/api/login', { json: { email, password: 'typo password' }, headers: from(`198.51.100.${201 + round}`) });
      }
      expect((await call(h.baseUrl, 'POST', '/dashboard/api/login', { json: { email, password: PASSWORD }, headers: from(`198.51.100.${201 + round}`) })).status).toBe(200);
    }
  });
});

describe('the session cookie', () => {
  it('is Secure by default (COOKIE_SECURE defaults to true; only the local stack turns it off)', async () => {
    expect(parseConfig({ INTERNAL_TOKEN, BYOK_ENABLED: 'false', SIGNUP_CONFIRMATION: 'off' }).COOKIE_SECURE).toBe(true);
    const h = await startHarness('cookie_secure', { COOKIE_SECURE: 'true' });
    try {
      const response = await call(h.baseUrl, 'POST', '/dashboard/api/signup', { json: { email: 'secure@example.com', password: PASSWORD } });
      const cookie = response.headers.get('set-cookie') ?? '';
      expect(cookie).toMatch(/; Secure/);
      expect(cookie).toMatch(/HttpOnly/);
      expect(cookie).toMatch(/SameSite=Strict/);
    } finally {
      await h.close();
    }
  });
});

describe('reset-password (the local stack resets its demo user with it)', () => {
  it('sets a new password, ends the user\'s sessions, and never prints the password', async () => {
    const h = await startHarness('reset_password');
    try {
      const email = 'demo@example.com';
      const signup = await call(h.baseUrl, 'POST', '/dashboard/api/signup', { json: { email, password: PASSWORD } });
      const cookie = (signup.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
      const newPassword = 'a brand new demo password';
      const result = spawnSync(process.execPath, [join(repoRoot(), 'services/account-admin/dist/sessions/reset-password-cli.js')], {
        env: { PATH: process.env.PATH ?? '', DATABASE_URL: h.config.DATABASE_URL, RESET_EMAIL: email, RESET_PASSWORD: newPassword },
        encoding: 'utf8',
      });
      expect(result.status).toBe(0);
      expect(`${result.stdout}${result.stderr}`).not.toContain(newPassword);
      expect((await call(h.baseUrl, 'POST', '/dashboard/api/login', { json: { email, password: PASSWORD } })).status).toBe(400);
      expect((await call(h.baseUrl, 'POST', '/dashboard/api/login', { json: { email, password: newPassword } })).status).toBe(200);
      expect((await call(h.baseUrl, 'GET', '/dashboard/api/me', { headers: { cookie } })).status).toBe(401);
      const unknown = spawnSync(process.execPath, [join(repoRoot(), 'services/account-admin/dist/sessions/reset-password-cli.js')], {
        env: { PATH: process.env.PATH ?? '', DATABASE_URL: h.config.DATABASE_URL, RESET_EMAIL: 'nobody@example.com', RESET_PASSWORD: newPassword },
        encoding: 'utf8',
      });
      expect(unknown.status).toBe(1);
      expect(unknown.stderr).toContain('no dashboard user');
    } finally {
      await h.close();
    }
  });
});
