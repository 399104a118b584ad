import { Redis } from 'ioredis';
import { KEY_CHANGES_CHANNEL, isKeyChangeMessage, periodOf, redisKeys } from '@svc/contracts';
import type { KeyChangeMessage, KeyRecord } from '@svc/contracts';
import { isId, newId } from '@svc/ids';
import { hashSecret } from '@svc/keys';
import { redisUrl, waitFor } from '@svc/test-kit';
import { KeyCacheRepository } from '../src/key-cache/key-cache.repository';
import { call, errorOf, gatewayHeaders, insertAccount, REDIS_DB, startHarness } from './harness';
import type { Harness, Identity } from './harness';

let h: Harness;
let subscriber: Redis;
const messages: KeyChangeMessage[] = [];
let owner: Identity;
let other: Identity;

async function signUpWithManagementKey(email: string): Promise<Identity> {
  const signup = await call(h.baseUrl, 'POST', '/dashboard/api/signup', { json: { email, password: 'correct horse battery' } });
  const cookie = (signup.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const created = await call(h.baseUrl, 'POST', '/dashboard/api/management-keys', {
    json: { name: 'admin' },
    headers: { cookie, 'x-csrf-token': String(signup.body.csrf_token) },
  });
  return { accountId: String(signup.body.account_id), keyId: String(created.body.id), kind: 'management' };
}

async function storedRecord(keyHash: string): Promise<KeyRecord | null> {
  const text = await h.redis.get(redisKeys.keyRecord(keyHash));
  return text === null ? null : (JSON.parse(text) as KeyRecord);
}

function messageFor(keyId: string, version: number): Promise<KeyChangeMessage> {
  return waitFor(`key-change message ${keyId} v${version}`, () => messages.find((m) => m.keyId === keyId && m.version === version));
}

async function createKey(body: unknown = {}, identity: Identity = owner) {
  const response = await call(h.baseUrl, 'POST', '/v1/keys', { json: body, headers: gatewayHeaders(identity) });
  expect(response.status).toBe(201);
  return response;
}

beforeAll(async () => {
  h = await startHarness('keys');
  subscriber = new Redis(redisUrl(REDIS_DB));
  subscriber.on('message', (_channel: string, text: string) => {
    const parsed: unknown = JSON.parse(text);
    if (isKeyChangeMessage(parsed)) messages.push(parsed);
  });
  await subscriber.subscribe(KEY_CHANGES_CHANNEL);
  owner = await signUpWithManagementKey('owner@example.com');
  other = await signUpWithManagementKey('other@example.com');
});

afterAll(async () => {
  await subscriber.quit();
  await h.close();
});

describe('POST /v1/keys', () => {
  it('creates an API key: 201 record with the secret once, versioned record in Redis, a change message', async () => {
    const requestId = newId('request');
    const response = await call(h.baseUrl, 'POST', '/v1/keys', {
      json: { name: 'ci', limit_usd: 10, limit_reset: 'monthly', expires_at: '2099-01-01T00:00:00Z' },
      headers: { ...gatewayHeaders(owner), 'x-svc-request-id': requestId },
    });
    expect(response.status).toBe(201);
    const body = response.body;
    const secret = String(body.secret);
    expect(secret).toMatch(/^svc-[A-Za-z0-9_-]{43}$/);
    expect(secret.startsWith('svc-mgmt-')).toBe(false);
    const monthly = periodOf('monthly', Date.now());
    expect(body).toMatchObject({
      name: 'ci', label: `svc-${secret.slice(4, 8)}…`, limit_usd: 10, limit_reset: 'monthly', limit_remaining_usd: 10,
      usage_usd: 0, usage_total_usd: 0, limit_resets_at: new Date(monthly.endMs).toISOString(),
      expires_at: '2099-01-01T00:00:00.000Z', disabled: false, last_used_at: null, request_id: requestId,
    });
    expect(response.headers.get('x-svc-request-id')).toBe(requestId);
    const keyHash = hashSecret(secret);
    expect(response.headers.get('x-svc-changed-key-hash')).toBe(keyHash);
    expect(await storedRecord(keyHash)).toEqual({
      id: body.id, accountId: owner.accountId, kind: 'api', disabled: false, expiresAtMs: Date.parse('2099-01-01T00:00:00Z'),
      limitMicros: 10_000_000, limitReset: 'monthly', version: 1, deleted: false, writtenAtMs: expect.any(Number),
    });
    expect(await messageFor(String(body.id), 1)).toEqual({ v: 1, keyHash, keyId: body.id, accountId: owner.accountId, version: 1 });
  });

  it('never stores the secret in Postgres, only its SHA-256', async () => {
    const response = await createKey({ name: 'secret check' });
    const secret = String(response.body.secret);
    const rows = await h.pg.query<{ row: string; key_hash: string }>('SELECT row_to_json(k)::text AS row, key_hash FROM keys k WHERE id = $1', [response.body.id]);
    expect(rows.rows).toHaveLength(1);
    const all = await h.pg.query<{ dump: string }>('SELECT string_agg(row_to_json(k)::text, \'\n\') AS dump FROM keys k');
    expect(all.rows[0]?.dump).not.toContain(secret.slice(4));
    expect(rows.rows[0]?.key_hash).toBe(hashSecret(secret));
  });

  it.each([
    ['an unknown field', { name: 'x', colour: 'red' }, 'colour'],
    ['a bad date', { expires_at: '2030-02-30T00:00:00Z' }, 'expires_at'],
    ['a date that is not RFC 3339', { expires_at: 'tomorrow' }, 'expires_at'],
    ['a past date', { expires_at: '2001-01-01T00:00:00Z' }, 'future'],
    ['a zero limit', { limit_usd: 0 }, 'limit_usd'],
    ['a negative limit', { limit_usd: -5 }, 'limit_usd'],
    ['a limit with 7 decimals', { limit_usd: 1.0000001 }, 'limit_usd'],
    ['a limit that is a string', { limit_usd: '10' }, 'limit_usd'],
    ['a limit above 10^9', { limit_usd: 2e9 }, 'limit_usd'],
    ['a reset without a limit', { limit_reset: 'daily' }, 'limit_reset needs limit_usd'],
    ['an unknown reset', { limit_usd: 1, limit_reset: 'hourly' }, 'limit_reset'],
    ['an empty name', { name: '' }, 'name'],
    ['a name over 100 characters', { name: 'x'.repeat(101) }, 'name'],
    ['disabled that is not a boolean', { disabled: 'yes' }, 'disabled'],
  ])('rejects %s with 400 invalid_request naming it', async (_title, body, named) => {
    const response = await call(h.baseUrl, 'POST', '/v1/keys', { json: body, headers: gatewayHeaders(owner) });
    expect(response.status).toBe(400);
    expect(errorOf(response).code).toBe('invalid_request');
    expect(errorOf(response).message).toContain(named);
  });

  it.each([
    ['not JSON', '{"name": '],
    ['a JSON array', '[1,2]'],
    ['a JSON string', '"name"'],
  ])('rejects a body that is %s with 400 invalid_request', async (_title, rawBody) => {
    const response = await call(h.baseUrl, 'POST', '/v1/keys', { rawBody, headers: gatewayHeaders(owner) });
    expect(response.status).toBe(400);
    expect(errorOf(response).code).toBe('invalid_request');
  });

  it('writes nothing when the body is rejected', async () => {
    const before = await h.pg.query('SELECT count(*)::int AS n FROM keys');
    await call(h.baseUrl, 'POST', '/v1/keys', { json: { limit_usd: 0 }, headers: gatewayHeaders(owner) });
    const after = await h.pg.query('SELECT count(*)::int AS n FROM keys');
    expect(after.rows[0]).toEqual(before.rows[0]);
  });
});

describe('authentication from the gateway', () => {
  it('answers 401 invalid_api_key without the internal token or with a wrong one, and makes its own request id', async () => {
    const spoofed = newId('request');
    const attempts: Array<Record<string, string>> = [
      { ...gatewayHeaders(owner), 'x-svc-internal-token': 'wrong-token-wrong-token', 'x-svc-request-id': spoofed },
      { 'x-svc-account-id': owner.accountId, 'x-svc-key-id': owner.keyId, 'x-svc-key-kind': 'management', 'x-svc-request-id': spoofed },
    ];
    for (const headers of attempts) {
      const response = await call(h.baseUrl, 'GET', '/v1/keys', { headers });
      expect(response.status).toBe(401);
      expect(errorOf(response).code).toBe('invalid_api_key');
      const requestId = response.headers.get('x-svc-request-id');
      expect(isId('request', requestId)).toBe(true);
      expect(requestId).not.toBe(spoofed);
      expect(errorOf(response).request_id).toBe(requestId);
    }
  });

  it('answers 403 wrong_key_type to an API key on every /v1/keys route', async () => {
    const apiKey = await createKey();
    const asApi: Identity = { accountId: owner.accountId, keyId: String(apiKey.body.id), kind: 'api' };
    for (const [method, path] of [['GET', '/v1/keys'], ['POST', '/v1/keys'], ['GET', `/v1/keys/${apiKey.body.id}`], ['PATCH', `/v1/keys/${apiKey.body.id}`], ['DELETE', `/v1/keys/${apiKey.body.id}`]] as const) {
      const response = await call(h.baseUrl, method, path, { headers: gatewayHeaders(asApi), ...(method === 'POST' || method === 'PATCH' ? { json: {} } : {}) });
      expect([method, path, response.status, errorOf(response).code]).toEqual([method, path, 403, 'wrong_key_type']);
    }
  });
});

describe('GET /v1/key', () => {
  it('shows an API key its own record, usage from the Redis counters and the rate limit', async () => {
    const created = await createKey({ name: 'self', limit_usd: 5, limit_reset: 'daily' });
    const keyId = String(created.body.id);
    const day = periodOf('daily', Date.now());
    await h.redis.set(redisKeys.keyPeriodUsage(owner.accountId, keyId, 'daily', day.startMs), '1250000');
    await h.redis.set(redisKeys.keyTotalUsage(owner.accountId, keyId), '40100000');
    const response = await call(h.baseUrl, 'GET', '/v1/key', { headers: gatewayHeaders({ accountId: owner.accountId, keyId, kind: 'api' }) });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      kind: 'api', id: keyId, name: 'self', limit_usd: 5, usage_usd: 1.25, limit_remaining_usd: 3.75, usage_total_usd: 40.1,
      limit_resets_at: new Date(day.endMs).toISOString(), rate_limit: { requests_per_second: 20, burst: 40 },
    });
    expect(response.body).not.toHaveProperty('secret');
  });

  it('shows a management key its own record without limit fields', async () => {
    const response = await call(h.baseUrl, 'GET', '/v1/key', { headers: gatewayHeaders(owner) });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ kind: 'management', id: owner.keyId, name: 'admin', disabled: false, rate_limit: { requests_per_second: 20, burst: 40 } });
    expect(response.body).not.toHaveProperty('limit_usd');
  });
});

