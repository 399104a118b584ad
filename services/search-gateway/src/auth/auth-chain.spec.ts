import type { KeyLookup, KeyRecord } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { generateOAuthSecret, generateSecret, hashSecret } from '@svc/keys';
import pino from 'pino';
import { AuthChain } from './auth-chain';
import { KeyCache } from './key-cache';
import type { KeyOwner, OwnerLookup } from './key-lookup.grpc';
import type { KeyRecordStore, StoreRead } from './key-record.store';
import type { KeyStateBound } from './key-state-bound';

const NOW = 1_800_000_000_000;

function record(overrides: Partial<KeyRecord> = {}): KeyRecord {
  return {
    id: 'key_1', accountId: 'acct_1', kind: 'api', disabled: false, expiresAtMs: null,
    limitMicros: null, limitReset: null, version: 1, deleted: false, ...overrides,
  };
}

class FakeStore implements KeyRecordStore {
  reads = 0;
  answers = new Map<string, StoreRead>();
  read(keyHash: string): Promise<StoreRead> {
    this.reads++;
    return Promise.resolve(this.answers.get(keyHash) ?? { kind: 'miss' });
  }
}

class FakeOwner implements KeyOwner {
  calls = 0;
  /** How long each answer takes on the test clock. */
  latencyMs = 0;
  constructor(private readonly clock: { now: number }) {}
  answers = new Map<string, KeyLookup>();
  unreachable = false;
  private gate: Promise<void> = Promise.resolve();
  private openGate: () => void = () => undefined;
  hold(): void {
    this.gate = new Promise((resolve) => {
      this.openGate = resolve;
    });
  }
  release(): void {
    this.openGate();
  }
  async lookup(keyHash: string): Promise<OwnerLookup> {
    this.calls++;
    await this.gate;
    this.clock.now += this.latencyMs;
    if (this.unreachable) return { kind: 'error', error: new Error('14 UNAVAILABLE: connect ECONNREFUSED') };
    return { kind: 'found', lookup: this.answers.get(keyHash) ?? { found: false } };
  }
}

function setup(ttlMs = 5000, propagationMaxMs = 15_000): { chain: AuthChain; store: FakeStore; owner: FakeOwner; cache: KeyCache; clock: { now: number } } {
  const clock = { now: NOW };
  const cache = new KeyCache({ ttlMs, maxEntries: 1000, now: () => clock.now });
  const store = new FakeStore();
  const owner = new FakeOwner(clock);
  const bound: KeyStateBound = { propagationMaxMs, cacheTtlMs: ttlMs, clockSkewMs: 1000 };
  const chain = new AuthChain({ cache, store, owner, log: pino({ level: 'silent' }), bound, now: () => clock.now });
  return { chain, store, owner, cache, clock };
}

describe('AuthChain.authenticate outcomes', () => {
  it('rejects a missing or malformed header as invalid_api_key without any lookup', async () => {
    const { chain, store, owner } = setup();
    await expect(chain.authenticate(undefined, 'either')).resolves.toEqual({ ok: false, code: 'invalid_api_key', reason: 'missing' });
    await expect(chain.authenticate('Bearer sk-nope', 'either')).resolves.toEqual({ ok: false, code: 'invalid_api_key', reason: 'malformed' });
    expect(store.reads + owner.calls).toBe(0);
  });

  it.each<[string, Partial<KeyRecord> | null, string, string]>([
    ['an unknown key', null, 'invalid_api_key', 'unknown'],
    ['a deleted key', { deleted: true }, 'invalid_api_key', 'deleted'],
    ['a disabled key', { disabled: true }, 'key_disabled', 'disabled'],
    ['an expired key', { expiresAtMs: NOW }, 'key_expired', 'expired'],
    ['an API key on a management route', {}, 'wrong_key_type', 'wrong_kind'],
  ])('answers %s with %s', async (_what, overrides, code, reason) => {
    const { chain, store } = setup();
    const secret = generateSecret('api');
    if (overrides !== null) store.answers.set(hashSecret(secret), { kind: 'found', writtenAtMs: NOW, lookup: { found: true, record: record(overrides) } });
    const required = code === 'wrong_key_type' ? 'management' : 'either';
    await expect(chain.authenticate(`Bearer ${secret}`, required)).resolves.toEqual({ ok: false, code, reason });
  });

  it('accepts a valid key of the required kind and returns its record and hash', async () => {
    const { chain, store } = setup();
    const secret = generateSecret('management');
    const rec = record({ kind: 'management', expiresAtMs: NOW + 1 });
    store.answers.set(hashSecret(secret), { kind: 'found', writtenAtMs: NOW, lookup: { found: true, record: rec } });
    await expect(chain.authenticate(`Bearer ${secret}`, 'management')).resolves.toEqual({ ok: true, record: rec, keyHash: hashSecret(secret) });
  });
});

