import type { ErrorCode } from '@svc/errors';
import type { KeyKind } from '@svc/keys';

export const LIMIT_RESETS = ['daily', 'weekly', 'monthly'] as const;
export type LimitReset = (typeof LIMIT_RESETS)[number];

/**
 * Everything the gateway needs to authorize and limit a request: the record account-admin
 * writes to Redis after every committed change and serves over gRPC. `version` grows with
 * every change of the key, so an older record never replaces a newer one.
 */
export interface KeyRecord {
  id: string;
  accountId: string;
  kind: KeyKind;
  disabled: boolean;
  expiresAtMs: number | null;
  limitMicros: number | null;
  limitReset: LimitReset | null;
  version: number;
  deleted: boolean;
  /** The key's model fence (`allowed_models`), non-empty; absent: every model. */
  allowedModels?: readonly string[];
  /** The key's address fence (`allowed_ips`, CIDRs), non-empty; absent: any client address. */
  allowedIps?: readonly string[];
}

/** A lookup by hash: the record, or a known miss. */
export type KeyLookup = { found: true; record: KeyRecord } | { found: false };

/** Published on KEY_CHANGES_CHANNEL after a change is committed and written to Redis. */
export interface KeyChangeMessage {
  v: 1;
  keyHash: string;
  keyId: string;
  accountId: string;
  version: number;
}

export const KEY_CHANGES_CHANNEL = 'svc:key-changes';

export function isKeyChangeMessage(value: unknown): value is KeyChangeMessage {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  return m.v === 1 && typeof m.keyHash === 'string' && typeof m.keyId === 'string'
    && typeof m.accountId === 'string' && typeof m.version === 'number';
}

export type RequiredKind = KeyKind | 'either';

export type KeyVerdict = { ok: true; record: KeyRecord } | { ok: false; code: ErrorCode };

/**
 * The key state table of spec section 3 and the rules of section 5, in their order:
 * unknown or deleted (401 invalid_api_key), disabled (401 key_disabled), expired
 * (401 key_expired), then the wrong kind for the endpoint (403 wrong_key_type).
 */
export function evaluateKey(lookup: KeyLookup, nowMs: number, required: RequiredKind): KeyVerdict {
  if (!lookup.found || lookup.record.deleted) return { ok: false, code: 'invalid_api_key' };
  const record = lookup.record;
  if (record.disabled) return { ok: false, code: 'key_disabled' };
  if (record.expiresAtMs !== null && nowMs >= record.expiresAtMs) return { ok: false, code: 'key_expired' };
  if (required !== 'either' && record.kind !== required) return { ok: false, code: 'wrong_key_type' };
  return { ok: true, record };
}
