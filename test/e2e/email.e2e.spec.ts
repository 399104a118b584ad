import { bearer, call, dumpDatabase, dumpRedis, MailCatcher, smtpEnv, useStack, waitFor } from '@svc/test-kit';
import type { CaughtMail, JsonResponse } from '@svc/test-kit';

/**
 * Sign-up, sign-in and password reset by mail, through the public edge, with account-admin
 * sending over SMTP to a real SMTP server on this machine (the test-kit's MailCatcher) and
 * SIGNUP_CONFIRMATION=required as in production. Nothing here mocks the mail path: every
 * message is read as the SMTP server received it.
 */
const PASSWORD = 'correct horse battery staple';

describe('email: confirmed sign-up without account enumeration, password reset', () => {
  let catcher: MailCatcher | undefined;
  beforeAll(async () => {
    catcher = await MailCatcher.start({ httpPort: null });
  });
  const suite = useStack(() => ({
    name: 'email', redisDb: 5,
    accountAdminEnv: {
      ...smtpEnv(mails()), SIGNUP_CONFIRMATION: 'required', MAIL_RETRY_BASE_DELAY_MS: '200',
      // Every request comes from 127.0.0.1: the per-client-address limits are lifted here (mail.int.spec.ts tests them).
      SIGNUP_MAILS_PER_EMAIL: '3', SIGNUP_MAILS_PER_ADDRESS: '100000', PASSWORD_RESETS_PER_EMAIL: '3', PASSWORD_RESETS_PER_ADDRESS: '100000',
    },
  }), { accountsDb: true });
  afterAll(async () => {
    await catcher?.stop();
  });

  function mails(): MailCatcher {
    if (catcher === undefined) throw new Error('the mail catcher has not started');
    return catcher;
  }

  let counter = 0;
  const newAddress = (label: string): string => `${label}-${Date.now().toString(36)}-${(counter += 1)}@example.com`;

  const post = (path: string, body: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> => call('POST', `${suite.gw}/dashboard/api${path}`, { body, headers });

  /** The next message to `address` whose subject is `subject`. */
  const mailTo = (address: string, subject: string): Promise<CaughtMail> => mails().waitFor((m) => m.envelope.to.includes(address) && m.subject === subject);

  /** The token of a message's link to a dashboard page. */
  function tokenIn(mail: CaughtMail, page: 'confirm' | 'reset-password'): string {
    const match = new RegExp(`${suite.gw.replace(/[.]/g, '\\.')}/dashboard/${page}#token=([A-Za-z0-9_-]{43})`).exec(mail.text);
    if (match?.[1] === undefined) throw new Error(`no ${page} link in: ${mail.text}`);
    expect(mail.html).toContain(`${suite.gw}/dashboard/${page}#token=${match[1]}`);
    return match[1];
  }

  const cookieOf = (response: JsonResponse): string => (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';

  /** Signs up and confirms through the mail: an account that can sign in. */
  async function confirmedAccount(label: string): Promise<string> {
    const email = newAddress(label);
    expect((await post('/signup', { email, password: PASSWORD })).status).toBe(202);
    expect((await post('/signup/confirm', { token: tokenIn(await mailTo(email, 'Confirm your email address'), 'confirm') })).status).toBe(200);
    return email;
  }

  /** What a client can compare between two answers: status, body fields and their types, the headers that matter. */
  const shape = (r: JsonResponse): unknown => ({
    status: r.status,
    body: Object.fromEntries(Object.entries(r.body as Record<string, unknown>).map(([k, v]) => [k, k === 'request_id' ? 'request id' : k === 'email' ? 'the address' : v])),
    cookie: r.headers.get('set-cookie'),
    cacheControl: r.headers.get('cache-control'),
  });

  it('a sign-up of a new and of a registered address answer the same, and each address receives its own message', async () => {
    const registered = await confirmedAccount('registered');
    const fresh = newAddress('fresh');
    const forRegistered = await post('/signup', { email: registered, password: 'another password entirely' });
    const forNew = await post('/signup', { email: fresh, password: PASSWORD });
    expect(shape(forRegistered)).toEqual(shape(forNew));
    expect(forNew.status).toBe(202);
    expect(forNew.body).toEqual({ status: 'check_email', email: fresh, request_id: forNew.headers.get('x-svc-request-id') });
    expect(forNew.headers.get('set-cookie')).toBeNull();

    const told = await mailTo(registered, 'Someone tried to sign up with your address');
    expect(told.text).toContain(`${suite.gw}/dashboard/login`);
    expect(told.text).toContain(`${suite.gw}/dashboard/forgot-password`);
    expect(told.text).toContain(`Your dashboard: ${suite.gw}/dashboard`);
    expect(told.text).not.toMatch(/#token=/);
    const confirm = await mailTo(fresh, 'Confirm your email address');
    tokenIn(confirm, 'confirm');
    // One message each, and none of the other kind.
    expect(mails().to(registered).filter((m) => m.subject === 'Confirm your email address')).toHaveLength(1);
    expect(mails().to(fresh).map((m) => m.subject)).toEqual(['Confirm your email address']);
    // The registered account's password is unchanged by the attempt.
    expect((await post('/login', { email: registered, password: PASSWORD })).status).toBe(200);
  });

  it('an unconfirmed sign-up cannot sign in, and sign-in answers an unknown address exactly as a wrong password', async () => {
    const email = newAddress('unconfirmed');
    expect((await post('/signup', { email, password: PASSWORD })).status).toBe(202);
    await mailTo(email, 'Confirm your email address');
    const rightPassword = await post('/login', { email, password: PASSWORD });
    expect(rightPassword.status).toBe(400);
    expect(rightPassword.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('confirm your email address first') });
    expect(rightPassword.headers.get('set-cookie')).toBeNull();
    // No account exists before the link is used.
    expect((await suite.accountsDb.query('SELECT 1 FROM users WHERE email = $1 UNION ALL SELECT 1 FROM accounts WHERE email = $1', [email])).rowCount).toBe(0);

    const registered = await confirmedAccount('signin');
    const wrongPassword = await post('/login', { email: registered, password: 'not the password at all' });
    const unknown = await post('/login', { email: newAddress('nobody'), password: 'not the password at all' });
    const unconfirmedWrong = await post('/login', { email, password: 'not the password at all' });
    for (const r of [wrongPassword, unknown, unconfirmedWrong]) {
      expect([r.status, r.body.error.code, r.body.error.message, r.headers.get('set-cookie')]).toEqual([400, 'invalid_request', 'email or password is wrong', null]);
    }
  });

  it('the confirmation link confirms once; the account then signs in; a newer sign-up replaces an older link', async () => {
    const email = newAddress('once');
    expect((await post('/signup', { email, password: 'the first password chosen' })).status).toBe(202);
    const older = tokenIn(await mailTo(email, 'Confirm your email address'), 'confirm');
    expect((await post('/signup', { email, password: PASSWORD })).status).toBe(202);
    await waitFor('the second confirmation', () => (mails().to(email).length === 2 ? true : undefined));
    const newer = tokenIn(mails().to(email)[1] as CaughtMail, 'confirm');
    expect(newer).not.toBe(older);

    const stale = await post('/signup/confirm', { token: older });
    expect([stale.status, stale.body.error.code]).toEqual([400, 'invalid_request']);
    const confirmed = await post('/signup/confirm', { token: newer });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toMatchObject({ email, confirmed: true });
    expect(confirmed.headers.get('set-cookie')).toBeNull();
    const again = await post('/signup/confirm', { token: newer });
    expect([again.status, again.body.error.code, again.body.error.message]).toEqual([400, 'invalid_request', 'this link does not work: it has expired or was already used']);

    // The password of the sign-up whose link was used: the newer one.
    expect((await post('/login', { email, password: 'the first password chosen' })).status).toBe(400);
    const signedIn = await post('/login', { email, password: PASSWORD });
    expect(signedIn.status).toBe(200);
    const me = await call('GET', `${suite.gw}/dashboard/api/me`, { headers: { cookie: cookieOf(signedIn) } });
    expect(me.body).toMatchObject({ email, account_id: signedIn.body.account_id });
    // A malformed token is refused the same way.
    expect((await post('/signup/confirm', { token: 'x' })).status).toBe(400);
  });

  it('a reset link sets a new password once, ends every other session, is audited, and expires', async () => {
    const email = await confirmedAccount('reset');
    const first = await post('/login', { email, password: PASSWORD });
    const second = await post('/login', { email, password: PASSWORD });
    const sessions = [cookieOf(first), cookieOf(second)];
    const management = await post('/management-keys', { name: 'kept' }, { cookie: sessions[0] ?? '', 'x-csrf-token': String(first.body.csrf_token) });
    expect(management.status).toBe(201);

    const requested = await post('/password-reset', { email });
    expect(requested.status).toBe(202);
    expect(requested.body).toMatchObject({ status: 'check_email', email });
    const token = tokenIn(await mailTo(email, 'Reset your password'), 'reset-password');
    const newPassword = 'a completely new passphrase';
    const reset = await post('/password-reset/confirm', { token, password: newPassword });
    expect(reset.status).toBe(200);
    expect(reset.body).toMatchObject({ email, account_id: first.body.account_id, csrf_token: expect.any(String) });
    const fresh = cookieOf(reset);
    expect(fresh).toMatch(/^svc_session=/);

    for (const old of sessions) expect((await call('GET', `${suite.gw}/dashboard/api/me`, { headers: { cookie: old } })).status).toBe(401);
    expect((await call('GET', `${suite.gw}/dashboard/api/me`, { headers: { cookie: fresh } })).status).toBe(200);
    expect((await post('/login', { email, password: PASSWORD })).status).toBe(400);
    expect((await post('/login', { email, password: newPassword })).status).toBe(200);
    // Keys are the account's, not the session's: the management key still works.
    expect((await call('GET', `${suite.gw}/v1/keys`, { headers: bearer(String(management.body.secret)) })).status).toBe(200);

    const used = await post('/password-reset/confirm', { token, password: 'yet another new passphrase' });
    expect([used.status, used.body.error.code]).toEqual([400, 'invalid_request']);
    expect((await post('/login', { email, password: newPassword })).status).toBe(200);

    // The owner is told, and the audit log has the change with the session as its actor, never the password.
    const notice = await mailTo(email, 'Your password was changed');
    expect(notice.text).toContain(`${suite.gw}/dashboard/forgot-password`);
    const audit = await call('GET', `${suite.gw}/dashboard/api/audit-log?action=user.password_reset`, { headers: { cookie: fresh } });
    expect(audit.status).toBe(200);
    expect(audit.body.data).toHaveLength(1);
    expect(audit.body.data[0]).toMatchObject({ action: 'user.password_reset', actor: { kind: 'session' }, changes: { other_sessions: { before: 2, after: 0 } } });
    expect(JSON.stringify(audit.body)).not.toContain(newPassword);

    // A second link, expired: refused, and the password stays.
    expect((await post('/password-reset', { email })).status).toBe(202);
    await waitFor('the second reset link', () => (mails().to(email).filter((m) => m.subject === 'Reset your password').length === 2 ? true : undefined));
    const late = tokenIn(mails().to(email).filter((m) => m.subject === 'Reset your password')[1] as CaughtMail, 'reset-password');
    await suite.accountsDb.query("UPDATE password_resets SET expires_at = now() - interval '1 second' WHERE user_id = (SELECT id FROM users WHERE email = $1)", [email]);
    const expired = await post('/password-reset/confirm', { token: late, password: 'too late a passphrase' });
    expect([expired.status, expired.body.error.message]).toEqual([400, 'this link does not work: it has expired or was already used']);
    expect((await post('/login', { email, password: newPassword })).status).toBe(200);

    // No token, password or link is kept in PostgreSQL or Redis.
    const redis = suite.stack.redisClient();
    try {
      const everything = `${await dumpDatabase(suite.stack.databases.accountAdmin)}\n${await dumpRedis(redis)}`;
      for (const secret of [token, late, newPassword, PASSWORD]) expect(everything).not.toContain(secret);
    } finally {
      redis.disconnect();
    }
  });

  it('a reset request answers the same for a registered and an unknown address; the unknown one is told no account uses it', async () => {
    const registered = await confirmedAccount('known');
    const unknown = newAddress('unknown');
    const a = await post('/password-reset', { email: registered });
    const b = await post('/password-reset', { email: unknown });
    expect(shape(a)).toEqual(shape(b));
    expect(a.status).toBe(202);
    const note = await mailTo(unknown, 'Password reset requested');
    expect(note.text).toContain('no account uses this address');
    expect(note.text).toContain(`${suite.gw}/dashboard/signup`);
    expect(note.text).not.toMatch(/#token=/);
    tokenIn(await mailTo(registered, 'Reset your password'), 'reset-password');
  });

  it('more sign-ups of one address than its limit are 429 with Retry-After, for a registered and a new address alike, and mail nothing more', async () => {
    const registered = await confirmedAccount('limited');
    const fresh = newAddress('limited-new');
    const statuses = async (email: string): Promise<number[]> => {
      const out: number[] = [];
      for (let i = 0; i < 4; i++) out.push((await post('/signup', { email, password: PASSWORD })).status);
      return out;
    };
    // The registered address used one of its 3 sign-up mails to be made.
    const forRegistered = await statuses(registered);
    const forNew = await statuses(fresh);
    expect(forRegistered).toEqual([202, 202, 429, 429]);
    expect(forNew).toEqual([202, 202, 202, 429]);
    const limited = await post('/signup', { email: fresh, password: PASSWORD });
    expect(limited.body.error.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    await waitFor('the new address\'s three messages', () => (mails().to(fresh).length === 3 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(mails().to(fresh)).toHaveLength(3);
  });
});
