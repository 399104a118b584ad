import type { SettlementRecord } from '@svc/contracts';
import { parseSettlement } from './settlement-record';

const ACCOUNT = 'acct_AAAAAAAAAAAAAAAAAAAAAAAA';

function record(overrides: Partial<SettlementRecord> = {}): SettlementRecord {
  return {
    v: 1, requestId: 'req_BBBBBBBBBBBBBBBBBBBBBBBB', accountId: ACCOUNT, keyId: 'key_CCCCCCCCCCCCCCCCCCCCCCCC', settledAtMs: 1_767_225_600_000,
    attempts: [
      { index: 0, model: 'exa/deep', provider: 'exa', source: 'platform', status: 'error', error: 'timeout', reservedMicros: 15_000, chargedMicros: 5_000, timedOut: true, results: 0 },
      { index: 1, model: 'brave/web', provider: 'brave', source: 'byok', status: 'success', error: null, reservedMicros: 5_000, chargedMicros: 4_000, timedOut: false, results: 7 },
    ],
    chargedMicros: 9_000,
    ...overrides,
  };
}

describe('parseSettlement', () => {
  it('accepts a record exactly as the gateway writes it', () => {
    const parsed = parseSettlement(JSON.stringify(record()), ACCOUNT);
    expect(parsed).toEqual({ ok: true, record: record() });
  });

  it('accepts an extract\'s record (kind extract) and one without a kind (a search\'s); refuses any other kind', () => {
    expect(parseSettlement(JSON.stringify(record({ kind: 'extract' })), ACCOUNT)).toEqual({ ok: true, record: record({ kind: 'extract' }) });
    expect(parseSettlement(JSON.stringify({ ...record(), kind: 'crawl' }), ACCOUNT)).toEqual({ ok: false, reason: 'record has an unknown kind' });
    expect(parseSettlement(JSON.stringify({ ...record(), kind: null }), ACCOUNT)).toEqual({ ok: false, reason: 'record has an unknown kind' });
  });

  it('accepts the filters of a search in canonical form, and writes a record with filters that are not without them', () => {
    const filters = { include_domains: ['docs.example.com', 'example.org'], country: 'DE', published_after: '2025-01-31T11:00:00.000Z', safesearch: 'strict' as const };
    expect(parseSettlement(JSON.stringify(record({ filters })), ACCOUNT)).toEqual({ ok: true, record: record({ filters }) });
    const bad: unknown[] = [
      {}, [], 'DE', { country: 'de' }, { lang: 'en' }, { include_domains: [] }, { include_domains: ['Example.com'] },
      { include_domains: ['b.example', 'a.example'] }, { published_after: '2025-01-31T12:00:00+01:00' }, { published_after: '2025-02-30' },
      { published_after: '2025-02-01', published_before: '2025-01-01' }, { safesearch: 'on' },
    ];
    for (const value of bad) {
      const json = JSON.stringify({ ...record(), filters: value });
      expect([value, parseSettlement(json, ACCOUNT)]).toEqual([value, { ok: true, record: record(), dropped: 'its filters are not canonical search filters; written without them' }]);
    }
  });

  it.each([
    ['no field', undefined, 'entry has no record field'],
    ['not JSON', '{', 'record is not JSON'],
    ['another shape', JSON.stringify({ v: 2 }), 'record does not have the SettlementRecord shape'],
    ['another account', JSON.stringify(record({ accountId: 'acct_ZZZZZZZZZZZZZZZZZZZZZZZZ' })), 'record belongs to another account'],
    ['a total that is not the sum', JSON.stringify(record({ chargedMicros: 9_001 })), 'chargedMicros is not the sum of the attempts'],
    ['a fractional charge', JSON.stringify(record({ chargedMicros: 0.5, attempts: [] })), 'record has a bad chargedMicros'],
    ['an attempt out of order', JSON.stringify(record({ attempts: [...record().attempts].reverse() })), 'attempt 0 has index 1'],
    ['an unknown provider', JSON.stringify({ ...record(), attempts: [{ ...record().attempts[1], index: 0, provider: 'bing' }], chargedMicros: 4_000 }), 'attempt 0 has an unknown provider'],
    ['a negative charge', JSON.stringify({ ...record(), attempts: [{ ...record().attempts[1], index: 0, chargedMicros: -1 }], chargedMicros: -1 }), 'record has a bad chargedMicros'],
  ])('refuses %s', (_title, json, reason) => {
    expect(parseSettlement(json, ACCOUNT)).toEqual({ ok: false, reason });
  });
});