describe('listing', () => {
  it('pages through the account\'s live API keys newest first with an opaque cursor', async () => {
    const fresh = await insertAccount(h.pg);
    const identity: Identity = { accountId: fresh, keyId: newId('managementKey'), kind: 'management' };
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push(String((await createKey({ name: `k${i}` }, identity)).body.id));
    const deleted = await createKey({ name: 'gone' }, identity);
    await call(h.baseUrl, 'DELETE', `/v1/keys/${deleted.body.id}`, { headers: gatewayHeaders(identity) });
    const first = await call(h.baseUrl, 'GET', '/v1/keys?limit=2', { headers: gatewayHeaders(identity) });
    expect(first.status).toBe(200);
    const firstIds = (first.body.data as Array<{ id: string }>).map((k) => k.id);
    expect(firstIds).toEqual([ids[2], ids[1]]);
    expect(typeof first.body.next_cursor).toBe('string');
    const second = await call(h.baseUrl, 'GET', `/v1/keys?limit=2&cursor=${String(first.body.next_cursor)}`, { headers: gatewayHeaders(identity) });
    expect((second.body.data as Array<{ id: string }>).map((k) => k.id)).toEqual([ids[0]]);
    expect(second.body.next_cursor).toBeNull();
    const all = await call(h.baseUrl, 'GET', '/v1/keys', { headers: gatewayHeaders(identity) });
    expect((all.body.data as unknown[]).length).toBe(3);
  });

  it.each(['limit=0', 'limit=101', 'limit=abc', 'limit=', 'cursor=abc', 'cursor=eyJ0IjoxfQ', 'cursor=%2F%2F', 'page=2'])(
    'rejects the query %s with 400 invalid_request',
    async (query) => {
      const response = await call(h.baseUrl, 'GET', `/v1/keys?${query}`, { headers: gatewayHeaders(owner) });
      expect(response.status).toBe(400);
      expect(errorOf(response).code).toBe('invalid_request');
    },
  );
});

