import { KeyRecord as ProtoKeyRecordCodec } from './generated/svc/accountadmin/v1/account_admin';
import { keyRecordFromProto, keyRecordToProto } from './key-record-mapping';
import type { KeyRecord } from '@svc/contracts';

describe('key record over gRPC', () => {
  it.each<KeyRecord>([
    { id: 'key_a', accountId: 'acct_a', kind: 'api', disabled: false, expiresAtMs: null, limitMicros: null, limitReset: null, version: 1, deleted: false },
    { id: 'mkey_b', accountId: 'acct_b', kind: 'management', disabled: true, expiresAtMs: 1_900_000_000_000, limitMicros: 10_000_000, limitReset: 'weekly', version: 42, deleted: true },
  ])('survives encoding to the wire and back: %j', (record) => {
    const bytes = ProtoKeyRecordCodec.encode(keyRecordToProto(record)).finish();
    expect(keyRecordFromProto(ProtoKeyRecordCodec.decode(bytes))).toEqual(record);
  });

  it('keeps a zero credit limit distinct from no limit', () => {
    const record: KeyRecord = { id: 'key_z', accountId: 'acct_z', kind: 'api', disabled: false, expiresAtMs: null, limitMicros: 0, limitReset: null, version: 3, deleted: false };
    const bytes = ProtoKeyRecordCodec.encode(keyRecordToProto(record)).finish();
    expect(keyRecordFromProto(ProtoKeyRecordCodec.decode(bytes)).limitMicros).toBe(0);
  });
});
