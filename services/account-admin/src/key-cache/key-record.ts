import type { KeyRecord } from '@svc/contracts';
import type { KeyRow } from '../db/key-row';

/** The record the gateway reads from Redis (and gets from LookupKey), made from the key's row. */
export function toKeyRecord(row: KeyRow): KeyRecord {
  return {
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
}
