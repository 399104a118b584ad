import type { KeyRow } from '../db/key-row';
import { accessRecord } from './access-record';
import type { TokenWithGrant } from './oauth-rows';

/** What LookupKey answers for an access token's hash: its grant key's record, ending with the token, the grant and the key. */
describe('accessRecord', () => {
  const now = Date.UTC(2026, 10, 26, 12);
  const key: KeyRow = {
    id: 'key_000000000000000000000001', accountId: 'acct_00000000000000000000001', kind: 'api', name: 'App', keyHash: 'a'.repeat(64), label: 'svc-abcd…',
    limitMicros: 1_000_000, limitReset: 'daily', expiresAt: null, disabled: false, version: 3, deletedAt: null,
    createdAt: new Date(now), updatedAt: new Date(now), lastUsedAt: null, allowedModels: [], allowedIps: [],
  };
  const token = (changes: { key?: Partial<KeyRow>; revokedAt?: Date | null; usedAt?: Date | null; expiresAt?: Date } = {}): TokenWithGrant => ({
    hash: 'b'.repeat(64),
    kind: 'access',
    codeChallenge: null,
    redirectUri: null,
    expiresAt: changes.expiresAt ?? new Date(now + 3_600_000),
    usedAt: changes.usedAt ?? null,
    grant: { id: 'ogr_000000000000000000000001', accountId: key.accountId, clientId: 'ocl_000000000000000000000001', keyId: key.id, redirectUri: 'https://app.example/cb', createdAt: new Date(now), revokedAt: changes.revokedAt ?? null, revokedReason: null },
    key: { ...key, ...changes.key },
    client: { id: 'ocl_000000000000000000000001', kind: 'dynamic', name: 'App', redirectUris: ['https://app.example/cb'], fetchedAt: null },
  });

  it('is the grant key (its id, account, limit, version), expiring with the token', () => {
    expect(accessRecord(token())).toEqual({
      id: key.id, accountId: key.accountId, kind: 'api', disabled: false, expiresAtMs: now + 3_600_000, limitMicros: 1_000_000, limitReset: 'daily', version: 3, deleted: false,
    });
  });

  it('expires with the key when the key ends first', () => {
    expect(accessRecord(token({ key: { expiresAt: new Date(now + 60_000) } })).expiresAtMs).toBe(now + 60_000);
    expect(accessRecord(token({ key: { expiresAt: new Date(now + 7_200_000) } })).expiresAtMs).toBe(now + 3_600_000);
  });

  it('is deleted once the grant is revoked, the token revoked, or the key deleted; disabled with the key', () => {
    expect(accessRecord(token({ revokedAt: new Date(now) })).deleted).toBe(true);
    expect(accessRecord(token({ usedAt: new Date(now) })).deleted).toBe(true);
    expect(accessRecord(token({ key: { deletedAt: new Date(now) } })).deleted).toBe(true);
    expect(accessRecord(token({ key: { disabled: true } })).disabled).toBe(true);
  });
});
