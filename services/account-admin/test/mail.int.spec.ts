import { alertJobId, MAIL_JOB_OPTIONS, MAIL_QUEUE, MAIL_QUEUE_PREFIX } from '@svc/contracts';
import type { AlertEvent, MailJobData, MailJobName } from '@svc/contracts';
import { newId } from '@svc/ids';
import { dumpDatabase, dumpRedis, MailCatcher, smtpEnv, waitFor } from '@svc/test-kit';
import type { CaughtMail } from '@svc/test-kit';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { call, errorOf, INTERNAL_TOKEN, startHarness } from './harness';
import type { Harness } from './harness';

const PASSWORD = 'a long enough password';
const SMTP_AUTH = { user: 'svc-mailer', password: 'smtp-password-for-tests' };

/** The link a message carries to a dashboard page, and its token. */
function linkIn(mail: CaughtMail, page: string): { url: string; token: string } {
  const match = new RegExp(`(https?://[^\\s"<>]+/dashboard/${page}#token=([A-Za-z0-9_-]{43}))`).exec(mail.text);
  if (match === null) throw new Error(`no /dashboard/${page} link in: ${mail.text}`);
  return { url: match[1] ?? '', token: match[2] ?? '' };
}

async function statusOf(h: Harness, recipient: string): Promise<{ kind: string; status: string; attempts: number; detail: string | null }[]> {
  const rows = await h.pg.query<{ kind: string; status: string; attempts: number; detail: string | null }>(
    'SELECT kind, status, attempts, detail FROM mail_messages WHERE recipient = $1 ORDER BY created_at', [recipient]);
  return rows.rows;
}

