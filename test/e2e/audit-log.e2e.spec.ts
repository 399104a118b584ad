import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { bearer, call, repoRoot } from '@svc/test-kit';
import type { JsonResponse } from '@svc/test-kit';

/** A parsed JSON answer, as test-kit's call gives it. */
type Body = JsonResponse['body'];
import { OAUTH_PATHS } from '@svc/contracts';
import { approve, codeOf, exchange, refresh, register, startAuthorization } from './oauth-flow';
import { entryShape, useAuditStack } from './audit-entries';
import type { ExpectedEntry as Expected } from './audit-entries';

/**
 * The audit log end to end (docs/api.md, "Audit log"; issue 27): a scripted series of changes
 * through every surface (a management key on /v1, a dashboard session, billing's checkout on
 * both, an operator's grant) is exactly what GET /v1/audit-log answers, pages and filters;
 * the plaintext (and hash) of every secret used is found nowhere in either audit table; an
 * UPDATE, a DELETE or a TRUNCATE fails in the database, and only the retention purge may
 * delete, and only rows older than the retention.
 *
 * OAuth grants are part of the series: the owner's consent (the grant and its key, by the
 * session), a grant the client revokes through the revocation endpoint and one that a replayed
 * code ends (both by the grant), and one the owner revokes in the dashboard; the codes, tokens
 * and verifiers are among the secrets searched for. A grant's access token can change nothing.
 *
 * Every call goes through the gateway, which trusts 127.0.0.1 as a proxy, with an
 * X-Forwarded-For naming a different client per surface: the entries carry those addresses.
 */
const run = promisify(execFile);
const STRIPE_KEY = 'sk_test_fake_audit';
const WEBHOOK_SECRET = 'whsec_fake_audit';
const PASSWORD = 'correct horse battery staple audit';

