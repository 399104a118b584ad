import { createHash } from 'node:crypto';
import { cachePriceMicros, findModel } from '@svc/contracts';
import { keySlot } from '@svc/redis-client';
import { cacheDigest, cacheKeys, canonicalFilters, normaliseQuery, SHARED_SCOPE } from './cache.key';

describe('the result cache key', () => {
  describe('normaliseQuery', () => {
    it('NFC, trimmed, inner whitespace collapsed to one space', () => {
      expect(normaliseQuery('  rust \t async\n\nruntimes  ')).toBe('rust async runtimes');
      expect(normaliseQuery('cafe\u0301')).toBe('caf\u00e9');
      expect(normaliseQuery('a\u00a0b')).toBe('a b');
    });

    it('answers what the full normalisation answers, for queries the ASCII shortcut takes and for those it leaves', () => {
      const full = (query: string): string => query.normalize('NFC').trim().replace(/\s+/gu, ' ');
      const queries = [
        'rust async runtimes', 'a', 'C++ "exact phrase" -minus site:example.com', '~!@#$%^&*()_+{}|:<>?',
        ' leading', 'trailing ', 'two  spaces', 'tab\there', 'line\nbreak', 'vertical\vtab', 'form\ffeed', 'cr\rlf',
        'del\x7fchar', 'unit\x1fseparator', 'nbsp\u00a0here', 'ideographic\u3000space', 'bom\ufeffhere',
        'cafe\u0301', 'caf\u00e9', '\u212b angstrom', '', ' ', 'x ',
      ];
      for (const query of queries) expect([query, normaliseQuery(query)]).toEqual([query, full(query)]);
    });

    it('keeps case', () => {
      expect(normaliseQuery('Rust')).not.toBe(normaliseQuery('rust'));
    });
  });

  describe('canonicalFilters', () => {
    it('sorts keys at every depth and leaves undefined fields out', () => {
      expect(canonicalFilters({ b: 1, a: { d: [2, 1], c: 'x' }, e: undefined })).toBe('{"a":{"c":"x","d":[2,1]},"b":1}');
      expect(canonicalFilters({ a: { c: 'x', d: [2, 1] }, b: 1 })).toBe(canonicalFilters({ b: 1, a: { d: [2, 1], c: 'x' } }));
    });

    it('tells apart no filters, null and a value', () => {
      const texts = [canonicalFilters({}), canonicalFilters({ country: null }), canonicalFilters({ country: 'us' })];
      expect(new Set(texts).size).toBe(3);
    });
  });

  describe('cacheDigest and cacheKeys', () => {
    it('one digest for the same model, normalised query and filters; another for any difference', () => {
      const base = cacheDigest('exa/fast', 'rust  async', '{}');
      expect(cacheDigest('exa/fast', ' rust async ', '{}')).toBe(base);
      expect(cacheDigest('exa/auto', 'rust async', '{}')).not.toBe(base);
      expect(cacheDigest('exa/fast', 'Rust async', '{}')).not.toBe(base);
      expect(cacheDigest('exa/fast', 'rust async', '{"country":"us"}')).not.toBe(base);
    });

    it('is SHA-256 of the model, the normalised query and the filters, one per line (the keys earlier builds wrote)', () => {
      const expected = createHash('sha256').update('exa/fast\nrust async\n{"country":"us"}').digest('base64url');
      expect(cacheDigest('exa/fast', ' rust \t async', '{"country":"us"}')).toBe(expected);
    });

    it('every key of a digest is in one hash slot; an account\'s keys are its own and name no account id', () => {
      const digest = cacheDigest('exa/fast', 'rust', '{}');
      const shared = cacheKeys(digest, SHARED_SCOPE);
      const own = cacheKeys(digest, { kind: 'account', accountId: 'acct_123456789012345678901234' });
      const other = cacheKeys(digest, { kind: 'account', accountId: 'acct_999999999999999999999999' });
      const slots = new Set([shared.shared, own.shared, own.account ?? '', other.account ?? ''].map(keySlot));
      expect(slots.size).toBe(1);
      expect(shared.account).toBeNull();
      expect(own.shared).toBe(shared.shared);
      expect(own.account).not.toBe(shared.shared);
      expect(own.account).not.toBe(other.account);
      expect(own.account ?? '').not.toContain('acct_');
    });
  });

  it('the cache price is the percentage of the base price, rounded to the micro-USD, halves up', () => {
    const exa = findModel('exa/fast');
    if (exa === undefined) throw new Error('exa/fast missing');
    expect(cachePriceMicros(exa, 10)).toBe(900);
    expect(cachePriceMicros(exa, 0)).toBe(0);
    expect(cachePriceMicros(exa, 100)).toBe(9_000);
    expect(cachePriceMicros({ ...exa, baseMicros: 5_005 }, 10)).toBe(501);
    expect(cachePriceMicros({ ...exa, baseMicros: 5_004 }, 10)).toBe(500);
  });
});
