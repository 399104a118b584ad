import { AppError } from '@svc/errors';
import { cacheDigest, normaliseQuery } from '../cache/cache.key';
import { MAX_QUERY_CHARS, toSearchRequest } from './search.schema';
import type { SearchBody } from './search.schema';

const body = (query: string): SearchBody => ({ query, model: 'exa/fast', max_results: 10, cache: 'default' });

describe('toSearchRequest: the query\'s one normal form (docs/decisions/0043)', () => {
  // Every whitespace JavaScript's \s knows beyond the ASCII space, and a decomposed é.
  const SPACES = ['\t', '\n', '\v', '\f', '\r', '\u00a0', '\u1680', '\u2000', '\u2001', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006', '\u2007', '\u2008', '\u2009', '\u200a', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff'];

  it('what the provider receives is the normal form: every Unicode whitespace one space, NFC, trimmed, case kept', () => {
    for (const space of SPACES) expect([space.codePointAt(0), toSearchRequest(body(`best${space}vpn`)).query]).toEqual([space.codePointAt(0), 'best vpn']);
    expect(toSearchRequest(body(' best \u2003\t vpn ')).query).toBe('best vpn');
    expect(toSearchRequest(body('cafe\u0301')).query).toBe('caf\u00e9');
    expect(toSearchRequest(body('Rust')).query).toBe('Rust');
  });

  it('the cache key of the normal form is the key of every spelling of it, and normalising it again changes nothing', () => {
    for (const spelled of ['best\ufeffvpn', 'best\u00a0vpn', 'best\u3000vpn', '  best vpn ', 'cafe\u0301 au lait', 'caf\u00e9 au lait']) {
      const { query } = toSearchRequest(body(spelled));
      expect(normaliseQuery(query)).toBe(query);
      expect(cacheDigest('exa/fast', query, '{}')).toBe(cacheDigest('exa/fast', normaliseQuery(spelled), '{}'));
    }
  });

  it('an empty or whitespace-only query, or one over the limit, is 400 invalid_request', () => {
    for (const query of ['', ' ', '\u3000\ufeff\u00a0', 'x'.repeat(MAX_QUERY_CHARS + 1)]) {
      expect(() => toSearchRequest(body(query))).toThrow(AppError);
    }
    expect(toSearchRequest(body('x'.repeat(MAX_QUERY_CHARS))).query).toHaveLength(MAX_QUERY_CHARS);
  });
});
