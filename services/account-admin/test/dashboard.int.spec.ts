import { redisKeys } from '@svc/contracts';
import type { KeyRecord } from '@svc/contracts';
import { hashSecret } from '@svc/keys';
import { DASHBOARD_PAGES } from '../src/dashboard/dashboard-web.controller';
import { call, errorOf, gatewayHeaders, startHarness } from './harness';
import type { Harness } from './harness';

let h: Harness;
const PASSWORD = 'a long enough password';

interface Session {
  cookie: string;
  csrf: string;
  accountId: string;
}

function cookieOf(setCookie: string | null): string {
  return (setCookie ?? '').split(';')[0] ?? '';
}

async function signUp(email: string): Promise<Session> {
  const response = await call(h.baseUrl, 'POST', '/dashboard/api/signup', { json: { email, password: PASSWORD } });
  expect(response.status).toBe(201);
  return { cookie: cookieOf(response.headers.get('set-cookie')), csrf: String(response.body.csrf_token), accountId: String(response.body.account_id) };
}

beforeAll(async () => {
  h = await startHarness('dashboard');
});

afterAll(async () => {
  await h.close();
});

describe('sign-up and log-in', () => {
  it('signs up: 201 {account_id, email, csrf_token} and an HttpOnly SameSite=Strict cookie whose token is stored only hashed', async () => {
    const response = await call(h.baseUrl, 'POST', '/dashboard/api/signup', { json: { email: 'New@Example.com', password: PASSWORD } });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ account_id: expect.stringMatching(/^acct_/), email: 'new@example.com', csrf_token: expect.any(String) });
    const setCookie = response.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^svc_session=[A-Za-z0-9_-]{43}; /);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).toContain('Path=/');
    const token = cookieOf(setCookie).slice('svc_session='.length);
    const sessions = await h.pg.query<{ id: string }>('SELECT id FROM sessions');
    expect(sessions.rows.map((r) => r.id)).toContain(hashSecret(token));
    expect(JSON.stringify(sessions.rows)).not.toContain(token);
    const users = await h.pg.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE email = $1', ['new@example.com']);
    expect(users.rows[0]?.password_hash).toMatch(/^scrypt\$/);
    expect(users.rows[0]?.password_hash).not.toContain(PASSWORD);
  });

  it('rejects a used email, a short password, a bad email and unknown fields with 400 invalid_request', async () => {
    await signUp('taken@example.com');
    for (const json of [
      { email: 'taken@example.com', password: PASSWORD },
      { email: 'short@example.com', password: 'elevenchars' },
      { email: 'not-an-email', password: PASSWORD },
      { email: 'x@example.com', password: PASSWORD, plan: 'pro' },
    ]) {
      const response = await call(h.baseUrl, 'POST', '/dashboard/api/signup', { json });
      expect([json.email, response.status, errorOf(response).code]).toEqual([json.email, 400, 'invalid_request']);
    }
    const response = await call(h.baseUrl, 'POST', '/dashboard/api/signup', { rawBody: 'email=a' });
    expect(response.status).toBe(400);
  });

  it('logs in with the right password and answers the same 400 for a wrong password and an unknown email', async () => {
    const first = await signUp('login@example.com');
    const ok = await call(h.baseUrl, 'POST', '/dashboard/api/login', { json: { email: 'login@example.com', password: PASSWORD } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ account_id: first.accountId, email: 'login@example.com' });
    expect(cookieOf(ok.headers.get('set-cookie'))).not.toBe(first.cookie);
    const wrong = await call(h.baseUrl, 'POST', '/dashboard/api/login', { json: { email: 'login@example.com', password: 'not the password' } });
    const unknown = await call(h.baseUrl, 'POST', '/dashboard/api/login', { json: { email: 'nobody@example.com', password: PASSWORD } });
    for (const response of [wrong, unknown]) {
      expect(response.status).toBe(400);
      expect(errorOf(response)).toMatchObject({ code: 'invalid_request', message: 'email or password is wrong' });
      expect(response.headers.get('set-cookie')).toBeNull();
    }
  });
});

