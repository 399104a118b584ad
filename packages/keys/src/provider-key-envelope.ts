import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Envelope encryption of an account's provider keys (AES-256-GCM, framework-free).
 *
 * Each stored key gets a fresh random 32-byte data key. The provider key is encrypted with
 * the data key; the data key is encrypted ("wrapped") with the key-encryption key (KEK) from
 * the environment, named by its id. Only the envelope is ever stored: PostgreSQL and the
 * wire between services see ciphertext alone. Rotating the KEK re-wraps the data keys; the
 * provider key's own ciphertext does not change.
 *
 * Both encryptions bind the record they belong to as additional authenticated data
 * (`<account id>/<provider>`), so an envelope copied onto another account's row, or another
 * provider, fails to decrypt instead of serving someone else's key.
 */
export interface ProviderKeyEnvelope {
  /** Id of the KEK that wrapped the data key. */
  readonly kekId: string;
  /** The data key encrypted under the KEK: iv (12) + tag (16) + ciphertext (32), base64. */
  readonly wrappedKey: string;
  /** The provider key encrypted under the data key: iv (12) + tag (16) + ciphertext, base64. */
  readonly ciphertext: string;
}

/** A key-encryption key: 32 bytes and the id stored beside what it wraps. */
export interface Kek {
  readonly id: string;
  readonly key: Buffer;
}

/** The KEKs a process knows: the current one (new envelopes), and the previous one during a rotation. */
export interface KekRing {
  readonly current: Kek;
  readonly previous: Kek | null;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

export class ProviderKeyCryptoError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderKeyCryptoError';
  }
}

function seal(key: Buffer, plaintext: Buffer, aad: Buffer): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

function open(key: Buffer, sealed: string, aad: Buffer): Buffer {
  const bytes = Buffer.from(sealed, 'base64');
  if (bytes.length < IV_BYTES + TAG_BYTES) throw new ProviderKeyCryptoError('envelope is too short');
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
  decipher.setAAD(aad);
  decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
  } catch {
    // Never the cause's text: it says nothing useful and must not carry key material.
    throw new ProviderKeyCryptoError('envelope does not decrypt (wrong key-encryption key or damaged record)');
  }
}

function aadOf(accountId: string, provider: string): Buffer {
  return Buffer.from(`${accountId}/${provider}`, 'utf8');
}

function kekFor(ring: KekRing, kekId: string): Kek {
  if (ring.current.id === kekId) return ring.current;
  if (ring.previous !== null && ring.previous.id === kekId) return ring.previous;
  throw new ProviderKeyCryptoError(`no key-encryption key with id "${kekId}" is configured (PROVIDER_KEY_KEK_ID / PROVIDER_KEY_KEK_PREVIOUS)`);
}

/** Encrypts `plaintext` for (account, provider) under a fresh data key wrapped by the current KEK. */
export function encryptProviderKey(ring: KekRing, accountId: string, provider: string, plaintext: string): ProviderKeyEnvelope {
  const aad = aadOf(accountId, provider);
  const dataKey = randomBytes(32);
  try {
    return {
      kekId: ring.current.id,
      wrappedKey: seal(ring.current.key, dataKey, aad),
      ciphertext: seal(dataKey, Buffer.from(plaintext, 'utf8'), aad),
    };
  } finally {
    dataKey.fill(0);
  }
}

/** The provider key of an envelope; throws ProviderKeyCryptoError when no configured KEK opens it. */
export function decryptProviderKey(ring: KekRing, accountId: string, provider: string, envelope: ProviderKeyEnvelope): string {
  const aad = aadOf(accountId, provider);
  const dataKey = open(kekFor(ring, envelope.kekId).key, envelope.wrappedKey, aad);
  try {
    return open(dataKey, envelope.ciphertext, aad).toString('utf8');
  } finally {
    dataKey.fill(0);
  }
}

/**
 * The same envelope with its data key wrapped by the current KEK (the provider key's own
 * ciphertext is kept). Null when it already is.
 */
