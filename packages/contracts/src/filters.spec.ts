import Ajv from 'ajv';
import { canonicalFilters, FILTER_NAMES, FILTER_SCHEMAS, FilterError, filterInstantMs, hostnameMatches, isCanonicalFilters, unsupportedFilters } from './filters';
import type { FilterName } from './filters';

describe('canonicalFilters', () => {
  it('is undefined when no filter was sent', () => {
    expect(canonicalFilters({})).toBeUndefined();
    expect(canonicalFilters({ country: undefined })).toBeUndefined();
  });

  it('lower-cases, dedupes and sorts hostnames, puts date-times in UTC and keys in canonical order', () => {
    const filters = canonicalFilters({
      safesearch: 'strict',
      exclude_domains: ['B.example.com', 'a.example.com', 'b.example.com'],
      published_after: '2025-01-01T02:00:00+02:00',
      published_before: '2025-02-01',
      country: 'DE',
    });
    expect(filters).toEqual({
      exclude_domains: ['a.example.com', 'b.example.com'], country: 'DE',
      published_after: '2025-01-01T00:00:00.000Z', published_before: '2025-02-01', safesearch: 'strict',
    });
    expect(Object.keys(filters ?? {})).toEqual(FILTER_NAMES.filter((name) => name in (filters ?? {})));
    // Equal searches give equal keys.
    expect(JSON.stringify(canonicalFilters({ country: 'DE', exclude_domains: ['a.example.com', 'B.example.com'], published_before: '2025-02-01', safesearch: 'strict', published_after: '2025-01-01T00:00:00Z' })))
      .toBe(JSON.stringify(filters));
  });

  it.each([
    [{ published_after: '2025-02-30' }, 'published_after'],
    [{ published_before: '2025-13-01T00:00:00Z' }, 'published_before'],
    [{ published_before: '2025-01-01T25:00:00Z' }, 'published_before'],
    [{ published_after: '2025-03-02', published_before: '2025-03-01' }, 'published_after'],
  ])('refuses %j naming %s', (input, field) => {
    let error: unknown;
    try {
      canonicalFilters(input);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(FilterError);
    expect((error as FilterError).field).toBe(field);
  });

  it('takes a date as its whole UTC day', () => {
    expect(filterInstantMs('2025-01-31', 'start')).toBe(Date.UTC(2025, 0, 31));
    expect(filterInstantMs('2025-01-31', 'end')).toBe(Date.UTC(2025, 1, 1) - 1);
    expect(canonicalFilters({ published_after: '2025-01-31', published_before: '2025-01-31' })).toBeDefined();
  });
});

describe('unsupportedFilters and hostnameMatches', () => {
  it('names the filters sent that a model lacks, in canonical order, or null', () => {
    expect(unsupportedFilters(['country'], { safesearch: 'off', country: 'US', include_domains: ['a.com'] })).toEqual(['include_domains', 'safesearch']);
    expect(unsupportedFilters(['country'], { country: 'US' })).toBeNull();
  });

  it('matches a hostname and its subdomains only', () => {
    expect(hostnameMatches('example.com', 'example.com')).toBe(true);
    expect(hostnameMatches('news.example.com', 'example.com')).toBe(true);
    expect(hostnameMatches('badexample.com', 'example.com')).toBe(false);
  });
});

describe('isCanonicalFilters', () => {
  // The declared schemas, compiled: isCanonicalFilters must agree with them field by field.
  const ajv = new Ajv({ strict: false });
  const compiled = new Map(FILTER_NAMES.map((name) => [name, ajv.compile(FILTER_SCHEMAS[name])]));
  const obeys = (name: FilterName, value: unknown): boolean => compiled.get(name)?.(value) === true;

  it('holds for what canonicalFilters gives, and for nothing else', () => {
    const canonical = canonicalFilters({ include_domains: ['B.example.com', 'a.example.com'], country: 'US', language: 'en', published_after: '2025-01-01T02:00:00+02:00', published_before: '2025-02-01', safesearch: 'off' });
    expect(isCanonicalFilters(JSON.parse(JSON.stringify(canonical)))).toBe(true);
    for (const value of [null, undefined, {}, [], 'US', { country: 'US', extra: 1 }, { include_domains: ['b.example', 'a.example'] }, { published_after: '2025-01-01T00:00:00Z' }]) {
      expect([value, isCanonicalFilters(value)]).toEqual([value, false]);
    }
  });

  it("agrees with each filter's declared JSON Schema on values of every kind", () => {
    const samples: unknown[] = [
      'US', 'us', 'XX', 'en', 'EN', 'zz', 'off', 'moderate', 'strict', 'on', '2025-01-31', '2025-01-31T12:00:00.000Z', '2025-1-31', 'x',
      ['example.com'], ['a.example.com', 'example.com'], [], ['https://example.com'], ['example'], [1], Array.from({ length: 21 }, (_, i) => `h${String(i).padStart(2, '0')}.example`),
      1, true, null, {},
    ];
    for (const name of FILTER_NAMES) {
      for (const value of samples) {
        // Canonical values only, so the one difference can be the schema: a lower-case sorted list, a date-time in UTC.
        const agrees = isCanonicalFilters({ [name]: value }) === obeys(name, value);
        expect([name, value, agrees]).toEqual([name, value, true]);
      }
    }
  });
});