describe('the audit log: a scripted series through every surface', () => {
  const suite = useAuditStack('audit_log', { secretKey: STRIPE_KEY, webhookSecret: WEBHOOK_SECRET });

  it('answers exactly the series, pages it, filters it, holds no secret, and refuses UPDATE and DELETE', async () => {
    const SESSION_IP = '198.51.100.20';
    const KEY_IP = '2001:db8::42';
    const secrets: string[] = [PASSWORD, suite.stack.operatorToken, STRIPE_KEY];
    const expected: Expected[] = [];
    const at: number[] = [];
    const expect201or200 = (status: number) => expect([200, 201]).toContain(status);

    // The dashboard user (sign-up is no change of a resource: not audited).
    const email = `audit-${randomBytes(6).toString('hex')}@example.com`;
    const signup = await call('POST', `${suite.gw}/dashboard/api/signup`, { body: { email, password: PASSWORD }, headers: { 'x-forwarded-for': SESSION_IP } });
    expect(signup.status).toBe(201);
    const accountId = String(signup.body.account_id);
    const cookie = (signup.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const csrf = String(signup.body.csrf_token);
    secrets.push(cookie.split('=')[1] ?? '', csrf);
    const userId = String((await suite.accountsDb.query('SELECT id FROM users WHERE email = $1', [email])).rows[0]?.id);
    const session = { cookie, 'x-csrf-token': csrf, 'x-forwarded-for': SESSION_IP };
    const asSession = { kind: 'session', id: userId };

    const step = async (method: string, path: string, headers: Record<string, string>, body: unknown, entry: ((reply: Body) => Expected) | null) => {
      const reply = await call(method, `${suite.gw}${path}`, { body, headers });
      expect201or200(reply.status);
      if (entry !== null) {
        expected.push(entry(reply.body));
        at.push(Date.now());
      }
      return reply.body as Body;
    };

    // 1. A session makes the management key the /v1 steps use.
    const admin = await step('POST', '/dashboard/api/management-keys', session, { name: 'admin' }, (r) => ({
      action: 'management_key.create', actor: asSession, client_address: SESSION_IP, target_id: String(r.id),
      changes: { name: { before: null, after: 'admin' }, disabled: { before: null, after: false } },
    }));
    secrets.push(String(admin.secret));
    const mgmt = { ...bearer(String(admin.secret)), 'x-forwarded-for': KEY_IP };
    const asKey = { kind: 'management_key', id: String(admin.id) };

    // 2-4. An API key: created with fences by the key, changed by the key and by the session.
    const apiKey = await step('POST', '/v1/keys', mgmt, { name: 'bot', limit_usd: 5, allowed_models: ['exa/*'], allowed_ips: ['203.0.113.0/24'] }, (r) => ({
      action: 'api_key.create', actor: asKey, client_address: KEY_IP, target_id: String(r.id),
      changes: {
        name: { before: null, after: 'bot' }, limit_usd: { before: null, after: 5 }, limit_reset: { before: null, after: null },
        expires_at: { before: null, after: null }, disabled: { before: null, after: false },
        allowed_models: { before: null, after: ['exa/*'] }, allowed_ips: { before: null, after: ['203.0.113.0/24'] },
      },
    }));
    secrets.push(String(apiKey.secret));
    const keyId = String(apiKey.id);
    await step('PATCH', `/v1/keys/${keyId}`, mgmt, { limit_usd: 7, allowed_ips: null }, () => ({
      action: 'api_key.update', actor: asKey, client_address: KEY_IP, target_id: keyId,
      changes: { limit_usd: { before: 5, after: 7 }, allowed_ips: { before: ['203.0.113.0/24'], after: null } },
    }));
    // A change that changes nothing, and a refused one, are not entries.
    await step('PATCH', `/v1/keys/${keyId}`, mgmt, {}, null);
    expect((await call('PATCH', `${suite.gw}/v1/keys/${keyId}`, { body: { limit_usd: -1 }, headers: mgmt })).status).toBe(400);
    await step('PATCH', `/dashboard/api/keys/${keyId}`, session, { disabled: true }, () => ({
      action: 'api_key.update', actor: asSession, client_address: SESSION_IP, target_id: keyId,
      changes: { disabled: { before: false, after: true } },
    }));

    // 5-7. A provider key: stored by the key, replaced by the session, deleted by the key.
    const exaOwn = `exa-own-${randomBytes(12).toString('hex')}`;
    const exaOther = `exa-other-${randomBytes(12).toString('hex')}`;
    secrets.push(exaOwn, exaOther);
    await step('PUT', '/v1/provider-keys/exa', mgmt, { key: exaOwn }, () => ({
      action: 'provider_key.set', actor: asKey, client_address: KEY_IP, target_id: 'exa', changes: { key: { before: null, after: 'new key' } },
    }));
    await step('PUT', '/dashboard/api/provider-keys/exa', session, { key: exaOther }, () => ({
      action: 'provider_key.set', actor: asSession, client_address: SESSION_IP, target_id: 'exa', changes: { key: { before: 'previous key', after: 'new key' } },
    }));
    await step('DELETE', '/v1/provider-keys/exa', mgmt, undefined, () => ({
      action: 'provider_key.delete', actor: asKey, client_address: KEY_IP, target_id: 'exa', changes: { key: { before: 'previous key', after: null } },
    }));

    // 8-9. Purchases started (billing): by the key through the gateway, by the session through account-admin.
    await step('POST', '/v1/credits/checkout', mgmt, { amount_usd: 20 }, (r) => ({
      action: 'purchase.start', actor: asKey, client_address: KEY_IP, target_id: String(r.id),
      changes: { amount_usd: { before: null, after: 20 }, credit_usd: { before: null, after: 20 }, status: { before: null, after: 'pending' } },
    }));
    await step('POST', '/dashboard/api/credits/checkout', session, { amount_usd: 25 }, (r) => ({
      action: 'purchase.start', actor: asSession, client_address: SESSION_IP, target_id: String(r.id),
      changes: { amount_usd: { before: null, after: 25 }, credit_usd: { before: null, after: 25 }, status: { before: null, after: 'pending' } },
    }));

    // 10. An operator's grant (the operator API, not through the gateway).
    const grant = await call('POST', `${suite.stack.billing.operatorUrl}/operator/accounts/${accountId}/grants`, {
      body: { amount_usd: 3, reason: 'goodwill' }, headers: bearer(suite.stack.operatorToken),
    });
    expect(grant.status).toBe(201);
    expected.push({
      action: 'credits.grant', actor: { kind: 'operator', id: 'operator' }, client_address: '127.0.0.1', target_id: String(grant.body.id),
      changes: { amount_usd: { before: null, after: 3 }, reason: { before: null, after: 'goodwill' } },
    });
    at.push(Date.now());

    // 11-13. A second management key renamed and deleted by the session; the API key deleted by the key.
    const second = await step('POST', '/dashboard/api/management-keys', session, { name: 'ops' }, (r) => ({
      action: 'management_key.create', actor: asSession, client_address: SESSION_IP, target_id: String(r.id),
      changes: { name: { before: null, after: 'ops' }, disabled: { before: null, after: false } },
    }));
    secrets.push(String(second.secret));
    await step('PATCH', `/dashboard/api/management-keys/${String(second.id)}`, session, { name: 'ops2' }, () => ({
      action: 'management_key.update', actor: asSession, client_address: SESSION_IP, target_id: String(second.id), changes: { name: { before: 'ops', after: 'ops2' } },
    }));
    await step('DELETE', `/v1/keys/${keyId}`, mgmt, undefined, () => ({
      action: 'api_key.delete', actor: asKey, client_address: KEY_IP, target_id: keyId, changes: { deleted: { before: false, after: true } },
    }));
    await step('DELETE', `/dashboard/api/management-keys/${String(second.id)}`, session, undefined, () => ({
      action: 'management_key.delete', actor: asSession, client_address: SESSION_IP, target_id: String(second.id), changes: { deleted: { before: false, after: true } },
    }));

    // 14-29. OAuth grants. Registering a client changes no account (not audited); the owner's
    // consent makes the grant's key and the grant (the session is the actor).
    const CLIENT_IP = '192.0.2.77';
    const REDIRECT = 'http://127.0.0.1:9/callback';
    const registered = await register(suite.gw, 'Audit Connector', [REDIRECT]);
    expect(registered.status).toBe(201);
    const clientId = String(registered.body.client_id);
    const asClient = { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': CLIENT_IP };
    const oauthForm = (path: string, fields: Record<string, string>) => call('POST', suite.gw + path, { raw: new URLSearchParams(fields).toString(), headers: asClient });
    const consent = async (): Promise<{ grantId: string; keyId: string; code: string; verifier: string }> => {
      const started = await startAuthorization(suite.gw, clientId, REDIRECT);
      const approved = await approve(suite.gw, session, started.requestId, { limit_usd: 1, limit_reset: 'daily', expires_at: null });
      expect(approved.status).toBe(200);
      const grantId = String(approved.body.grant_id);
      const keyId = String(approved.body.key_id);
      const { code } = codeOf(String(approved.body.redirect_to));
      secrets.push(code, started.pkce.verifier);
      expected.push({
        action: 'api_key.create', actor: asSession, client_address: SESSION_IP, target_id: keyId,
        changes: {
          name: { before: null, after: 'Audit Connector' }, limit_usd: { before: null, after: 1 }, limit_reset: { before: null, after: 'daily' },
          expires_at: { before: null, after: null }, disabled: { before: null, after: false },
          allowed_models: { before: null, after: null }, allowed_ips: { before: null, after: null },
        },
      }, {
        action: 'oauth_grant.create', actor: asSession, client_address: SESSION_IP, target_id: grantId,
        changes: {
          client_id: { before: null, after: clientId }, client_name: { before: null, after: 'Audit Connector' },
          redirect_uri: { before: null, after: REDIRECT }, key_id: { before: null, after: keyId },
        },
      });
      at.push(Date.now(), Date.now());
      return { grantId, keyId, code, verifier: started.pkce.verifier };
    };
    const ended = (grantId: string, keyId: string, actor: { kind: string; id: string }, address: string, reason: string): void => {
      expected.push({
        action: 'oauth_grant.revoke', actor, client_address: address, target_id: grantId,
        changes: { revoked: { before: false, after: true }, revoked_reason: { before: null, after: reason } },
      }, {
        action: 'api_key.delete', actor, client_address: address, target_id: keyId, changes: { deleted: { before: false, after: true } },
      });
      at.push(Date.now(), Date.now());
    };

    // A grant used by its client (code, refresh), then revoked by the client with its refresh token.
    const byClient = await consent();
    const tokens = await exchange(suite.gw, clientId, byClient.code, REDIRECT, byClient.verifier);
    expect(tokens.status).toBe(200);
    const refreshed = await refresh(suite.gw, clientId, String(tokens.body.refresh_token));
    expect(refreshed.status).toBe(200);
    const access = String(refreshed.body.access_token);
    secrets.push(String(tokens.body.access_token), String(tokens.body.refresh_token), access, String(refreshed.body.refresh_token));
    // An access token's one audience is /mcp/oauth, whose tools change nothing; anywhere else
    // it is no key at all (401), so it can make no change (and no entry).
    expect((await call('PATCH', `${suite.gw}/v1/keys/${byClient.keyId}`, { body: { limit_usd: 100 }, headers: { ...bearer(access), 'x-forwarded-for': CLIENT_IP } })).status).toBe(401);
    expect((await call('POST', `${suite.gw}/v1/keys`, { body: { name: 'escalate' }, headers: { ...bearer(access), 'x-forwarded-for': CLIENT_IP } })).status).toBe(401);
    // Revoking the access token alone ends a credential, not the grant: no entry.
    expect((await oauthForm(OAUTH_PATHS.revoke, { token: String(tokens.body.access_token), client_id: clientId })).status).toBe(200);
    expect((await oauthForm(OAUTH_PATHS.revoke, { token: String(refreshed.body.refresh_token), client_id: clientId })).status).toBe(200);
    ended(byClient.grantId, byClient.keyId, { kind: 'oauth_grant', id: byClient.grantId }, CLIENT_IP, 'revoked by the client');
    // Revoking it again changes nothing: no entry.
    expect((await oauthForm(OAUTH_PATHS.revoke, { token: String(refreshed.body.refresh_token), client_id: clientId })).status).toBe(200);

    // A grant the owner revokes on the Connected apps page.
    const byOwner = await consent();
    await step('DELETE', `/dashboard/api/connected-apps/${byOwner.grantId}`, session, undefined, null);
    ended(byOwner.grantId, byOwner.keyId, asSession, SESSION_IP, 'revoked by the owner');
    // Revoked already: 200 again, no entry.
    await step('DELETE', `/dashboard/api/connected-apps/${byOwner.grantId}`, session, undefined, null);

    // A grant its client ends by presenting its code twice (RFC 6749 4.1.2: the grant is revoked).
    const replayed = await consent();
    const replayedTokens = await oauthForm(OAUTH_PATHS.token, { grant_type: 'authorization_code', code: replayed.code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: replayed.verifier });
    expect(replayedTokens.status).toBe(200);
    secrets.push(String(replayedTokens.body.access_token), String(replayedTokens.body.refresh_token));
    const replay = await oauthForm(OAUTH_PATHS.token, { grant_type: 'authorization_code', code: replayed.code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: replayed.verifier });
    expect([replay.status, replay.body.error]).toEqual([400, 'invalid_grant']);
    ended(replayed.grantId, replayed.keyId, { kind: 'oauth_grant', id: replayed.grantId }, CLIENT_IP, 'authorization code reused');

    // A grant its client ends by presenting a rotated refresh token again (one of two holders is not the client).
    const rotated = await consent();
    const rotatedTokens = await oauthForm(OAUTH_PATHS.token, { grant_type: 'authorization_code', code: rotated.code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: rotated.verifier });
    expect(rotatedTokens.status).toBe(200);
    const oldRefresh = String(rotatedTokens.body.refresh_token);
    const next = await oauthForm(OAUTH_PATHS.token, { grant_type: 'refresh_token', refresh_token: oldRefresh, client_id: clientId });
    expect(next.status).toBe(200);
    secrets.push(String(rotatedTokens.body.access_token), oldRefresh, String(next.body.access_token), String(next.body.refresh_token));
    const reused = await oauthForm(OAUTH_PATHS.token, { grant_type: 'refresh_token', refresh_token: oldRefresh, client_id: clientId });
    expect([reused.status, reused.body.error]).toEqual([400, 'invalid_grant']);
    ended(rotated.grantId, rotated.keyId, { kind: 'oauth_grant', id: rotated.grantId }, CLIENT_IP, 'refresh token reused after rotation');

    // The log equals the series, newest first, on both surfaces.
    const shape = entryShape;
    const newestFirst = [...expected].reverse();
    const full = await call('GET', `${suite.gw}/v1/audit-log?limit=100`, { headers: mgmt });
    expect(full.status).toBe(200);
    expect(full.body.next_cursor).toBeNull();
    // Entries of the same millisecond (a grant and its key, made in one transaction) are in
    // the log's tie order, by id, which the series cannot know: within such a group, compare
    // as sets; across groups, in order.
    const sameInstant = (entries: Expected[], ats: string[]): Expected[] => {
      const out: Expected[] = [];
      for (let i = 0; i < entries.length;) {
        let j = i;
        while (j < entries.length && ats[j] === ats[i]) j++;
        out.push(...entries.slice(i, j).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1)));
        i = j;
      }
      return out;
    };
    const fullAts = full.body.data.map((entry: { at: string }) => entry.at);
    expect(sameInstant(full.body.data.map(shape), fullAts)).toEqual(sameInstant(newestFirst, fullAts));
    for (const entry of full.body.data) {
      expect(entry.id).toMatch(/^aud_[0-9A-Za-z]{24}$/);
      expect(Number.isNaN(Date.parse(entry.at))).toBe(false);
    }
    const times = full.body.data.map((entry: { at: string }) => Date.parse(entry.at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    const dashboard = await call('GET', `${suite.gw}/dashboard/api/audit-log?limit=100`, { headers: session });
    expect(dashboard.body.data).toEqual(full.body.data);

    // Cursor pages of 4 walk the same list.
    const walked: unknown[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof call>> = await call('GET', `${suite.gw}/v1/audit-log?limit=4${cursor === null ? '' : `&cursor=${cursor}`}`, { headers: mgmt });
      expect(page.status).toBe(200);
      expect(page.body.data.length).toBeLessThanOrEqual(4);
      walked.push(...page.body.data);
      cursor = page.body.next_cursor;
    } while (cursor !== null);
    expect(walked).toEqual(full.body.data);

    // Filters: action, actor (kind and id), target, time.
    // Each filtered page, and the series filtered alike, in the log's order up to same-instant ties.
    let lastAts: string[] = [];
    const filtered = async (query: string) => {
      const data = (await call('GET', `${suite.gw}/v1/audit-log?limit=100&${query}`, { headers: mgmt })).body.data;
      lastAts = data.map((entry: { at: string }) => entry.at);
      return sameInstant(data.map(shape), lastAts);
    };
    const expectedOf = (entries: Expected[]) => sameInstant(entries, lastAts);
    expect(await filtered('action=api_key.update')).toEqual(expectedOf(newestFirst.filter((e) => e.action === 'api_key.update')));
    expect(await filtered('action=purchase.start')).toEqual(expectedOf(newestFirst.filter((e) => e.action === 'purchase.start')));
    expect(await filtered('actor_kind=operator')).toEqual(expectedOf(newestFirst.filter((e) => e.actor.kind === 'operator')));
    expect(await filtered('actor_kind=oauth_grant')).toEqual(expectedOf(newestFirst.filter((e) => e.actor.kind === 'oauth_grant')));
    expect(await filtered('actor_kind=oauth_grant')).toHaveLength(6);
    expect(await filtered('action=oauth_grant.revoke')).toEqual(expectedOf(newestFirst.filter((e) => e.action === 'oauth_grant.revoke')));
    expect(await filtered(`actor_id=${userId}`)).toEqual(expectedOf(newestFirst.filter((e) => e.actor.id === userId)));
    expect(await filtered(`actor_kind=management_key&actor_id=${String(admin.id)}`)).toEqual(expectedOf(newestFirst.filter((e) => e.actor.id === String(admin.id))));
    expect(await filtered(`target_id=${keyId}`)).toEqual(expectedOf(newestFirst.filter((e) => e.target_id === keyId)));
    const entryTimes = [...full.body.data].reverse().map((entry: { at: string }) => entry.at);
    const from = entryTimes[4] as string;
    const to = entryTimes[9] as string;
    expect(await filtered(`from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`))
      .toEqual(expectedOf(newestFirst.filter((_e, i) => { const t = Date.parse(full.body.data[i].at); return t >= Date.parse(from) && t < Date.parse(to); })));

    // Bad queries are 400s; an API key is 403.
    for (const query of ['action=key.explode', 'actor_kind=robot', 'from=yesterday', 'cursor=!!!', 'limit=0', 'target_id=a%20b']) {
      const bad = await call('GET', `${suite.gw}/v1/audit-log?${query}`, { headers: mgmt });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('invalid_request');
    }

    // No secret in either audit table: every plaintext used, and the SHA-256 of every key.
    for (const secret of [...secrets]) if (secret.startsWith('svc-')) secrets.push(createHash('sha256').update(secret).digest('hex'));
    expect(secrets.filter((s) => s.startsWith('svc-oat-') || s.startsWith('svc-ort-')).length).toBeGreaterThanOrEqual(4);
    expect(secrets.filter((s) => s.length < 8)).toEqual([]);
    for (const db of [suite.accountsDb, suite.db]) {
      const rows = (await db.query('SELECT row_to_json(a)::text AS line FROM audit_entries a')).rows as { line: string }[];
      expect(rows.length).toBeGreaterThan(0);
      for (const secret of secrets) {
        const found = await db.query("SELECT count(*)::int AS n FROM audit_entries a WHERE strpos(row_to_json(a)::text, $1) > 0", [secret]);
        expect({ secret: secret.slice(0, 6), n: found.rows[0].n }).toEqual({ secret: secret.slice(0, 6), n: 0 });
      }
    }
    // The search would find one: the test's own check can fail.
    const probe = String(full.body.data[0].target_id);
    expect((await suite.accountsDb.query("SELECT count(*)::int AS n FROM audit_entries a WHERE strpos(row_to_json(a)::text, $1) > 0", [probe])).rows[0].n).toBeGreaterThan(0);

    // Append-only in both databases: UPDATE, DELETE and TRUNCATE fail; nothing changed.
    for (const db of [suite.accountsDb, suite.db]) {
      const before = (await db.query('SELECT count(*)::int AS n FROM audit_entries')).rows[0].n;
      await expect(db.query("UPDATE audit_entries SET action = 'api_key.create'")).rejects.toThrow(/append-only/);
      await expect(db.query('DELETE FROM audit_entries')).rejects.toThrow(/append-only/);
      await expect(db.query('TRUNCATE audit_entries')).rejects.toThrow(/append-only/);
      expect((await db.query('SELECT count(*)::int AS n FROM audit_entries')).rows[0].n).toBe(before);
    }
  }, 120_000);

  it('lets the retention purge (npm run audit:purge) delete only entries older than the retention', async () => {
    const purgeCli = async (service: 'account-admin' | 'billing', databaseUrl: string, days: number) => {
      const { stdout } = await run(process.execPath, [join(repoRoot(), `services/${service}/dist/db/audit-purge-cli.js`)], {
        env: { ...process.env, DATABASE_URL: databaseUrl, AUDIT_RETENTION_DAYS: String(days) },
      });
      return JSON.parse(stdout) as { deleted: number; retentionDays: number };
    };
    for (const [service, db, url] of [['account-admin', suite.accountsDb, suite.stack.databases.accountAdmin], ['billing', suite.db, suite.stack.databases.billing]] as const) {
      const old = `aud_${'0'.repeat(24)}`;
      // A backdated row (an INSERT is the one statement the log allows).
      await db.query(
        `INSERT INTO audit_entries (id, account_id, at, actor_kind, actor_id, client_address, action, target_id, changes)
         VALUES ($1, 'acct_purge', now() - interval '40 days', 'operator', 'operator', NULL, 'api_key.delete', 'key_x', '{}')`, [old]);
      const count = async () => (await db.query('SELECT count(*)::int AS n FROM audit_entries')).rows[0].n as number;
      const total = await count();
      // Without the purge's setting: refused.
      await expect(db.query('DELETE FROM audit_entries WHERE id = $1', [old])).rejects.toThrow(/append-only/);
      // With it, a DELETE reaching a younger row is refused as a whole.
      await db.query('BEGIN');
      await db.query("SELECT set_config('svc.audit_purge_days', '30', true)");
      await expect(db.query('DELETE FROM audit_entries')).rejects.toThrow(/append-only/);
      await db.query('ROLLBACK');
      expect(await count()).toBe(total);
      // The purge with a retention longer than the row's age keeps it; with a shorter one, only it goes.
      await expect(purgeCli(service, url, 60)).resolves.toEqual({ deleted: 0, retentionDays: 60 });
      await expect(purgeCli(service, url, 30)).resolves.toEqual({ deleted: 1, retentionDays: 30 });
      expect(await count()).toBe(total - 1);
      // The setting was local to the purge's transaction: a DELETE is refused again.
      await expect(db.query('DELETE FROM audit_entries')).rejects.toThrow(/append-only/);
    }
  }, 60_000);
});