describe('sessions', () => {
  it('me answers the signed-in account; no cookie, a bad cookie or an expired session is 401 invalid_api_key', async () => {
    const session = await signUp('me@example.com');
    const me = await call(h.baseUrl, 'GET', '/dashboard/api/me', { headers: { cookie: session.cookie } });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ account_id: session.accountId, email: 'me@example.com' });
    for (const headers of [{} as Record<string, string>, { cookie: 'svc_session=forged' }, { cookie: `svc_session=${'A'.repeat(43)}` }]) {
      const response = await call(h.baseUrl, 'GET', '/dashboard/api/me', { headers });
      expect(response.status).toBe(401);
      expect(errorOf(response)).toMatchObject({ code: 'invalid_api_key', message: 'not signed in' });
    }
    const token = session.cookie.slice('svc_session='.length);
    await h.pg.query("UPDATE sessions SET expires_at = now() - interval '1 second' WHERE id = $1", [hashSecret(token)]);
    const expired = await call(h.baseUrl, 'GET', '/dashboard/api/me', { headers: { cookie: session.cookie } });
    expect(expired.status).toBe(401);
  });

  it('logout needs the CSRF token, answers 204, clears the cookie and ends the session', async () => {
    const session = await signUp('logout@example.com');
    const noCsrf = await call(h.baseUrl, 'POST', '/dashboard/api/logout', { headers: { cookie: session.cookie } });
    expect(noCsrf.status).toBe(400);
    expect(errorOf(noCsrf)).toMatchObject({ code: 'invalid_request', message: 'missing or wrong x-csrf-token' });
    const response = await call(h.baseUrl, 'POST', '/dashboard/api/logout', { headers: { cookie: session.cookie, 'x-csrf-token': session.csrf } });
    expect(response.status).toBe(204);
    expect(response.headers.get('set-cookie')).toMatch(/^svc_session=; .*Max-Age=0/);
    const me = await call(h.baseUrl, 'GET', '/dashboard/api/me', { headers: { cookie: session.cookie } });
    expect(me.status).toBe(401);
  });
});