describe('AuthChain.authenticateAccessToken (the connector URL, decision 0029)', () => {
  const origin = (ip: string) => ({ ip, headers: {} });

  it('resolves a token through the same chain to its grant key\'s record, and refuses what is not an access token without a lookup', async () => {
    const { chain, store, owner } = setup();
    const token = generateOAuthSecret('access');
    store.answers.set(hashSecret(token), { kind: 'found', writtenAtMs: NOW, lookup: { found: true, record: record() } });
    await expect(chain.authenticateAccessToken(`Bearer ${token}`, origin('192.0.2.1'))).resolves.toEqual({ ok: true, record: record(), keyHash: hashSecret(token) });
    const reads = store.reads;
    await expect(chain.authenticateAccessToken(`Bearer ${generateSecret('api')}`, origin('192.0.2.1'))).resolves.toEqual({ ok: false, code: 'invalid_api_key', reason: 'malformed' });
    await expect(chain.authenticateAccessToken(undefined, origin('192.0.2.1'))).resolves.toEqual({ ok: false, code: 'invalid_api_key', reason: 'missing' });
    expect([store.reads, owner.calls]).toEqual([reads, 0]);
  });

  it('applies the grant key\'s address fence (allowed_ips) to the client\'s address, as for a key', async () => {
    const { chain, store } = setup();
    const token = generateOAuthSecret('access');
    store.answers.set(hashSecret(token), { kind: 'found', writtenAtMs: NOW, lookup: { found: true, record: record({ allowedIps: ['192.0.2.0/24'] }) } });
    await expect(chain.authenticateAccessToken(`Bearer ${token}`, origin('198.51.100.7'))).resolves.toEqual({ ok: false, code: 'ip_not_allowed', reason: 'address' });
    await expect(chain.authenticateAccessToken(`Bearer ${token}`, origin('192.0.2.9'))).resolves.toMatchObject({ ok: true });
  });
});

