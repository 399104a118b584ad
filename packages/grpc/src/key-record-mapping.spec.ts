import { KeyRecord as ProtoKeyRecordCodec } from './generated/svc/accountadmin/v1/account_admin';
import { keyRecordFromProto, keyRecordToProto } from './key-record-mapping';
import type { KeyRecord } from '@svc/contracts';

describe('key record over gRPC', () => {
  it.each<KeyRecord>([
    { id: 'key_a', accountId: 'acct_a', kind: 'api', disabled: false, expiresAtMs: null, limitMicros: null, limitReset: null, version: 1, deleted: false },
    { id: 'mkey_b', accountId: 'acct_b', kind: 'management', disabled: true, expiresAtMs: 1_900_000_000_000, limitMicros: 10_000_000, limitReset: 'weekly', version: 42, deleted: true },
    { id: 'key_c', accountId: 'acct_c', kind: 'api', disabled: false, expiresAtMs: null, limitMicros: null, limitReset: null, version: 2, deleted: false, allowedModels: ['exa/*', 'brave/web'], allowedIps: ['10.0.0.0/8', '2001:db8::/32'] },
  ])('survives encoding to the wire and back: %j', (record) => {
    const bytes = ProtoKeyRecordCodec.encode(keyRecordToProto(record)).finish();
    expect(keyRecordFromProto(ProtoKeyRecordCodec.decode(bytes))).toEqual(record);
  });

  it('keeps a zero credit limit distinct from no limit', () => {
    const record: KeyRecord = { id: 'key_z', accountId: 'acct_z', kind: 'api', disabled: false, expiresAtMs: null, limitMicros: 0, limitReset: null, version: 3, deleted: false };
    const bytes = ProtoKeyRecordCodec.encode(keyRecordToProto(record)).finish();
    expect(keyRecordFromProto(ProtoKeyRecordCodec.decode(bytes)).limitMicros).toBe(0);
  });

  it('carries no fence for an unfenced key (no empty lists on the record)', () => {
    const record: KeyRecord = { id: 'key_n', accountId: 'acct_n', kind: 'api', disabled: false, expiresAtMs: null, limitMicros: null, limitReset: null, version: 1, deleted: false };
    const decoded = keyRecordFromProto(ProtoKeyRecordCodec.decode(ProtoKeyRecordCodec.encode(keyRecordToProto(record)).finish()));
    expect('allowedModels' in decoded || 'allowedIps' in decoded).toBe(false);
  });
});