describe('GET, PATCH and DELETE /v1/keys/{id}', () => {
  it('edits a key: each change bumps the version in Redis and publishes it', async () => {
    const created = await createKey({ name: 'edit', limit_usd: 3, limit_reset: 'weekly' });
    const id = String(created.body.id);
    const keyHash = hashSecret(String(created.body.secret));
    const disabled = await call(h.baseUrl, 'PATCH', `/v1/keys/${id}`, { json: { disabled: true, name: 'edited' }, headers: gatewayHeaders(owner) });
    expect(disabled.status).toBe(200);
    expect(disabled.body).toMatchObject({ id, name: 'edited', disabled: true, limit_usd: 3, limit_reset: 'weekly' });
    expect(disabled.headers.get('x-svc-changed-key-hash')).toBe(keyHash);
    expect(await storedRecord(keyHash)).toMatchObject({ version: 2, disabled: true });
    await messageFor(id, 2);
    const unlimited = await call(h.baseUrl, 'PATCH', `/v1/keys/${id}`, { json: { limit_usd: null }, headers: gatewayHeaders(owner) });
    expect(unlimited.body).toMatchObject({ limit_usd: null, limit_reset: null, limit_remaining_usd: null, limit_resets_at: null });
    expect(await storedRecord(keyHash)).toMatchObject({ version: 3, limitMicros: null, limitReset: null });
    await messageFor(id, 3);
    const read = await call(h.baseUrl, 'GET', `/v1/keys/${id}`, { headers: gatewayHeaders(owner) });
    expect(read.body).toMatchObject({ id, name: 'edited', disabled: true, limit_usd: null });
  });

  it('rejects a PATCH that leaves a reset period without a limit, or a past expiry', async () => {
    const created = await createKey({ name: 'p' });
    for (const json of [{ limit_reset: 'daily' }, { expires_at: '2020-01-01T00:00:00Z' }, { bogus: true }]) {
      const response = await call(h.baseUrl, 'PATCH', `/v1/keys/${created.body.id}`, { json, headers: gatewayHeaders(owner) });
      expect(response.status).toBe(400);
      expect(errorOf(response).code).toBe('invalid_request');
    }
  });

  it('deletes a key: 200 {id, deleted}, Redis holds a deleted record with a TTL, the id is then 404', async () => {
    const created = await createKey({ name: 'del' });
    const id = String(created.body.id);
    const keyHash = hashSecret(String(created.body.secret));
    const response = await call(h.baseUrl, 'DELETE', `/v1/keys/${id}`, { headers: gatewayHeaders(owner) });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id, deleted: true });
    expect(response.headers.get('x-svc-changed-key-hash')).toBe(keyHash);
    expect(await storedRecord(keyHash)).toMatchObject({ id, deleted: true, version: 2 });
    expect(await h.redis.ttl(redisKeys.keyRecord(keyHash))).toBeGreaterThan(6 * 24 * 3600);
    await messageFor(id, 2);
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const again = await call(h.baseUrl, method, `/v1/keys/${id}`, { headers: gatewayHeaders(owner), ...(method === 'PATCH' ? { json: { name: 'x' } } : {}) });
      expect([method, again.status, errorOf(again).code]).toEqual([method, 404, 'not_found']);
    }
  });

  it('answers 404 not_found for another account\'s key, a management key id and an unknown id', async () => {
    const theirs = await createKey({ name: 'theirs' }, other);
    for (const id of [String(theirs.body.id), owner.keyId, newId('apiKey'), 'nonsense']) {
      for (const method of ['GET', 'PATCH', 'DELETE']) {
        const response = await call(h.baseUrl, method, `/v1/keys/${id}`, { headers: gatewayHeaders(owner), ...(method === 'PATCH' ? { json: { disabled: true } } : {}) });
        expect([id, method, response.status, errorOf(response).code]).toEqual([id, method, 404, 'not_found']);
      }
    }
    const untouched = await call(h.baseUrl, 'GET', `/v1/keys/${theirs.body.id}`, { headers: gatewayHeaders(other) });
    expect(untouched.body).toMatchObject({ disabled: false });
  });
});

