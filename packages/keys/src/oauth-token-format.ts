import { randomBytes } from 'node:crypto';

/**
 * OAuth secrets of the connector URL (docs/decisions/0029-oauth-for-connectors.md). Access
 * and refresh tokens look like keys but with their own prefixes, so `parseBearer` reads
 * neither as a key (their random part after `svc-` is not 43 characters): an access token
 * is refused by every route except `/mcp/oauth`, its one audience. Like keys, only their
 * SHA-256 (`hashSecret`) is ever stored.
 */
export type OAuthSecretKind = 'access' | 'refresh' | 'code';

const PREFIXES: Readonly<Record<OAuthSecretKind, string>> = {
  access: 'svc-oat-',
  refresh: 'svc-ort-',
  code: 'svc-oac-',
};
const RANDOM_PART = /^[A-Za-z0-9_-]{43}$/;

/** A new secret of the kind: its prefix and 32 random bytes in base64url. */
export function generateOAuthSecret(kind: OAuthSecretKind): string {
  return PREFIXES[kind] + randomBytes(32).toString('base64url');
}

/** True when `value` is a well-formed secret of the kind (a cheap check before any lookup). */
export function isOAuthSecret(kind: OAuthSecretKind, value: unknown): value is string {
  const prefix = PREFIXES[kind];
  return typeof value === 'string' && value.startsWith(prefix) && RANDOM_PART.test(value.slice(prefix.length));
}

export type ParsedAccessToken = { ok: true; token: string } | { ok: false; reason: 'missing' | 'malformed' };

/** Reads `Authorization: Bearer svc-oat-...` (scheme name in any case, RFC 9110 section 11.1). */
export function parseAccessToken(header: string | undefined): ParsedAccessToken {
  if (header === undefined || header === '') return { ok: false, reason: 'missing' };
  const match = /^Bearer ([^\s]+)$/i.exec(header);
  if (match === null || !isOAuthSecret('access', match[1])) return { ok: false, reason: 'malformed' };
  return { ok: true, token: match[1] as string };
}
