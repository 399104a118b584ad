import { createHash } from 'node:crypto';
import { AppError } from '@svc/errors';

/** 1..255 printable ASCII characters (docs/api.md 10.7). */
const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;

/** The header's digest (the stored key never holds the caller's text), or null when absent. */
export function idempotencyDigest(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  if (typeof header !== 'string' || !IDEMPOTENCY_KEY.test(header) || header.trim() === '') {
    throw new AppError('invalid_request', 'Idempotency-Key must be 1 to 255 printable ASCII characters');
  }
  return sha256(header);
}

/** Digest of the body with object keys sorted, so key order and whitespace do not matter. */
export function bodyDigest(body: unknown): string {
  return sha256(canonicalJson(body));
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** What is stored under an Idempotency-Key: a claim while the first request runs, then its outcome. */
export type StoredIdempotency =
  | { rid: string; digest: string; state: 'running' }
  | { rid: string; digest: string; state: 'done'; status: number; body: string };

export function claimValue(requestId: string, digest: string): string {
  const claim: StoredIdempotency = { rid: requestId, digest, state: 'running' };
  return JSON.stringify(claim);
}

export function outcomeValue(requestId: string, digest: string, status: number, body: string): string {
  const done: StoredIdempotency = { rid: requestId, digest, state: 'done', status, body };
  return JSON.stringify(done);
}

export function parseStored(text: string): StoredIdempotency | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value !== 'object' || value === null) return undefined;
    const v = value as Record<string, unknown>;
    if (typeof v.rid !== 'string' || typeof v.digest !== 'string') return undefined;
    if (v.state === 'running') return { rid: v.rid, digest: v.digest, state: 'running' };
    if (v.state === 'done' && typeof v.status === 'number' && typeof v.body === 'string') {
      return { rid: v.rid, digest: v.digest, state: 'done', status: v.status, body: v.body };
    }
    return undefined;
  } catch {
    return undefined;
  }
}