describe('the Redis key cache', () => {
  it('never lets an older version overwrite a newer one', async () => {
    const created = await createKey({ name: 'race' });
    const id = String(created.body.id);
    const keyHash = hashSecret(String(created.body.secret));
    await call(h.baseUrl, 'PATCH', `/v1/keys/${id}`, { json: { disabled: true }, headers: gatewayHeaders(owner) });
    const cache = h.app.get(KeyCacheRepository);
    const stale: KeyRecord = { id, accountId: owner.accountId, kind: 'api', disabled: false, expiresAtMs: null, limitMicros: null, limitReset: null, version: 1, deleted: false };
    expect(await cache.writeRecord(keyHash, stale, Date.now())).toBe(false);
    expect(await cache.writeMiss(keyHash, 60, Date.now())).toBe(false);
    expect(await storedRecord(keyHash)).toMatchObject({ version: 2, disabled: true });
    expect(await cache.writeRecord(keyHash, { ...stale, version: 3, disabled: false }, Date.now())).toBe(true);
    expect(await storedRecord(keyHash)).toMatchObject({ version: 3, disabled: false });
  });
});

describe('routing', () => {
  it('answers 404 with a JSON body for an unknown path and 405 with Allow for a wrong method', async () => {
    const missing = await call(h.baseUrl, 'GET', '/v1/nothing', { headers: gatewayHeaders(owner) });
    expect(missing.status).toBe(404);
    expect(errorOf(missing).code).toBe('not_found');
    const wrong = await call(h.baseUrl, 'PUT', '/v1/keys', { headers: gatewayHeaders(owner), json: {} });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toContain('POST');
    expect(errorOf(wrong).request_id).toBe(wrong.headers.get('x-svc-request-id'));
  });

  it('reports readiness when PostgreSQL and Redis answer', async () => {
    expect((await call(h.baseUrl, 'GET', '/healthz')).status).toBe(200);
    const ready = await call(h.baseUrl, 'GET', '/readyz');
    expect(ready.body).toMatchObject({ ok: true, postgres: true, redis: true });
  });
});
