import { status } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { redisKeys } from '@svc/contracts';
import { keyRecordFromProto, ProtoLimitReset } from '@svc/grpc';
import type { LookupKeyResponse, ProtoAccount } from '@svc/grpc';
import { newId } from '@svc/ids';
import { generateSecret, hashSecret } from '@svc/keys';
import { call, gatewayHeaders, startHarness } from './harness';
import type { Harness, Identity } from './harness';

let h: Harness;
let owner: Identity;

function lookup(keyHash: string): Promise<LookupKeyResponse> {
  return new Promise((resolve, reject) => h.grpc.lookupKey({ keyHash }, (error, response) => (error === null ? resolve(response) : reject(error))));
}

function getAccount(accountId: string): Promise<ProtoAccount> {
  return new Promise((resolve, reject) => h.grpc.getAccount({ accountId }, (error, response) => (error === null ? resolve(response) : reject(error))));
}

async function createApiKey(body: unknown = {}): Promise<{ id: string; keyHash: string }> {
  const response = await call(h.baseUrl, 'POST', '/v1/keys', { json: body, headers: gatewayHeaders(owner) });
  expect(response.status).toBe(201);
  return { id: String(response.body.id), keyHash: hashSecret(String(response.body.secret)) };
}

beforeAll(async () => {
  h = await startHarness('grpc', { KEY_MISS_TTL_SECONDS: '30' });
  const account = await new Promise<ProtoAccount>((resolve, reject) =>
    h.grpc.createAccount({ email: 'grpc@example.com', name: 'gRPC' }, (error, response) => (error === null ? resolve(response) : reject(error))));
  owner = { accountId: account.accountId, keyId: newId('managementKey'), kind: 'management' };
});

afterAll(async () => {
  await h.close();
});

describe('LookupKey', () => {
  it('finds a key in Postgres, answers its record and refills Redis with it', async () => {
    const key = await createApiKey({ limit_usd: 2.5, limit_reset: 'daily' });
    await h.redis.del(redisKeys.keyRecord(key.keyHash));
    const response = await lookup(key.keyHash);
    expect(response.found).toBe(true);
    if (response.key === undefined) throw new Error('no key in the answer');
    const record = keyRecordFromProto(response.key);
    expect(record).toEqual({
      id: key.id, accountId: owner.accountId, kind: 'api', disabled: false, expiresAtMs: null,
      limitMicros: 2_500_000, limitReset: 'daily', version: 1, deleted: false,
    });
    expect(JSON.parse((await h.redis.get(redisKeys.keyRecord(key.keyHash))) ?? 'null')).toEqual({ ...record, writtenAtMs: expect.any(Number) });
  });

  it('answers found=false for an unknown hash and writes a short-lived miss marker', async () => {
    const keyHash = hashSecret(generateSecret('api'));
    const response = await lookup(keyHash);
    expect(response.found).toBe(false);
    expect(JSON.parse((await h.redis.get(redisKeys.keyRecord(keyHash))) ?? 'null')).toEqual({ missing: true, version: 0, writtenAtMs: expect.any(Number) });
    const ttl = await h.redis.ttl(redisKeys.keyRecord(keyHash));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(30);
  });

  it('never replaces a real record with a miss marker', async () => {
    const key = await createApiKey();
    await h.pg.query('UPDATE keys SET key_hash = $1 WHERE id = $2', ['0'.repeat(64), key.id]);
    const response = await lookup(key.keyHash);
    expect(response.found).toBe(false);
    expect(JSON.parse((await h.redis.get(redisKeys.keyRecord(key.keyHash))) ?? 'null')).toMatchObject({ id: key.id, version: 1 });
  });

  it('answers a deleted key as found with deleted=true', async () => {
    const key = await createApiKey();
    await call(h.baseUrl, 'DELETE', `/v1/keys/${key.id}`, { headers: gatewayHeaders(owner) });
    await h.redis.del(redisKeys.keyRecord(key.keyHash));
    const response = await lookup(key.keyHash);
    expect(response.found).toBe(true);
    expect(response.key).toMatchObject({ keyId: key.id, deleted: true, version: 2 });
    expect(await h.redis.ttl(redisKeys.keyRecord(key.keyHash))).toBeGreaterThan(0);
  });

  it('rejects a malformed hash with INVALID_ARGUMENT', async () => {
    await expect(lookup('not-a-hash')).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
  });
});

describe('accounts', () => {
  it('creates an account and reads it back; an unknown account is NOT_FOUND', async () => {
    const account = await getAccount(owner.accountId);
    expect(account).toMatchObject({ accountId: owner.accountId, email: 'grpc@example.com', name: 'gRPC' });
    expect(account.createdAtMs).toBeGreaterThan(0);
    const error = await getAccount(newId('account')).then(() => null, (e: ServiceError) => e);
    expect(error?.code).toBe(status.NOT_FOUND);
  });
});

describe('GetKeyLimits', () => {
  it('answers the limits of live API keys by id, leaving out unlimited, deleted and unknown keys', async () => {
    const daily = await createApiKey({ limit_usd: 2.5, limit_reset: 'daily' });
    const forever = await createApiKey({ limit_usd: 1 });
    const unlimited = await createApiKey({});
    const deleted = await createApiKey({ limit_usd: 3 });
    expect((await call(h.baseUrl, 'DELETE', `/v1/keys/${deleted.id}`, { headers: gatewayHeaders(owner) })).status).toBe(200);
    const response = await new Promise<{ limits: { keyId: string; accountId: string; limitMicros: number; limitReset: number }[] }>((resolve, reject) =>
      h.grpc.getKeyLimits({ keyIds: [daily.id, forever.id, unlimited.id, deleted.id, newId('apiKey'), 'not-an-id'] }, (error, answer) => (error === null ? resolve(answer) : reject(error))));
    const byId = new Map(response.limits.map((l) => [l.keyId, l]));
    expect([...byId.keys()].sort()).toEqual([daily.id, forever.id].sort());
    expect(byId.get(daily.id)).toEqual({ keyId: daily.id, accountId: owner.accountId, limitMicros: 2_500_000, limitReset: ProtoLimitReset.LIMIT_RESET_DAILY });
    expect(byId.get(forever.id)).toMatchObject({ limitMicros: 1_000_000, limitReset: ProtoLimitReset.LIMIT_RESET_NONE });
  });
});