export function rewrapProviderKey(ring: KekRing, accountId: string, provider: string, envelope: ProviderKeyEnvelope): ProviderKeyEnvelope | null {
  if (envelope.kekId === ring.current.id) return null;
  const aad = aadOf(accountId, provider);
  const dataKey = open(kekFor(ring, envelope.kekId).key, envelope.wrappedKey, aad);
  try {
    return { kekId: ring.current.id, wrappedKey: seal(ring.current.key, dataKey, aad), ciphertext: envelope.ciphertext };
  } finally {
    dataKey.fill(0);
  }
}

/** What is ever shown of a provider key: `…` and its last 4 characters (fewer when it is shorter than 8). */
export function providerKeyLabel(plaintext: string): string {
  const chars = [...plaintext];
  const shown = chars.length >= 8 ? 4 : Math.max(0, chars.length - 4);
  return `…${chars.slice(chars.length - shown).join('')}`;
}

/** Problem with a KEK setting (the message names the variable, never the value). */
export class KekConfigError extends Error {
  /** The variable at fault (the message's first word). */
  readonly variable: string;
  /** What is wrong with it (the rest of the message). */
  readonly problem: string;

  constructor(message: string) {
    super(message);
    this.name = 'KekConfigError';
    this.variable = /^PROVIDER_KEY_KEK\w*/.exec(message)?.[0] ?? 'PROVIDER_KEY_KEK';
    this.problem = message.slice(this.variable.length).trim();
  }
}

function parseKek(variable: string, raw: string, id: string): Kek {
  const trimmed = raw.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) throw new KekConfigError(`${variable} must be 32 bytes in base64`);
  const key = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (key.length !== 32) throw new KekConfigError(`${variable} must be 32 bytes in base64 (got ${key.length} bytes)`);
  return { id, key };
}

const KEK_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The KEK ring from the environment: PROVIDER_KEY_KEK (base64, 32 bytes) with
 * PROVIDER_KEY_KEK_ID, and during a rotation PROVIDER_KEY_KEK_PREVIOUS as
 * `<previous id>:<base64 key>`. Null when PROVIDER_KEY_KEK is unset (the caller decides
 * whether that is allowed). Throws KekConfigError naming the variable.
 */
export function kekRingFromEnv(env: Readonly<Record<string, string | undefined>>): KekRing | null {
  const raw = env.PROVIDER_KEY_KEK;
  if (raw === undefined || raw === '') {
    if (env.PROVIDER_KEY_KEK_PREVIOUS !== undefined && env.PROVIDER_KEY_KEK_PREVIOUS !== '') {
      throw new KekConfigError('PROVIDER_KEY_KEK_PREVIOUS is set without PROVIDER_KEY_KEK');
    }
    return null;
  }
  const id = env.PROVIDER_KEY_KEK_ID ?? '';
  if (!KEK_ID.test(id)) throw new KekConfigError('PROVIDER_KEY_KEK_ID is required with PROVIDER_KEY_KEK (1 to 64 of A-Z a-z 0-9 . _ -)');
  const current = parseKek('PROVIDER_KEY_KEK', raw, id);
  const previousRaw = env.PROVIDER_KEY_KEK_PREVIOUS;
  let previous: Kek | null = null;
  if (previousRaw !== undefined && previousRaw !== '') {
    const colon = previousRaw.indexOf(':');
    const previousId = colon > 0 ? previousRaw.slice(0, colon) : '';
    if (!KEK_ID.test(previousId)) throw new KekConfigError('PROVIDER_KEY_KEK_PREVIOUS must be <previous key id>:<base64 key>');
    if (previousId === id) throw new KekConfigError('PROVIDER_KEY_KEK_PREVIOUS must have another id than PROVIDER_KEY_KEK_ID');
    previous = parseKek('PROVIDER_KEY_KEK_PREVIOUS', previousRaw.slice(colon + 1), previousId);
  }
  return { current, previous };
}

/**
 * The KEK ring a service starts with: kekRingFromEnv, and PROVIDER_KEY_KEK required when BYOK
 * is enabled. Throws KekConfigError naming the variable.
 */
export function serviceKekRing(env: Readonly<Record<string, string | undefined>>, byokEnabled: boolean): KekRing | null {
  const ring = kekRingFromEnv(env);
  if (ring === null && byokEnabled) throw new KekConfigError('PROVIDER_KEY_KEK is required when BYOK_ENABLED is true (base64 of 32 bytes, with PROVIDER_KEY_KEK_ID)');
  return ring;
}
