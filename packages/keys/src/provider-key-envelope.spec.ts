import { randomBytes } from 'node:crypto';
import { decryptProviderKey, encryptProviderKey, kekRingFromEnv, providerKeyLabel, rewrapProviderKey } from './provider-key-envelope';
import type { KekRing } from './provider-key-envelope';

const b64 = (): string => randomBytes(32).toString('base64');

function ring(env: Record<string, string>): KekRing {
  const parsed = kekRingFromEnv(env);
  if (parsed === null) throw new Error('no ring');
  return parsed;
}

describe('provider key envelopes', () => {
  const k1 = b64();
  const k2 = b64();
  const one = ring({ PROVIDER_KEY_KEK: k1, PROVIDER_KEY_KEK_ID: 'k1' });

  it('round-trips, with a fresh data key and iv per record, and no plaintext in the envelope', () => {
    const a = encryptProviderKey(one, 'acct_1', 'exa', 'exa-secret-123456');
    const b = encryptProviderKey(one, 'acct_1', 'exa', 'exa-secret-123456');
    expect(a.ciphertext).not.toBe(b.ciphertext);
    expect(a.wrappedKey).not.toBe(b.wrappedKey);
    expect(JSON.stringify(a)).not.toContain('exa-secret');
    expect(Buffer.from(a.ciphertext, 'base64').toString('latin1')).not.toContain('exa-secret');
    expect(decryptProviderKey(one, 'acct_1', 'exa', a)).toBe('exa-secret-123456');
  });

  it('binds the account and the provider', () => {
    const a = encryptProviderKey(one, 'acct_1', 'exa', 'exa-secret-123456');
    expect(() => decryptProviderKey(one, 'acct_2', 'exa', a)).toThrow(/does not decrypt/);
    expect(() => decryptProviderKey(one, 'acct_1', 'brave', a)).toThrow(/does not decrypt/);
  });

  it('rotates: the previous KEK still opens old records; rewrap moves them to the new one', () => {
    const old = encryptProviderKey(one, 'acct_1', 'tavily', 'tvly-abcdefgh');
    const rotated = ring({ PROVIDER_KEY_KEK: k2, PROVIDER_KEY_KEK_ID: 'k2', PROVIDER_KEY_KEK_PREVIOUS: `k1:${k1}` });
    expect(decryptProviderKey(rotated, 'acct_1', 'tavily', old)).toBe('tvly-abcdefgh');
    const moved = rewrapProviderKey(rotated, 'acct_1', 'tavily', old);
    expect(moved?.kekId).toBe('k2');
    expect(moved?.ciphertext).toBe(old.ciphertext);
    expect(rewrapProviderKey(rotated, 'acct_1', 'tavily', moved ?? old)).toBeNull();
    const only2 = ring({ PROVIDER_KEY_KEK: k2, PROVIDER_KEY_KEK_ID: 'k2' });
    expect(decryptProviderKey(only2, 'acct_1', 'tavily', moved ?? old)).toBe('tvly-abcdefgh');
    expect(() => decryptProviderKey(only2, 'acct_1', 'tavily', old)).toThrow(/no key-encryption key with id "k1"/);
  });

  it('labels with the last 4 characters only', () => {
    expect(providerKeyLabel('sk-abcdefgh1234')).toBe('…1234');
    expect(providerKeyLabel('abcde')).toBe('…e');
  });

  it('names the variable and never echoes the value', () => {
    expect(kekRingFromEnv({})).toBeNull();
    expect(() => kekRingFromEnv({ PROVIDER_KEY_KEK: 'c2hvcnQ=', PROVIDER_KEY_KEK_ID: 'k' })).toThrow(/PROVIDER_KEY_KEK must be 32 bytes/);
    expect(() => kekRingFromEnv({ PROVIDER_KEY_KEK: k1 })).toThrow(/PROVIDER_KEY_KEK_ID is required/);
    try {
      kekRingFromEnv({ PROVIDER_KEY_KEK: k1, PROVIDER_KEY_KEK_ID: 'k1', PROVIDER_KEY_KEK_PREVIOUS: 'nocolon' });
    } catch (error) {
      expect(String(error)).not.toContain(k1);
    }
  });
});