describe('management keys', () => {
  it('creates, lists and deletes management keys, writing each change to Redis', async () => {
    const session = await signUp('mkeys@example.com');
    const headers = { cookie: session.cookie, 'x-csrf-token': session.csrf };
    const created = await call(h.baseUrl, 'POST', '/dashboard/api/management-keys', { json: { name: 'ops' }, headers });
    expect(created.status).toBe(201);
    const secret = String(created.body.secret);
    expect(secret).toMatch(/^svc-mgmt-[A-Za-z0-9_-]{43}$/);
    expect(created.body).toMatchObject({ id: expect.stringMatching(/^mkey_/), name: 'ops', label: `svc-mgmt-${secret.slice(9, 13)}…`, created_at: expect.any(String) });
    const keyHash = hashSecret(secret);
    expect(created.headers.get('x-svc-changed-key-hash')).toBe(keyHash);
    const record = JSON.parse((await h.redis.get(redisKeys.keyRecord(keyHash))) ?? 'null') as KeyRecord;
    expect(record).toMatchObject({ id: created.body.id, accountId: session.accountId, kind: 'management', version: 1, deleted: false });
    const dump = await h.pg.query<{ dump: string }>("SELECT string_agg(row_to_json(k)::text, '\n') AS dump FROM keys k");
    expect(dump.rows[0]?.dump).not.toContain(secret.slice(9));

    const list = await call(h.baseUrl, 'GET', '/dashboard/api/management-keys', { headers: { cookie: session.cookie } });
    expect(list.status).toBe(200);
    expect(list.body.next_cursor).toBeNull();
    expect(list.body.data).toEqual([{
      id: created.body.id, name: 'ops', label: created.body.label, created_at: created.body.created_at,
      disabled: false, updated_at: created.body.created_at, last_used_at: null,
    }]);

    const removed = await call(h.baseUrl, 'DELETE', `/dashboard/api/management-keys/${created.body.id}`, { headers });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ id: created.body.id, deleted: true });
    const after = JSON.parse((await h.redis.get(redisKeys.keyRecord(keyHash))) ?? 'null') as KeyRecord;
    expect(after).toMatchObject({ deleted: true, version: 2 });
    const again = await call(h.baseUrl, 'DELETE', `/dashboard/api/management-keys/${created.body.id}`, { headers });
    expect(again.status).toBe(404);
    expect((await call(h.baseUrl, 'GET', '/dashboard/api/management-keys', { headers })).body.data).toEqual([]);
  });

  it('needs the CSRF token to create or delete, and answers 404 for another account\'s key or an API key id', async () => {
    const mine = await signUp('mine@example.com');
    const theirs = await signUp('theirs@example.com');
    const noCsrf = await call(h.baseUrl, 'POST', '/dashboard/api/management-keys', { json: { name: 'x' }, headers: { cookie: mine.cookie, 'x-csrf-token': theirs.csrf } });
    expect(noCsrf.status).toBe(400);
    expect(errorOf(noCsrf).message).toBe('missing or wrong x-csrf-token');
    const theirKey = await call(h.baseUrl, 'POST', '/dashboard/api/management-keys', { json: { name: 't' }, headers: { cookie: theirs.cookie, 'x-csrf-token': theirs.csrf } });
    const apiKey = await call(h.baseUrl, 'POST', '/v1/keys', { json: {}, headers: gatewayHeaders({ accountId: mine.accountId, keyId: String(theirKey.body.id), kind: 'management' }) });
    for (const id of [String(theirKey.body.id), String(apiKey.body.id), 'mkey_unknown']) {
      const response = await call(h.baseUrl, 'DELETE', `/dashboard/api/management-keys/${id}`, { headers: { cookie: mine.cookie, 'x-csrf-token': mine.csrf } });
      expect([id, response.status, errorOf(response).code]).toEqual([id, 404, 'not_found']);
    }
    const unknownField = await call(h.baseUrl, 'POST', '/dashboard/api/management-keys', { json: { name: 'x', kind: 'api' }, headers: { cookie: mine.cookie, 'x-csrf-token': mine.csrf } });
    expect(unknownField.status).toBe(400);
  });

  it("answers 500 internal, without the cause, when billing cannot be reached for the dashboard's credits, usage or activity", async () => {
    const session = await signUp('nobilling@example.com');
    for (const path of ['/dashboard/api/credits', '/dashboard/api/usage', '/dashboard/api/activity', '/dashboard/api/credits/purchases']) {
      const response = await call(h.baseUrl, 'GET', path, { headers: { cookie: session.cookie } });
      expect([path, response.status, errorOf(response).code, errorOf(response).message]).toEqual([path, 500, 'internal', 'internal error']);
      expect(response.text).not.toContain('ECONNREFUSED');
      expect(response.text).not.toContain('127.0.0.1');
    }
  });

  it('serves the built web app: every page path answers index.html under a CSP allowing only its own files, which all answer', async () => {
    for (const path of ['/dashboard', ...DASHBOARD_PAGES.map((page) => `/dashboard/${page}`)]) {
      const response = await call(h.baseUrl, 'GET', path);
      expect([path, response.status]).toEqual([path, 200]);
      expect(response.headers.get('content-type')).toContain('text/html');
      expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(response.headers.get('content-security-policy')).not.toContain('unsafe-inline');
      expect(response.text).toContain('<!doctype html>');
      expect(response.text).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    }
    const page = await call(h.baseUrl, 'GET', '/dashboard');
    const refs = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '').filter((ref) => !ref.startsWith('data:'));
    expect(refs.length).toBeGreaterThanOrEqual(2);
    for (const ref of refs) {
      expect(ref).toMatch(/^\/dashboard\/assets\//);
      const asset = await call(h.baseUrl, 'GET', ref);
      expect([ref, asset.status]).toEqual([ref, 200]);
      expect(asset.headers.get('cache-control')).toContain('immutable');
      expect(asset.text).not.toMatch(/https?:\/\/(?!www\.w3\.org|127\.0\.0\.1|localhost)[a-z0-9.-]+\.[a-z]{2,}\/[^"'\s]*\.(?:js|css|woff2?)/i);
    }
    for (const path of ['/dashboard/assets/missing.js', '/dashboard/api/nothing-here', '/dashboard/nothing-here', '/dashboard/assets/../../package.json']) {
      const missing = await call(h.baseUrl, 'GET', path);
      expect([path, missing.status, errorOf(missing).code]).toEqual([path, 404, 'not_found']);
    }
    // A known API path with another method is still the edge's 405.
    expect((await call(h.baseUrl, 'GET', '/dashboard/api/logout')).status).toBe(405);
  });
});
