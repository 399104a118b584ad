import type { KeyRecord } from '@svc/contracts';
import { toKeyRecord } from '../key-cache/key-record';
import type { TokenWithGrant } from './oauth-rows';

/** The key record an access token resolves to: its grant's key, ending when the token does. */
export function accessRecord(row: TokenWithGrant): KeyRecord {
  const key = toKeyRecord(row.key);
  const tokenEnd = row.expiresAt.getTime();
  return {
    ...key,
    expiresAtMs: key.expiresAtMs === null ? tokenEnd : Math.min(key.expiresAtMs, tokenEnd),
    deleted: key.deleted || row.grant.revokedAt !== null || row.usedAt !== null,
  };
}
