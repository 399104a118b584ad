import { redisKeys } from '@svc/contracts';
import type { KeyRecord } from '@svc/contracts';
import { generateSecret, hashSecret } from '@svc/keys';
import { waitFor } from '@svc/test-kit';
import { useFakeBackedGateway } from './harness';

/**
 * The hard propagation bound (docs/architecture.md) end to end: real Redis (db 2), a real gRPC
 * stand-in for account-admin's LookupKey (whose records play Postgres), an in-process gateway
 * with pub/sub off, so only the bound can bring a change in.
 */
let counter = 0;
function newKey(overrides: Partial<KeyRecord> = {}): { secret: string; hash: string; record: KeyRecord } {
  counter++;
  const secret = generateSecret('api');
  const record: KeyRecord = {
    id: `key_bound${counter}`, accountId: `acct_bound${counter}`, kind: 'api', disabled: false, expiresAtMs: null,
    limitMicros: null, limitReset: null, version: 1, deleted: false, ...overrides,
  };
  return { secret, hash: hashSecret(secret), record };
}

// P = 4 s, T = 1 s, skew = 1 s (default): a Redis value is taken while at most 2 s old and
// any state is used at most until its stamp + 3 s.
const P = 4000;

describe('key state bound with pub/sub off (real Redis, real gRPC server, in-process gateway)', () => {
  const suite = useFakeBackedGateway({ KEY_CHANGES_SUBSCRIBE: 'false', KEY_PROPAGATION_MAX_MS: String(P), KEY_CACHE_TTL_MS: '1000' });

  async function codeFor(secret: string): Promise<string> {
    const response = await fetch(`${suite.gateway.url}/v1/key`, { headers: { authorization: `Bearer ${secret}` } });
    const body = (await response.json()) as { error?: { code?: string } };
    return response.status === 200 ? 'ok' : (body.error?.code ?? String(response.status));
  }

  it('a fresh Redis record is used without asking account-admin', async () => {
    const key = newKey({ disabled: true });
    await suite.putKeyRecord(key.hash, { ...key.record, writtenAtMs: Date.now() });
    suite.grpc.records.set(key.hash, { ...key.record, disabled: false, version: 2 });
    const before = suite.grpc.lookups;
    expect(await codeFor(key.secret)).toBe('key_disabled');
    expect(suite.grpc.lookups).toBe(before);
  });

  it.each<[string, (now: number) => Record<string, unknown>]>([
    ['stamped older than the bound', (now) => ({ writtenAtMs: now - P })],
    ['without a stamp', () => ({})],
  ])('a Redis record %s is not used: the gateway asks LookupKey and acts on its newer state', async (_what, stamp) => {
    const active = newKey();
    await suite.putKeyRecord(active.hash, { ...active.record, ...stamp(Date.now()) });
    suite.grpc.records.set(active.hash, { ...active.record, disabled: true, version: 2 });
    const before = suite.grpc.lookups;
    expect(await codeFor(active.secret)).toBe('key_disabled');
    expect(suite.grpc.lookups).toBe(before + 1);

    // And the other way round: a stale "disabled" in Redis does not lock out a re-enabled key.
    const disabled = newKey({ disabled: true });
    await suite.putKeyRecord(disabled.hash, { ...disabled.record, ...stamp(Date.now()) });
    suite.grpc.records.set(disabled.hash, { ...disabled.record, disabled: false, version: 2 });
    expect(await codeFor(disabled.secret)).toBe('ok');
  });

  it('an old miss marker is not trusted either: a key created since is found over gRPC', async () => {
    const key = newKey();
    await suite.putKeyRecord(key.hash, { missing: true, version: 0, writtenAtMs: Date.now() - P });
    suite.grpc.records.set(key.hash, key.record);
    expect(await codeFor(key.secret)).toBe('ok');
  });

  it('a stale tombstone is still final (exempt from the age rule)', async () => {
    const key = newKey({ deleted: true, version: 3 });
    await suite.putKeyRecord(key.hash, { ...key.record, writtenAtMs: Date.now() - 86_400_000 });
    const before = suite.grpc.lookups;
    expect(await codeFor(key.secret)).toBe('invalid_api_key');
    expect(suite.grpc.lookups).toBe(before);
  });

  it('with no message and Redis keeping the old record, a disable reaches the gateway within P of the stamp', async () => {
    const key = newKey();
    const stampedAt = Date.now();
    await suite.putKeyRecord(key.hash, { ...key.record, writtenAtMs: stampedAt });
    suite.grpc.records.set(key.hash, key.record);
    const before = suite.grpc.lookups;
    expect(await codeFor(key.secret)).toBe('ok');
    expect(suite.grpc.lookups).toBe(before);
    // The key is disabled in the owner's store; Redis and pub/sub never hear of it.
    suite.grpc.records.set(key.hash, { ...key.record, disabled: true, version: 2 });
    const seenAt = await waitFor('the gateway to reject the disabled key', async () => ((await codeFor(key.secret)) === 'key_disabled' ? Date.now() : undefined), { intervalMs: 25 });
    // The bound under test: no decision rests on a state older than P.
    expect(seenAt - stampedAt).toBeLessThanOrEqual(P);
    expect(suite.grpc.lookups).toBeGreaterThan(before);
    // Redis still holds the old record; the answer came from LookupKey.
    expect(JSON.parse((await suite.redis.get(redisKeys.keyRecord(key.hash))) ?? '{}')).toMatchObject({ disabled: false, writtenAtMs: stampedAt });
  });
});
