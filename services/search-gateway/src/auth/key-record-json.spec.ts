import { parseKeyRecordJson } from './key-record-json';

const valid = {
  id: 'key_1', accountId: 'acct_1', kind: 'management', disabled: true, expiresAtMs: 123,
  limitMicros: 5_000_000, limitReset: 'weekly', version: 7, deleted: false,
};

describe('parseKeyRecordJson', () => {
  it('reads a KeyRecord written by account-admin', () => {
    expect(parseKeyRecordJson(JSON.stringify(valid))).toEqual({ found: true, record: valid });
  });

  it('reads the miss marker as an unknown key', () => {
    expect(parseKeyRecordJson('{"missing":true,"at":1}')).toEqual({ found: false });
  });

  it.each([
    ['not JSON', '{oops'],
    ['an array', '[]'],
    ['a bad kind', JSON.stringify({ ...valid, kind: 'root' })],
    ['a bad reset', JSON.stringify({ ...valid, limitReset: 'yearly' })],
    ['a fractional limit', JSON.stringify({ ...valid, limitMicros: 1.5 })],
    ['a missing field', JSON.stringify({ ...valid, deleted: undefined })],
  ])('treats %s as a miss (the owner is asked again)', (_what, text) => {
    expect(parseKeyRecordJson(text)).toBeUndefined();
  });
});
