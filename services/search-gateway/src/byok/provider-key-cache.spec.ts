import pino from 'pino';
import { encryptProviderKey } from '@svc/keys';
import type { KekRing } from '@svc/keys';
import { NO_PROVIDER_KEYS, ProviderKeyCache } from './provider-key-cache';
import type { ProviderKeySource, StoredEnvelope } from './provider-key-source.grpc';

const ring: KekRing = { current: { id: 'k1', key: Buffer.alloc(32, 9) }, previous: null };
const other: KekRing = { current: { id: 'k0', key: Buffer.alloc(32, 8) }, previous: null };
const log = pino({ level: 'silent' });

/** A source whose answers the test releases by hand. */
class ManualSource implements ProviderKeySource {
  calls = 0;
  private pending: { resolve: (value: StoredEnvelope[]) => void; reject: (error: Error) => void }[] = [];
  envelopes(): Promise<StoredEnvelope[]> {
    this.calls += 1;
    return new Promise((resolve, reject) => this.pending.push({ resolve, reject }));
  }
  answer(value: StoredEnvelope[]): void {
    this.pending.shift()?.resolve(value);
  }
  fail(): void {
    this.pending.shift()?.reject(new Error('unavailable'));
  }
}

const exa = (key: string, kek: KekRing = ring): StoredEnvelope => ({ provider: 'exa', envelope: encryptProviderKey(kek, 'acct_1', 'exa', key) });
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('ProviderKeyCache', () => {
  let now = 1_000_000;
  const options = { ttlMs: 5_000, staleMaxMs: 15_000, maxEntries: 10, now: () => now };

  it('fetches once for concurrent searches, opens the envelopes, and serves the copy until it expires', async () => {
    const source = new ManualSource();
    const cache = new ProviderKeyCache(source, ring, options, log);
    const a = cache.keysFor('acct_1');
    const b = cache.keysFor('acct_1');
    expect(source.calls).toBe(1);
    source.answer([exa('exa-own-1')]);
    expect(await a).toEqual({ exa: 'exa-own-1' });
    expect(await b).toEqual({ exa: 'exa-own-1' });
    expect(cache.keysFor('acct_1')).toEqual({ exa: 'exa-own-1' });
    now += 5_001;
    const again = cache.keysFor('acct_1');
    expect(source.calls).toBe(2);
    source.answer([]);
    expect(await again).toBe(NO_PROVIDER_KEYS);
  });

  it('an invalidation during a fetch: the older answer is not kept', async () => {
    const source = new ManualSource();
    const cache = new ProviderKeyCache(source, ring, options, log);
    const stale = cache.keysFor('acct_1');
    cache.invalidate('acct_1');
    const fresh = cache.keysFor('acct_1');
    source.answer([exa('before-the-change')]);
    source.answer([]);
    expect(await stale).toEqual({ exa: 'before-the-change' });
    expect(await fresh).toBe(NO_PROVIDER_KEYS);
    await settle();
    expect(cache.keysFor('acct_1')).toBe(NO_PROVIDER_KEYS);
    expect(source.calls).toBe(2);
  });

  it('account-admin unreachable: the last set within the propagation bound, else none; a key this KEK cannot open is skipped', async () => {
    const source = new ManualSource();
    const cache = new ProviderKeyCache(source, ring, options, log);
    const first = cache.keysFor('acct_1');
    source.answer([exa('exa-own-2')]);
    await first;
    now += 6_000;
    const during = cache.keysFor('acct_1');
    source.fail();
    expect(await during).toEqual({ exa: 'exa-own-2' });
    now += 20_000;
    const later = cache.keysFor('acct_1');
    source.fail();
    expect(await later).toBe(NO_PROVIDER_KEYS);
    now += 2_000;
    const wrongKek = cache.keysFor('acct_1');
    source.answer([exa('sealed-elsewhere', other)]);
    expect(await wrongKek).toBe(NO_PROVIDER_KEYS);
  });

  it('disabled (no KEK ring): no account has keys and nothing is fetched', () => {
    const source = new ManualSource();
    const cache = new ProviderKeyCache(source, null, options, log);
    expect(cache.keysFor('acct_1')).toBe(NO_PROVIDER_KEYS);
    expect(source.calls).toBe(0);
  });
});
