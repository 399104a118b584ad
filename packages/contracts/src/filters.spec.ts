import { canonicalFilters, FILTER_NAMES, FilterError, filterInstantMs, hostnameMatches, unsupportedFilters } from './filters';

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
