import { parseKeyRecordJson } from './key-record-json';
import type { RecordAge } from './key-record-json';
import { keyStateBound, maxRedisAgeMs, usableUntilMs } from './key-state-bound';

const NOW = 1_800_000_000_000;
const age: RecordAge = { nowMs: NOW, maxAgeMs: 9000, clockSkewMs: 1000 };

const valid = {
  id: 'key_1', accountId: 'acct_1', kind: 'management', disabled: true, expiresAtMs: 123,
  limitMicros: 5_000_000, limitReset: 'weekly', version: 7, deleted: false,
};
const stamped = (writtenAtMs: unknown, extra: Record<string, unknown> = {}): string => JSON.stringify({ ...valid, ...extra, writtenAtMs });

describe('parseKeyRecordJson', () => {
  it('reads a KeyRecord written by account-admin, with its stamp', () => {
    expect(parseKeyRecordJson(stamped(NOW - 100), age)).toEqual({ lookup: { found: true, record: valid }, writtenAtMs: NOW - 100 });
  });

  it('reads the fences when present, and leaves them out when absent', () => {
    const fenced = parseKeyRecordJson(stamped(NOW, { allowedModels: ['exa/*'], allowedIps: ['10.0.0.0/8'] }), age);
    expect(fenced?.lookup).toEqual({ found: true, record: { ...valid, allowedModels: ['exa/*'], allowedIps: ['10.0.0.0/8'] } });
    const plain = parseKeyRecordJson(stamped(NOW), age);
    expect(plain?.lookup.found === true && ('allowedModels' in plain.lookup.record || 'allowedIps' in plain.lookup.record)).toBe(false);
  });

  it('reads a stamped miss marker as an unknown key', () => {
    expect(parseKeyRecordJson(`{"missing":true,"version":0,"writtenAtMs":${NOW - 5}}`, age)).toEqual({ lookup: { found: false }, writtenAtMs: NOW - 5 });
  });

  it.each([
    ['not JSON', '{oops'],
    ['an array', '[]'],
    ['a bad kind', stamped(NOW, { kind: 'root' })],
    ['a bad reset', stamped(NOW, { limitReset: 'yearly' })],
    ['a fractional limit', stamped(NOW, { limitMicros: 1.5 })],
    ['a missing field', stamped(NOW, { deleted: undefined })],
    ['an empty fence', stamped(NOW, { allowedIps: [] })],
    ['a fence that is not a list of strings', stamped(NOW, { allowedModels: ['exa/*', 7] })],
  ])('treats %s as a miss (the owner is asked again)', (_what, text) => {
    expect(parseKeyRecordJson(text, age)).toBeUndefined();
  });

  describe('the age rule (max age 9000 ms, skew 1000 ms)', () => {
    it('takes a record exactly at the allowed age and refuses one a millisecond older', () => {
      expect(parseKeyRecordJson(stamped(NOW - 9000), age)?.writtenAtMs).toBe(NOW - 9000);
      expect(parseKeyRecordJson(stamped(NOW - 9001), age)).toBeUndefined();
    });

    it.each([
      ['no stamp', JSON.stringify(valid)],
      ['a string stamp', stamped(String(NOW))],
      ['a fractional stamp', stamped(NOW - 0.5)],
      ['a stamp beyond safe integers', stamped(2 ** 60)],
      ['a null stamp', stamped(null)],
      ['a stamp further in the future than the skew', stamped(NOW + 1001)],
    ])('treats a record with %s as a miss', (_what, text) => {
      expect(parseKeyRecordJson(text, age)).toBeUndefined();
    });

    it('accepts a stamp slightly in the future (within the skew)', () => {
      expect(parseKeyRecordJson(stamped(NOW + 1000), age)?.writtenAtMs).toBe(NOW + 1000);
    });

    it('applies to miss markers too: an old one is a miss (a hash may have become a key since)', () => {
      expect(parseKeyRecordJson(`{"missing":true,"writtenAtMs":${NOW - 9001}}`, age)).toBeUndefined();
      expect(parseKeyRecordJson('{"missing":true,"at":1}', age)).toBeUndefined();
    });

    it('exempts tombstones: a deleted record is taken whatever its stamp, with no deadline', () => {
      const tombstone = { ...valid, deleted: true };
      expect(parseKeyRecordJson(stamped(NOW - 86_400_000, { deleted: true }), age)).toEqual({ lookup: { found: true, record: tombstone }, writtenAtMs: null });
      expect(parseKeyRecordJson(JSON.stringify(tombstone), age)).toEqual({ lookup: { found: true, record: tombstone }, writtenAtMs: null });
    });
  });
});

describe('key state bound', () => {
  it('reads P, T and the skew from the config (skew 1000 when not given)', () => {
    const config = { KEY_PROPAGATION_MAX_MS: 15_000, KEY_CACHE_TTL_MS: 5000 };
    expect(keyStateBound(config)).toEqual({ propagationMaxMs: 15_000, cacheTtlMs: 5000, clockSkewMs: 1000 });
    expect(keyStateBound({ ...config, KEY_CLOCK_SKEW_MS: 250 }).clockSkewMs).toBe(250);
  });

  it('allows Redis values up to P - T - skew old and uses a state until stamp + P - skew', () => {
    const bound = { propagationMaxMs: 15_000, cacheTtlMs: 5000, clockSkewMs: 1000 };
    expect(maxRedisAgeMs(bound)).toBe(9000);
    expect(usableUntilMs(bound, NOW)).toBe(NOW + 14_000);
  });

  it('when T + skew leaves no room, halves what is left instead of refusing every Redis value', () => {
    expect(maxRedisAgeMs({ propagationMaxMs: 600_000, cacheTtlMs: 600_000, clockSkewMs: 1000 })).toBe(299_500);
    expect(maxRedisAgeMs({ propagationMaxMs: 1000, cacheTtlMs: 0, clockSkewMs: 1000 })).toBe(-1);
  });
});
