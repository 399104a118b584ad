import type { KeyRecord } from '@svc/contracts';
import type { KeyRow } from '../db/key-row';

/** The record the gateway reads from Redis (and gets from LookupKey), made from the key's row. */
export function toKeyRecord(row: KeyRow): KeyRecord {
  const record: KeyRecord = {
    id: row.id,
    accountId: row.accountId,
    kind: row.kind,
    disabled: row.disabled,
    expiresAtMs: row.expiresAt === null ? null : row.expiresAt.getTime(),
    limitMicros: row.limitMicros,
    limitReset: row.limitReset,
    version: row.version,
    deleted: row.deletedAt !== null,
  };
  // Only a fenced key's record carries a fence: an unfenced key costs the gateway nothing.
  if (row.allowedModels.length > 0) record.allowedModels = row.allowedModels;
  if (row.allowedIps.length > 0) record.allowedIps = row.allowedIps;
  return record;
}
