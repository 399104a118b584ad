import { LIMIT_RESETS } from '@svc/contracts';
import type { KeyLookup, KeyRecord } from '@svc/contracts';

function isNullableSafeInteger(value: unknown): value is number | null {
  return value === null || (typeof value === 'number' && Number.isSafeInteger(value));
}

/** A fence list: absent, or a non-empty array of strings. */
function isFence(value: unknown): value is readonly string[] | undefined {
  return value === undefined || (Array.isArray(value) && value.length > 0 && value.every((entry) => typeof entry === 'string'));
}

function isKeyRecord(value: Record<string, unknown>): boolean {
  return typeof value.id === 'string'
    && typeof value.accountId === 'string'
    && (value.kind === 'api' || value.kind === 'management')
    && typeof value.disabled === 'boolean'
    && isNullableSafeInteger(value.expiresAtMs)
    && isNullableSafeInteger(value.limitMicros)
    && (value.limitReset === null || (LIMIT_RESETS as readonly unknown[]).includes(value.limitReset))
    && typeof value.version === 'number'
    && typeof value.deleted === 'boolean'
    && isFence(value.allowedModels)
    && isFence(value.allowedIps);
}

/** How old a Redis value may be: the reader's clock and the allowed age (see key-state-bound.ts). */
export interface RecordAge {
  nowMs: number;
  /** Largest now - writtenAtMs taken; older is a miss. */
  maxAgeMs: number;
  /** A stamp further than this in the future is not trusted either (clocks out of bounds). */
  clockSkewMs: number;
}

/**
 * A value taken from Redis and its stamp. `writtenAtMs` is null only for a tombstone, which
 * is exempt from the age rule: deletion is final, a deleted key never comes back.
 */
export interface StampedLookup {
  lookup: KeyLookup;
  writtenAtMs: number | null;
}

/** The stamp, when present, a safe integer, and within [now - maxAge, now + skew]. */
function freshStamp(object: Record<string, unknown>, age: RecordAge): number | undefined {
  const stamp = object.writtenAtMs;
  if (typeof stamp !== 'number' || !Number.isSafeInteger(stamp)) return undefined;
  const ageMs = age.nowMs - stamp;
  if (ageMs > age.maxAgeMs || ageMs < -age.clockSkewMs) return undefined;
  return stamp;
}

/**
 * Reads the value account-admin writes at redisKeys.keyRecord(hash): a JSON KeyRecord, or
 * `{"missing": true, ...}` for a hash that is no key, each stamped with `writtenAtMs`.
 * Anything else, and any record or miss marker whose stamp is missing or too old, is
 * undefined (treated as a cache miss, so the owner is asked again and refreshes the stamp).
 */
export function parseKeyRecordJson(text: string, age: RecordAge): StampedLookup | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const object = value as Record<string, unknown>;
  if (object.missing === true) {
    const stamp = freshStamp(object, age);
    return stamp === undefined ? undefined : { lookup: { found: false }, writtenAtMs: stamp };
  }
  if (!isKeyRecord(object)) return undefined;
  const record: KeyRecord = {
    id: object.id as string,
    accountId: object.accountId as string,
    kind: object.kind as KeyRecord['kind'],
    disabled: object.disabled as boolean,
    expiresAtMs: object.expiresAtMs as number | null,
    limitMicros: object.limitMicros as number | null,
    limitReset: object.limitReset as KeyRecord['limitReset'],
    version: object.version as number,
    deleted: object.deleted as boolean,
  };
  if (object.allowedModels !== undefined) record.allowedModels = object.allowedModels as string[];
  if (object.allowedIps !== undefined) record.allowedIps = object.allowedIps as string[];
  if (record.deleted) return { lookup: { found: true, record }, writtenAtMs: null };
  const stamp = freshStamp(object, age);
  return stamp === undefined ? undefined : { lookup: { found: true, record }, writtenAtMs: stamp };
}