describe('the mail path: SMTP through a real server, queued with retries, recorded without tokens', () => {
  let h: Harness;
  let catcher: MailCatcher;

  beforeAll(async () => {
    catcher = await MailCatcher.start({ httpPort: null, auth: SMTP_AUTH });
    h = await startHarness('mail', {
      ...smtpEnv(catcher, SMTP_AUTH),
      SIGNUP_CONFIRMATION: 'required',
      MAIL_RETRY_BASE_DELAY_MS: '100',
      MAIL_DISPATCH_INTERVAL_MS: '200',
      PUBLIC_BASE_URL: 'https://api.example.test',
    });
  });

  afterAll(async () => {
    await h.close();
    await catcher.stop();
  });

  it('sends a confirmation as plain text and HTML with the dashboard link, logged in with the SMTP credentials; the record has no token', async () => {
    const email = 'first@example.com';
    const signup = await call(h.baseUrl, 'POST', '/dashboard/api/signup', { json: { email, password: PASSWORD } });
    expect(signup.status).toBe(202);
    const mail = await catcher.waitFor((m) => m.envelope.to.includes(email));
    expect(mail.authUser).toBe(SMTP_AUTH.user);
    expect(mail.from).toMatch(/^"?Search gateway"? <no-reply@example\.test>$/);
    expect(mail.subject).toBe('Confirm your email address');
    const { url, token } = linkIn(mail, 'confirm');
    expect(url.startsWith('https://api.example.test/dashboard/confirm#token=')).toBe(true);
    expect(mail.text).toContain('Your dashboard: https://api.example.test/dashboard');
    expect(mail.html).toContain(`href="${url}"`);
    expect(mail.html).toContain('href="https://api.example.test/dashboard"');
    await waitFor('the record to say sent', async () => ((await statusOf(h, email))[0]?.status === 'sent' ? true : undefined));
    const [record] = await statusOf(h, email);
    expect(record).toMatchObject({ kind: 'signup.confirm', status: 'sent', attempts: 1 });
    // Neither PostgreSQL nor Redis holds the token, nor the password.
    const everything = `${await dumpDatabase(h.config.DATABASE_URL)}\n${await dumpRedis(h.redis)}`;
    expect(everything).not.toContain(token);
    expect(everything).not.toContain(PASSWORD);
    expect(everything).not.toContain(SMTP_AUTH.password);
  });

  it('tries again after a temporary SMTP refusal (451), and records the attempts', async () => {
    const email = 'retried@example.com';
    catcher.refuse(451, 2);
    expect((await call(h.baseUrl, 'POST', '/dashboard/api/password-reset', { json: { email } })).status).toBe(202);
    const mail = await catcher.waitFor((m) => m.envelope.to.includes(email));
    expect(mail.subject).toBe('Password reset requested');
    await waitFor('the record to say sent', async () => ((await statusOf(h, email))[0]?.status === 'sent' ? true : undefined));
    expect((await statusOf(h, email))[0]).toMatchObject({ kind: 'password_reset.unknown', status: 'sent', attempts: 3 });
    expect(catcher.to(email)).toHaveLength(1);
  });

  it('gives up at once on a permanent refusal (550): failed, with the server\'s answer, never sent twice', async () => {
    const email = 'refused@example.com';
    catcher.refuse(550, 1, 'No such mailbox');
    expect((await call(h.baseUrl, 'POST', '/dashboard/api/password-reset', { json: { email } })).status).toBe(202);
    await waitFor('the record to say failed', async () => ((await statusOf(h, email))[0]?.status === 'failed' ? true : undefined));
    const [record] = await statusOf(h, email);
    expect(record).toMatchObject({ status: 'failed', attempts: 1 });
    expect(record?.detail).toContain('550');
    // More than a few retry delays later, still nothing sent and still one attempt.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(catcher.to(email)).toHaveLength(0);
    expect((await statusOf(h, email))[0]?.attempts).toBe(1);
  });

  it('puts a queued message whose job is gone back on the queue (the dispatcher), and sends it once', async () => {
    // A message recorded while Redis could not take its job: queued in PostgreSQL, no job at all.
    const email = 'lost@example.com';
    const id = newId('mailMessage');
    await h.pg.query("INSERT INTO mail_messages (id, kind, recipient, status, queued_at) VALUES ($1, 'password_reset.unknown', $2, 'queued', now() - interval '2 minutes')", [id, email]);
    const mail = await catcher.waitFor((m) => m.envelope.to.includes(email));
    expect(mail.subject).toBe('Password reset requested');
    await waitFor('the record to say sent', async () => ((await statusOf(h, email))[0]?.status === 'sent' ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(catcher.to(email)).toHaveLength(1);
  });

  describe('alerts billing adds to the queue', () => {
    let producer: Queue<MailJobData, unknown, MailJobName>;
    let owner: { accountId: string; email: string };

    beforeAll(async () => {
      producer = new Queue<MailJobData, unknown, MailJobName>(MAIL_QUEUE, { connection: new Redis(h.config.REDIS_URL, { maxRetriesPerRequest: null }), prefix: MAIL_QUEUE_PREFIX });
      owner = { accountId: newId('account'), email: 'owner@example.com' };
      await h.pg.query('INSERT INTO accounts (id, email) VALUES ($1, $2)', [owner.accountId, owner.email]);
      await h.pg.query("INSERT INTO users (id, account_id, email, password_hash) VALUES ($1, $2, $3, 'x')", [newId('user'), owner.accountId, owner.email]);
    });

    afterAll(async () => {
      await producer.close();
      await producer.disconnect();
    });

    const event = (type: AlertEvent['type'], data: Record<string, unknown>): AlertEvent => ({ id: newId('event'), type, account_id: owner.accountId, created_at: new Date().toISOString(), data });
    const add = (e: AlertEvent, jobId = alertJobId(e.id)): Promise<unknown> => producer.add('alert', { event: e }, { ...MAIL_JOB_OPTIONS, jobId });

    it('mails a low balance to the owner once, however often the same event is added', async () => {
      const low = event('balance.low', { balance_usd: 4.98, threshold_usd: 5 });
      await add(low);
      const mail = await catcher.waitFor((m) => m.envelope.to.includes(owner.email) && m.subject.includes('balance is low'));
      expect(mail.subject).toBe('Your balance is low: $4.98');
      expect(mail.text).toContain('fell below the threshold you set, $5.00');
      expect(mail.text).toContain('https://api.example.test/dashboard/credits');
      expect(mail.text).toContain('https://api.example.test/dashboard/notifications');
      // The same event again, under its job id and under another (a second producer's retry).
      await add(low);
      await add(low, `again-${low.id}`);
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(catcher.to(owner.email).filter((m) => m.subject.includes('balance is low'))).toHaveLength(1);
      const rows = await h.pg.query('SELECT status FROM mail_messages WHERE event_id = $1', [low.id]);
      expect(rows.rows).toEqual([{ status: 'sent' }]);
    });

    it('follows the owner\'s choice: a type off by default is recorded as skipped, and mailed once turned on', async () => {
      const threshold = event('key.limit.threshold', { key_id: 'key_x', percent: 80, limit_usd: 10, usage_usd: 8, limit_reset: 'monthly', period_start: '2026-12-01T00:00:00.000Z', period_end: '2027-01-01T00:00:00.000Z' });
      await add(threshold);
      await waitFor('the skipped record', async () => {
        const rows = await h.pg.query<{ status: string; detail: string }>('SELECT status, detail FROM mail_messages WHERE event_id = $1', [threshold.id]);
        return rows.rows[0]?.status === 'skipped' ? rows.rows[0] : undefined;
      });
      await h.pg.query("INSERT INTO notification_settings (account_id, event_type, email, updated_at) VALUES ($1, 'key.limit.threshold', true, now())", [owner.accountId]);
      const next = event('key.limit.threshold', { key_id: 'key_x', percent: 100, limit_usd: 10, usage_usd: 10, limit_reset: 'monthly', period_start: '2026-12-01T00:00:00.000Z', period_end: '2027-01-01T00:00:00.000Z' });
      await add(next);
      const mail = await catcher.waitFor((m) => m.envelope.to.includes(owner.email) && m.subject.includes('100 %'));
      expect(mail.text).toContain('The API key key_x has spent $10.00 of its $10.00 limit in the period ending 2027-01-01');
      expect(catcher.to(owner.email).filter((m) => m.subject.includes('80 %'))).toHaveLength(0);
    });
  });
});

describe('the limits on anonymous mail: per recipient address and per client address, for every address alike', () => {
  let h: Harness;
  let catcher: MailCatcher;

  beforeAll(async () => {
    catcher = await MailCatcher.start({ httpPort: null });
    h = await startHarness('mail_limits', {
      ...smtpEnv(catcher),
      SIGNUP_CONFIRMATION: 'required',
      SIGNUP_MAILS_PER_EMAIL: '2', SIGNUP_MAILS_PER_ADDRESS: '4',
      PASSWORD_RESETS_PER_EMAIL: '2', PASSWORD_RESETS_PER_ADDRESS: '4',
      MAIL_LIMIT_WINDOW_SECONDS: '600',
    });
  });

  afterAll(async () => {
    await h.close();
    await catcher.stop();
  });

  // Each request speaks for a client address of its own choosing (through the gateway's x-forwarded-for).
  const from = (address: string): Record<string, string> => ({ 'x-svc-internal-token': INTERNAL_TOKEN, 'x-forwarded-for': address });

  it('limits the sign-ups of one recipient address across client addresses, and the sign-ups from one client address across recipients', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await call(h.baseUrl, 'POST', '/dashboard/api/signup', { json: { email: 'target@example.com', password: PASSWORD }, headers: from(`198.51.100.${i + 1}`) })).status);
    }
    expect(statuses).toEqual([202, 202, 429, 429]);
    const fromOne: number[] = [];
    for (let i = 0; i < 6; i++) {
      fromOne.push((await call(h.baseUrl, 'POST', '/dashboard/api/signup', { json: { email: `spray-${i}@example.com`, password: PASSWORD }, headers: from('203.0.113.50') })).status);
    }
    expect(fromOne).toEqual([202, 202, 202, 202, 429, 429]);
    const refused = await call(h.baseUrl, 'POST', '/dashboard/api/signup', { json: { email: 'spray-9@example.com', password: PASSWORD }, headers: from('203.0.113.50') });
    expect(errorOf(refused).code).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    await waitFor('the allowed messages', () => (catcher.messages().length === 6 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(catcher.messages()).toHaveLength(6);
  });

  it('limits password resets the same way, on counters of their own', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      statuses.push((await call(h.baseUrl, 'POST', '/dashboard/api/password-reset', { json: { email: 'target@example.com' }, headers: from(`198.51.100.${i + 20}`) })).status);
    }
    expect(statuses).toEqual([202, 202, 429]);
    const fromOne: number[] = [];
    for (let i = 0; i < 5; i++) {
      fromOne.push((await call(h.baseUrl, 'POST', '/dashboard/api/password-reset', { json: { email: `ask-${i}@example.com` }, headers: from('203.0.113.60') })).status);
    }
    expect(fromOne).toEqual([202, 202, 202, 202, 429]);
  });
});