describe('AuthChain lookup steps', () => {
  it('a cached key costs no Redis read and no gRPC call', async () => {
    const { chain, store, owner } = setup();
    const secret = generateSecret('api');
    store.answers.set(hashSecret(secret), { kind: 'found', writtenAtMs: NOW, lookup: { found: true, record: record() } });
    await chain.authenticate(`Bearer ${secret}`, 'api');
    expect(store.reads).toBe(1);
    for (let i = 0; i < 10; i++) expect((await chain.authenticate(`Bearer ${secret}`, 'api')).ok).toBe(true);
    expect(store.reads).toBe(1);
    expect(owner.calls).toBe(0);
  });

  it('an unknown key is cached as a negative entry until the lifetime ends', async () => {
    const { chain, store, owner, clock } = setup(1000);
    const header = `Bearer ${generateSecret('api')}`;
    await chain.authenticate(header, 'api');
    await chain.authenticate(header, 'api');
    expect(store.reads).toBe(1);
    expect(owner.calls).toBe(1);
    clock.now += 1000;
    await chain.authenticate(header, 'api');
    expect(owner.calls).toBe(2);
  });

  it('a Redis miss asks account-admin once and uses its answer', async () => {
    const { chain, owner } = setup();
    const secret = generateSecret('api');
    owner.answers.set(hashSecret(secret), { found: true, record: record({ disabled: true }) });
    await expect(chain.authenticate(`Bearer ${secret}`, 'api')).resolves.toMatchObject({ code: 'key_disabled' });
    expect(owner.calls).toBe(1);
  });

  it('a Redis fault falls through to account-admin', async () => {
    const { chain, store, owner } = setup();
    const secret = generateSecret('api');
    store.answers.set(hashSecret(secret), { kind: 'error', error: new Error('ECONNREFUSED') });
    owner.answers.set(hashSecret(secret), { found: true, record: record() });
    await expect(chain.authenticate(`Bearer ${secret}`, 'api')).resolves.toMatchObject({ ok: true });
    expect(owner.calls).toBe(1);
  });

  it('when neither Redis nor account-admin answers, throws internal without the cause and caches nothing', async () => {
    const { chain, store, owner, cache } = setup();
    const secret = generateSecret('api');
    store.answers.set(hashSecret(secret), { kind: 'error', error: new Error('ECONNREFUSED') });
    owner.unreachable = true;
    const failure = await chain.authenticate(`Bearer ${secret}`, 'api').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(AppError);
    expect((failure as AppError).code).toBe('internal');
    expect((failure as AppError).message).not.toMatch(/ECONNREFUSED|UNAVAILABLE/);
    expect(cache.size).toBe(0);
  });

  it('50 concurrent misses for one hash share one Redis read and one gRPC call', async () => {
    const { chain, store, owner } = setup();
    const secret = generateSecret('api');
    owner.answers.set(hashSecret(secret), { found: true, record: record() });
    owner.hold();
    const pending = Array.from({ length: 50 }, () => chain.authenticate(`Bearer ${secret}`, 'api'));
    await Promise.resolve();
    owner.release();
    const outcomes = await Promise.all(pending);
    expect(outcomes.every((outcome) => outcome.ok)).toBe(true);
    expect(store.reads).toBe(1);
    expect(owner.calls).toBe(1);
  });

  it('an invalidation during a fill keeps the filled answer out of the cache', async () => {
    const { chain, owner, cache } = setup();
    const secret = generateSecret('api');
    owner.answers.set(hashSecret(secret), { found: true, record: record() });
    owner.hold();
    const pending = chain.authenticate(`Bearer ${secret}`, 'api');
    await Promise.resolve();
    chain.invalidate(hashSecret(secret));
    owner.release();
    await pending;
    expect(cache.get(hashSecret(secret))).toBeUndefined();
  });

  it('invalidate drops one key and invalidateAll drops every key', async () => {
    const { chain, store } = setup();
    const a = generateSecret('api');
    const b = generateSecret('api');
    for (const secret of [a, b]) store.answers.set(hashSecret(secret), { kind: 'found', writtenAtMs: NOW, lookup: { found: true, record: record() } });
    await chain.authenticate(`Bearer ${a}`, 'api');
    await chain.authenticate(`Bearer ${b}`, 'api');
    store.answers.set(hashSecret(a), { kind: 'found', writtenAtMs: NOW, lookup: { found: true, record: record({ disabled: true }) } });
    chain.invalidate(hashSecret(a));
    await expect(chain.authenticate(`Bearer ${a}`, 'api')).resolves.toMatchObject({ code: 'key_disabled' });
    expect(store.reads).toBe(3);
    chain.invalidateAll();
    await chain.authenticate(`Bearer ${b}`, 'api');
    expect(store.reads).toBe(4);
  });
});

