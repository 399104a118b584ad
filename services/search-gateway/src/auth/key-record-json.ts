import { LIMIT_RESETS } from '@svc/contracts';
import type { KeyLookup, KeyRecord } from '@svc/contracts';

function isNullableSafeInteger(value: unknown): value is number | null {
  return value === null || (typeof value === 'number' && Number.isSafeInteger(value));
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
    && typeof value.deleted === 'boolean';
}

/**
 * Reads the value account-admin writes at redisKeys.keyRecord(hash): a JSON KeyRecord, or
 * `{"missing": true, ...}` for a hash that is no key. Anything else is undefined (treated
 * as a cache miss, so the owner is asked again).
 */
export function parseKeyRecordJson(text: string): KeyLookup | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const object = value as Record<string, unknown>;
  if (object.missing === true) return { found: false };
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
  return { found: true, record };
}
