import { KEY_CHANGES_CHANNEL, redisKeys } from '@svc/contracts';
import type { KeyChangeMessage, KeyRecord } from '@svc/contracts';
import { generateSecret, hashSecret } from '@svc/keys';
import type { KeyKind } from '@svc/keys';
import { freePort, redisUrl, waitFor } from '@svc/test-kit';
import Redis from 'ioredis';
import { INTERNAL_TOKEN, startGateway, TEST_REDIS_DB, useFakeBackedGateway } from './harness';
import type { RunningGateway } from './harness';

let counter = 0;
function newKey(kind: KeyKind, overrides: Partial<KeyRecord> = {}): { secret: string; hash: string; record: KeyRecord } {
  counter++;
  const secret = generateSecret(kind);
  const record: KeyRecord = {
    id: `key_fwd${counter}`, accountId: `acct_fwd${counter}`, kind, disabled: false, expiresAtMs: null,
    limitMicros: null, limitReset: null, version: 1, deleted: false, ...overrides,
  };
  return { secret, hash: hashSecret(secret), record };
}

describe('gateway forwarding and the auth chain (real Redis, real gRPC server, in-process gateway)', () => {
  const suite = useFakeBackedGateway({
    // Long enough that only an invalidation (never expiry) can explain a changed answer.
    KEY_CACHE_TTL_MS: '600000',
    KEY_PROPAGATION_MAX_MS: '600000',
  }, { billing: true });

  async function putInRedis(hash: string, value: unknown): Promise<void> {
    // account-admin stamps every value; an unstamped one is a miss to the gateway.
    const stamped = typeof value === 'object' && value !== null ? { writtenAtMs: Date.now(), ...value } : value;
    await suite.putKeyRecord(hash, stamped);
  }

  async function call(path: string, init: RequestInit = {}): Promise<{ response: Response; body: Record<string, unknown> }> {
    const response = await fetch(suite.gateway.url + path, init);
    const text = await response.text();
    return { response, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
  }

  const bearer = (secret: string): Record<string, string> => ({ authorization: `Bearer ${secret}` });
  const codeOf = (body: Record<string, unknown>): unknown => (body.error as Record<string, unknown> | undefined)?.code;

  describe('401 and 403 codes of spec section 5 on GET /v1/key and management routes', () => {
    it('a missing Authorization header is 401 invalid_api_key', async () => {
      const { response, body } = await call('/v1/key');
      expect(response.status).toBe(401);
      expect(codeOf(body)).toBe('invalid_api_key');
    });

    it.each([['Basic abc'], ['Bearer sk-abc'], ['Bearer svc-short'], [`Bearer  ${generateSecret('api')}`]])('a malformed header (%s) is 401 invalid_api_key', async (header) => {
      const { response, body } = await call('/v1/key', { headers: { authorization: header } });
      expect(response.status).toBe(401);
      expect(codeOf(body)).toBe('invalid_api_key');
    });

    it('an unknown key (account-admin answers not found over gRPC) is 401 invalid_api_key', async () => {
      const key = newKey('api');
      const { response, body } = await call('/v1/key', { headers: bearer(key.secret) });
      expect(response.status).toBe(401);
      expect(codeOf(body)).toBe('invalid_api_key');
    });

    it('an unknown key marked missing in Redis is 401 invalid_api_key without a gRPC call', async () => {
      const key = newKey('api');
      await putInRedis(key.hash, { missing: true });
      const before = suite.grpc.lookups;
      const { response, body } = await call('/v1/key', { headers: bearer(key.secret) });
      expect(response.status).toBe(401);
      expect(codeOf(body)).toBe('invalid_api_key');
      expect(suite.grpc.lookups).toBe(before);
    });

    it('a deleted key is 401 invalid_api_key', async () => {
      const key = newKey('api', { deleted: true });
      suite.grpc.records.set(key.hash, key.record);
      const { response, body } = await call('/v1/key', { headers: bearer(key.secret) });
      expect(response.status).toBe(401);
      expect(codeOf(body)).toBe('invalid_api_key');
    });

    it('a disabled key is 401 key_disabled', async () => {
      const key = newKey('api', { disabled: true });
      await putInRedis(key.hash, key.record);
      const { response, body } = await call('/v1/key', { headers: bearer(key.secret) });
      expect(response.status).toBe(401);
      expect(codeOf(body)).toBe('key_disabled');
    });

    it('an expired key is 401 key_expired', async () => {
      const key = newKey('management', { expiresAtMs: Date.now() - 1000 });
      suite.grpc.records.set(key.hash, key.record);
      const { response, body } = await call('/v1/key', { headers: bearer(key.secret) });
      expect(response.status).toBe(401);
      expect(codeOf(body)).toBe('key_expired');
    });

    it('an API key on a management endpoint is 403 wrong_key_type and is not forwarded', async () => {
      const key = newKey('api');
      await putInRedis(key.hash, key.record);
      const before = suite.accountAdmin.received.length;
      const { response, body } = await call('/v1/keys', { method: 'POST', headers: { ...bearer(key.secret), 'content-type': 'application/json' }, body: '{}' });
      expect(response.status).toBe(403);
      expect(codeOf(body)).toBe('wrong_key_type');
      const checkout = await call('/v1/credits/checkout', { method: 'POST', headers: bearer(key.secret) });
      expect(checkout.response.status).toBe(403);
      expect(suite.accountAdmin.received.length).toBe(before);
    });

    it('an unknown provider in a provider-keys path is 400 unknown_provider after authentication', async () => {
      const key = newKey('management');
      await putInRedis(key.hash, key.record);
      const { response, body } = await call('/v1/provider-keys/google', { headers: bearer(key.secret) });
      expect(response.status).toBe(400);
      expect(codeOf(body)).toBe('unknown_provider');
    });
  });

  it('a valid key is forwarded with the internal headers, the query string, and no spoofed identity or secret', async () => {
    const key = newKey('api');
    suite.grpc.records.set(key.hash, key.record);
    suite.accountAdmin.respond = (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'yes' }).end('{"kind":"api"}');
    };
    const { response, body } = await call('/v1/key?expand=1&x=%20y', {
      headers: { ...bearer(key.secret), 'x-svc-account-id': 'acct_spoofed', 'x-svc-internal-token': 'guess', 'x-svc-key-kind': 'management' },
    });
    expect(response.status).toBe(200);
    expect(body).toEqual({ kind: 'api' });
    expect(response.headers.get('x-upstream')).toBe('yes');
    const seen = suite.accountAdmin.last();
    expect(seen.method).toBe('GET');
    expect(seen.url).toBe('/v1/key?expand=1&x=%20y');
    expect(seen.headers['x-svc-internal-token']).toBe(INTERNAL_TOKEN);
    expect(seen.headers['x-svc-account-id']).toBe(key.record.accountId);
    expect(seen.headers['x-svc-key-id']).toBe(key.record.id);
    expect(seen.headers['x-svc-key-kind']).toBe('api');
    expect(seen.headers['x-svc-request-id']).toBe(response.headers.get('x-svc-request-id'));
    expect(seen.headers.authorization).toBeUndefined();
  });

  it('a key filled over gRPC once is served from the in-process cache afterwards (no further lookups)', async () => {
    const key = newKey('management');
    suite.grpc.records.set(key.hash, key.record);
    const before = suite.grpc.lookups;
    for (let i = 0; i < 5; i++) expect((await call('/v1/key', { headers: bearer(key.secret) })).response.status).toBe(200);
    expect(suite.grpc.lookups).toBe(before + 1);
  });

  it('a key-change message on the channel makes the new state apply without waiting for the cache lifetime', async () => {
    const key = newKey('api');
    await putInRedis(key.hash, key.record);
    expect((await call('/v1/key', { headers: bearer(key.secret) })).response.status).toBe(200);
    await putInRedis(key.hash, { ...key.record, disabled: true, version: 2 });
    // Still cached: the Redis write alone changes nothing here.
    expect((await call('/v1/key', { headers: bearer(key.secret) })).response.status).toBe(200);
    const message: KeyChangeMessage = { v: 1, keyHash: key.hash, keyId: key.record.id, accountId: key.record.accountId, version: 2 };
    await suite.redis.publish(KEY_CHANGES_CHANNEL, JSON.stringify(message));
    await waitFor('the key to be seen as disabled', async () => {
      const { body } = await call('/v1/key', { headers: bearer(key.secret) });
      return codeOf(body) === 'key_disabled' ? true : undefined;
    });
  });

  it('a reply with x-svc-changed-key-hash drops that key before the reply, and the header never reaches the caller', async () => {
    const manager = newKey('management');
    const target = newKey('api');
    await putInRedis(manager.hash, manager.record);
    await putInRedis(target.hash, target.record);
    expect((await call('/v1/key', { headers: bearer(target.secret) })).response.status).toBe(200);
    suite.accountAdmin.respond = (request, response) => {
      if (request.method === 'DELETE') {
        // account-admin writes the new record to Redis, then answers naming the changed hash.
        void suite.redis.set(redisKeys.keyRecord(target.hash), JSON.stringify({ ...target.record, deleted: true, version: 2 })).then(() => {
          response.writeHead(200, { 'content-type': 'application/json', 'x-svc-changed-key-hash': target.hash })
            .end(JSON.stringify({ id: target.record.id, deleted: true }));
        });
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    };
    const deleted = await call(`/v1/keys/${target.record.id}`, { method: 'DELETE', headers: bearer(manager.secret) });
    expect(deleted.response.status).toBe(200);
    expect(deleted.body).toEqual({ id: target.record.id, deleted: true });
    expect(deleted.response.headers.get('x-svc-changed-key-hash')).toBeNull();
    const after = await call('/v1/key', { headers: bearer(target.secret) });
    expect(after.response.status).toBe(401);
    expect(codeOf(after.body)).toBe('invalid_api_key');
  });

  it('the Stripe webhook body reaches billing byte for byte with its signature, and the reply comes back as is', async () => {
    const raw = Buffer.concat([Buffer.from('{"id":"evt_1",  "type":"checkout.session.completed","name":"caf\u00e9"}\r\n', 'utf8'), Buffer.from([0x00, 0xff, 0x7b])]);
    suite.billing.respond = (_request, response) => {
      response.writeHead(202, { 'content-type': 'text/plain', 'x-billing': '1' }).end('accepted');
    };
    const response = await fetch(`${suite.gateway.url}/v1/credits/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=abc' },
      body: raw,
    });
    expect(response.status).toBe(202);
    expect(await response.text()).toBe('accepted');
    expect(response.headers.get('x-billing')).toBe('1');
    const seen = suite.billing.last();
    expect(seen.body.equals(raw)).toBe(true);
    expect(seen.headers['stripe-signature']).toBe('t=1,v1=abc');
    expect(seen.headers['content-type']).toBe('application/json');
    expect(seen.headers['x-svc-account-id']).toBeUndefined();
  });

  it('dashboard calls pass cookies and the CSRF header through and get every Set-Cookie back', async () => {
    suite.accountAdmin.respond = (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'set-cookie': ['sid=abc; HttpOnly', 'theme=dark'] }).end('{"account_id":"acct_x"}');
    };
    const response = await fetch(`${suite.gateway.url}/dashboard/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: 'old=1', 'x-csrf-token': 'csrf-1' },
      body: '{"email":"a@b.c","password":"123456789012"}',
    });
    expect(response.status).toBe(200);
    expect(response.headers.getSetCookie()).toEqual(['sid=abc; HttpOnly', 'theme=dark']);
    const seen = suite.accountAdmin.last();
    expect(seen.url).toBe('/dashboard/api/login');
    expect(seen.headers.cookie).toBe('old=1');
    expect(seen.headers['x-csrf-token']).toBe('csrf-1');
    expect(seen.body.toString('utf8')).toBe('{"email":"a@b.c","password":"123456789012"}');
  });

  it('a backend status other than 2xx (e.g. 404 from account-admin) is passed back unchanged', async () => {
    const key = newKey('management');
    await putInRedis(key.hash, key.record);
    suite.accountAdmin.respond = (_request, response) => {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":"not_found"}}');
    };
    const { response, body } = await call('/v1/provider-keys/exa', { headers: bearer(key.secret) });
    expect(response.status).toBe(404);
    expect(codeOf(body)).toBe('not_found');
  });
});