describe('AuthChain propagation bound (P = 15 s, T = 5 s, skew 1 s)', () => {
  it('a Redis record expires from the cache at writtenAtMs + P - skew when that comes before the cache lifetime', async () => {
    const { chain, store, clock } = setup(5000);
    const secret = generateSecret('api');
    // Stamped 12 s ago: usable until stamp + 14 s, i.e. 2 s from now (not the 5 s lifetime).
    store.answers.set(hashSecret(secret), { kind: 'found', writtenAtMs: NOW - 12_000, lookup: { found: true, record: record() } });
    await chain.authenticate(`Bearer ${secret}`, 'api');
    clock.now += 1999;
    await chain.authenticate(`Bearer ${secret}`, 'api');
    expect(store.reads).toBe(1);
    clock.now += 1;
    store.answers.set(hashSecret(secret), { kind: 'found', writtenAtMs: clock.now, lookup: { found: true, record: record({ disabled: true }) } });
    await expect(chain.authenticate(`Bearer ${secret}`, 'api')).resolves.toMatchObject({ code: 'key_disabled' });
    expect(store.reads).toBe(2);
  });

  it('a fresh Redis record keeps its full cache lifetime', async () => {
    const { chain, store, clock } = setup(5000);
    const secret = generateSecret('api');
    store.answers.set(hashSecret(secret), { kind: 'found', writtenAtMs: NOW - 9000, lookup: { found: true, record: record() } });
    await chain.authenticate(`Bearer ${secret}`, 'api');
    clock.now += 4999;
    await chain.authenticate(`Bearer ${secret}`, 'api');
    expect(store.reads).toBe(1);
    clock.now += 1;
    await chain.authenticate(`Bearer ${secret}`, 'api');
    expect(store.reads).toBe(2);
  });

  it('a gRPC answer is stamped when the request was sent, not when it came back', async () => {
    const { chain, owner, clock } = setup(5000);
    const secret = generateSecret('api');
    owner.answers.set(hashSecret(secret), { found: true, record: record() });
    owner.latencyMs = 12_000;
    await chain.authenticate(`Bearer ${secret}`, 'api');
    expect(owner.calls).toBe(1);
    // Sent at NOW, answered at NOW + 12 s: usable until NOW + 14 s, not NOW + 17 s.
    owner.latencyMs = 0;
    clock.now = NOW + 13_999;
    await chain.authenticate(`Bearer ${secret}`, 'api');
    expect(owner.calls).toBe(1);
    clock.now = NOW + 14_000;
    await chain.authenticate(`Bearer ${secret}`, 'api');
    expect(owner.calls).toBe(2);
  });

  it('an answer already past the bound when it arrives is used once and not cached', async () => {
    const { chain, owner, cache } = setup(5000);
    const secret = generateSecret('api');
    owner.answers.set(hashSecret(secret), { found: true, record: record() });
    owner.latencyMs = 14_000;
    await expect(chain.authenticate(`Bearer ${secret}`, 'api')).resolves.toMatchObject({ ok: true });
    expect(cache.size).toBe(0);
  });

  it('a tombstone from Redis has no stamp deadline: it keeps the cache lifetime', async () => {
    const { chain, store, clock } = setup(5000);
    const secret = generateSecret('api');
    store.answers.set(hashSecret(secret), { kind: 'found', writtenAtMs: null, lookup: { found: true, record: record({ deleted: true }) } });
    await chain.authenticate(`Bearer ${secret}`, 'api');
    clock.now += 4999;
    await expect(chain.authenticate(`Bearer ${secret}`, 'api')).resolves.toMatchObject({ reason: 'deleted' });
    expect(store.reads).toBe(1);
  });

  it('with pub/sub silent, a disabled key is seen within P of the change whatever Redis holds', async () => {
    const { chain, store, owner, clock } = setup(5000);
    const secret = generateSecret('api');
    const hash = hashSecret(secret);
    // Redis holds a record stamped just now; then the key is disabled in Postgres and
    // neither Redis nor pub/sub hears of it.
    store.answers.set(hash, { kind: 'found', writtenAtMs: NOW, lookup: { found: true, record: record() } });
    owner.answers.set(hash, { found: true, record: record({ disabled: true, version: 2 }) });
    const changedAt = NOW;
    let decidedAt: number | undefined;
    for (let t = NOW; t <= NOW + 30_000; t += 100) {
      clock.now = t;
      // Redis keeps returning its old value only while the store's age rule would pass it.
      if (t - NOW > 9000) store.answers.set(hash, { kind: 'miss' });
      const outcome = await chain.authenticate(`Bearer ${secret}`, 'api');
      if (!outcome.ok) {
        decidedAt = t;
        break;
      }
    }
    expect(decidedAt).toBeDefined();
    expect((decidedAt ?? Number.POSITIVE_INFINITY) - changedAt).toBeLessThanOrEqual(15_000);
    expect(owner.calls).toBe(1);
  });
});
