import { CATALOG, evaluateKey, findModel, maxCostMicros, periodOf } from './index';
import type { KeyRecord } from './index';

const record: KeyRecord = {
  id: 'key_1', accountId: 'acct_1', kind: 'api', disabled: false, expiresAtMs: null,
  limitMicros: null, limitReset: null, version: 1, deleted: false,
};

describe('catalog', () => {
  it('has the ten models of docs/providers.md with their upstream values and prices in micro-USD', () => {
    expect(CATALOG.map((m) => [m.id, m.upstreamVariant, m.baseMicros, m.maxResults])).toEqual([
      ['brave/web', 'web', 6000, 20], ['brave/news', 'news', 6000, 50], ['exa/auto', 'auto', 9000, 100], ['exa/fast', 'fast', 9000, 100],
      ['exa/instant', 'instant', 9000, 100], ['exa/deep', 'deep', 15000, 100], ['tavily/basic', 'basic', 10000, 20],
      ['tavily/advanced', 'advanced', 20000, 20], ['tavily/fast', 'fast', 10000, 20], ['tavily/ultra-fast', 'ultra-fast', 10000, 20],
    ]);
  });

  it('reserves base plus 0.00125 per Exa result beyond 10, capped by the model', () => {
    const exa = findModel('exa/auto');
    const brave = findModel('brave/web');
    if (exa === undefined || brave === undefined) throw new Error('catalog incomplete');
    expect(maxCostMicros(exa, 10)).toBe(9000);
    expect(maxCostMicros(exa, 100)).toBe(9000 + 90 * 1250);
    expect(maxCostMicros(exa, 500)).toBe(9000 + 90 * 1250);
    expect(maxCostMicros(brave, 100)).toBe(6000);
  });
});

describe('key verdicts', () => {
  const now = Date.UTC(2026, 0, 1);
  it.each([
    [{ found: false } as const, 'api', 'invalid_api_key'],
    [{ found: true, record: { ...record, deleted: true } } as const, 'api', 'invalid_api_key'],
    [{ found: true, record: { ...record, disabled: true } } as const, 'api', 'key_disabled'],
    [{ found: true, record: { ...record, expiresAtMs: now } } as const, 'api', 'key_expired'],
    [{ found: true, record } as const, 'management', 'wrong_key_type'],
  ] as const)('rejects %j needing %s with %s', (lookup, required, code) => {
    expect(evaluateKey(lookup, now, required)).toEqual({ ok: false, code });
  });

  it('accepts a live key of the right kind, and one expiring a millisecond later', () => {
    expect(evaluateKey({ found: true, record: { ...record, expiresAtMs: now + 1 } }, now, 'either').ok).toBe(true);
  });
});

describe('key periods', () => {
  it('puts the last millisecond of a day, week and month in the old period', () => {
    const lastOfFeb = Date.UTC(2028, 2, 1) - 1; // 2028-02-29T23:59:59.999Z, a leap year
    expect(periodOf('daily', lastOfFeb)).toEqual({ startMs: Date.UTC(2028, 1, 29), endMs: Date.UTC(2028, 2, 1) });
    expect(periodOf('monthly', lastOfFeb)).toEqual({ startMs: Date.UTC(2028, 1, 1), endMs: Date.UTC(2028, 2, 1) });
    expect(periodOf('monthly', Date.UTC(2028, 2, 1))).toEqual({ startMs: Date.UTC(2028, 2, 1), endMs: Date.UTC(2028, 3, 1) });
  });

  it('starts weeks on Monday 00:00 UTC', () => {
    const sunday = Date.UTC(2026, 10, 22, 23, 59, 59, 999); // 2026-11-22 is a Sunday
    expect(periodOf('weekly', sunday)).toEqual({ startMs: Date.UTC(2026, 10, 16), endMs: Date.UTC(2026, 10, 23) });
    expect(periodOf('weekly', Date.UTC(2026, 10, 23)).startMs).toBe(Date.UTC(2026, 10, 23));
  });
});
