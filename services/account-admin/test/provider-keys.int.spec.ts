import { credentials, Metadata } from '@grpc/grpc-js';
import { Redis } from 'ioredis';
import { INTERNAL_HEADERS, PROVIDER_KEY_CHANGES_CHANNEL } from '@svc/contracts';
import { decryptProviderKey } from '@svc/keys';
import { AccountAdminClient } from '@svc/grpc';
import type { ProtoProviderKeyEnvelope } from '@svc/grpc';
import { newId } from '@svc/ids';
import { redisUrl, waitFor } from '@svc/test-kit';
import { parseConfig } from '../src/config';
import { call, errorOf, gatewayHeaders, insertAccount, REDIS_DB, startHarness, TEST_KEK, TEST_KEK_ID } from './harness';
import type { Harness, Identity } from './harness';

/** account-admin's provider-key rules through its HTTP (as the gateway forwards them) and its gRPC. */
describe('provider keys in account-admin', () => {
  let h: Harness;
  let disabled: Harness;
  let subscriber: Redis;
  const messages: string[] = [];
  let owner: Identity;

  beforeAll(async () => {
    h = await startHarness('provider_keys');
    disabled = await startHarness('provider_keys_off', { BYOK_ENABLED: 'false' }, REDIS_DB + 1);
    owner = { accountId: await insertAccount(h.pg), keyId: newId('managementKey'), kind: 'management' };
    subscriber = new Redis(redisUrl(REDIS_DB));
    subscriber.on('message', (_channel: string, text: string) => messages.push(text));
    await subscriber.subscribe(PROVIDER_KEY_CHANGES_CHANNEL);
  }, 60_000);

  afterAll(async () => {
    subscriber?.disconnect();
    await h?.close();
    await disabled?.close();
  });

  it('503 byok_disabled on every endpoint of a deployment without BYOK (after unknown_provider)', async () => {
    const account = { ...owner, accountId: await insertAccount(disabled.pg) };
    for (const [method, path] of [['GET', '/v1/provider-keys'], ['GET', '/v1/provider-keys/exa'], ['PUT', '/v1/provider-keys/exa'], ['DELETE', '/v1/provider-keys/exa']] as const) {
      const reply = await call(disabled.baseUrl, method, path, { json: method === 'PUT' ? { key: 'abcdefgh' } : undefined, headers: gatewayHeaders(account) });
      expect([reply.status, errorOf(reply).code]).toEqual([503, 'byok_disabled']);
    }
    const unknown = await call(disabled.baseUrl, 'PUT', '/v1/provider-keys/bing', { json: { key: 'abcdefgh' }, headers: gatewayHeaders(account) });
    expect(errorOf(unknown).code).toBe('unknown_provider');
    // A body is validated before anything else (as for checkout): a bad one is 400 on every deployment.
    const bad = await call(disabled.baseUrl, 'PUT', '/v1/provider-keys/exa', { json: { key: 5 }, headers: gatewayHeaders(account) });
    expect([bad.status, errorOf(bad).code]).toEqual([400, 'invalid_request']);
  });

  it('stores only an envelope, announces each change, names the account for the forwarding gateway, and serves envelopes over gRPC', async () => {
    const secret = `tvly-${newId('account')}`;
    const stored = await call(h.baseUrl, 'PUT', '/v1/provider-keys/tavily', { json: { key: secret }, headers: gatewayHeaders(owner) });
    expect(stored.status).toBe(200);
    expect(stored.headers.get(INTERNAL_HEADERS.changedProviderKeys)).toBe(owner.accountId);
    await waitFor('the change message', () => messages.find((m) => m.includes(owner.accountId)));
    const row = await h.pg.query<Record<string, string>>('SELECT * FROM provider_keys WHERE account_id = $1', [owner.accountId]);
    expect(row.rows).toHaveLength(1);
    expect(JSON.stringify(row.rows)).not.toContain(secret);
    expect(row.rows[0]?.kek_id).toBe(TEST_KEK_ID);

    const grpc = new AccountAdminClient(`127.0.0.1:${h.config.GRPC_PORT}`, credentials.createInsecure());
    const keys = await new Promise<ProtoProviderKeyEnvelope[]>((resolve, reject) => {
      grpc.getProviderKeys({ accountId: owner.accountId }, new Metadata(), (error, response) => (error === null ? resolve(response.keys) : reject(error)));
    });
    grpc.close();
    expect(keys).toHaveLength(1);
    expect(JSON.stringify(keys)).not.toContain(secret);
    const ring = { current: { id: TEST_KEK_ID, key: Buffer.from(TEST_KEK, 'base64') }, previous: null };
    const key = keys[0];
    if (key === undefined) throw new Error('no envelope');
    expect(decryptProviderKey(ring, owner.accountId, 'tavily', key)).toBe(secret);

    const deleted = await call(h.baseUrl, 'DELETE', '/v1/provider-keys/tavily', { headers: gatewayHeaders(owner) });
    expect(deleted.headers.get(INTERNAL_HEADERS.changedProviderKeys)).toBe(owner.accountId);
    expect((await h.pg.query('SELECT 1 FROM provider_keys WHERE account_id = $1', [owner.accountId])).rowCount).toBe(0);
  });

  it('an API key gets 403 wrong_key_type', async () => {
    const reply = await call(h.baseUrl, 'GET', '/v1/provider-keys', { headers: gatewayHeaders({ ...owner, kind: 'api', keyId: newId('apiKey') }) });
    expect([reply.status, errorOf(reply).code]).toEqual([403, 'wrong_key_type']);
  });
});

describe('account-admin config', () => {
  it('refuses to start with BYOK enabled and no KEK, naming the variable and never the value', () => {
    expect(() => parseConfig({ INTERNAL_TOKEN: 'x'.repeat(16), SIGNUP_CONFIRMATION: 'off' })).toThrow(/PROVIDER_KEY_KEK is required when BYOK_ENABLED is true/);
    expect(parseConfig({ INTERNAL_TOKEN: 'x'.repeat(16), SIGNUP_CONFIRMATION: 'off', BYOK_ENABLED: 'false' }).kekRing).toBeNull();
    expect(() => parseConfig({ INTERNAL_TOKEN: 'x'.repeat(16), SIGNUP_CONFIRMATION: 'off', PROVIDER_KEY_KEK: TEST_KEK })).toThrow(/PROVIDER_KEY_KEK_ID is required/);
    const bad = (): unknown => parseConfig({ INTERNAL_TOKEN: 'x'.repeat(16), SIGNUP_CONFIRMATION: 'off', PROVIDER_KEY_KEK: TEST_KEK, PROVIDER_KEY_KEK_ID: 'k', PROVIDER_KEY_KEK_PREVIOUS: TEST_KEK });
    expect(bad).toThrow(/PROVIDER_KEY_KEK_PREVIOUS must be <previous key id>:<base64 key>/);
    expect(bad).not.toThrow(TEST_KEK.slice(0, 12));
  });
});