describe('gateway with its backends down', () => {
  let gateway: RunningGateway;
  let redis: Redis;
  const key = newKey('management');

  beforeAll(async () => {
    redis = new Redis(redisUrl(TEST_REDIS_DB));
    await redis.set(redisKeys.keyRecord(key.hash), JSON.stringify({ ...key.record, writtenAtMs: Date.now() }));
    gateway = await startGateway({
      ACCOUNT_ADMIN_GRPC_URL: `127.0.0.1:${await freePort()}`,
      ACCOUNT_ADMIN_HTTP_URL: `http://127.0.0.1:${await freePort()}`,
      BILLING_HTTP_URL: `http://127.0.0.1:${await freePort()}`,
    });
  });

  afterAll(async () => {
    await gateway.close();
    await redis.del(redisKeys.keyRecord(key.hash));
    await redis.quit();
  });

  it('a key Redis does not know, with account-admin unreachable, is 500 internal without the cause', async () => {
    const response = await fetch(`${gateway.url}/v1/key`, { headers: { authorization: `Bearer ${generateSecret('api')}` } });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({ error: { code: 'internal', message: 'internal error' } });
    expect(text).not.toMatch(/ECONNREFUSED|UNAVAILABLE|127\.0\.0\.1/);
  });

  it('a forwarded call to a service that is down is 500 internal without its error text', async () => {
    const response = await fetch(`${gateway.url}/v1/credits`, { headers: { authorization: `Bearer ${key.secret}` } });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({ error: { code: 'internal', message: 'internal error' } });
    expect(text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
  });
});
