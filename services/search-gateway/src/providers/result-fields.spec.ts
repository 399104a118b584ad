import { isHttpUrl, plainText, toPublishedAt, toScore } from './result-fields';

describe('result fields', () => {
  it.each([
    ['2024-11-21T12:00:00', '2024-11-21T12:00:00Z'],
    ['2024-11-21', '2024-11-21T00:00:00Z'],
    ['2024-03-01T00:00:00.000Z', '2024-03-01T00:00:00Z'],
    ['2024-03-01T10:00:00.250+02:00', '2024-03-01T08:00:00.250Z'],
    ['Wed, 15 Jan 2025 10:00:00 GMT', '2025-01-15T10:00:00Z'],
    ['2028-02-29T23:59:59Z', '2028-02-29T23:59:59Z'],
    ['2026-01-02T03:04:05.000Z', '2026-01-02T03:04:05Z'],
    ['2026-01-02T03:04:05.678Z', '2026-01-02T03:04:05.678Z'],
  ])('published_at from %s is RFC 3339 UTC %s', (raw, expected) => {
    expect(toPublishedAt(raw)).toBe(expected);
  });

  it.each([[undefined], [null], [''], ['2 hours ago'], ['2024-13-45'], [1700000000], ['yesterday']])('published_at from %j is null', (raw) => {
    expect(toPublishedAt(raw)).toBeNull();
  });

  it('keeps finite numeric scores only', () => {
    expect(toScore(0.42)).toBe(0.42);
    expect(toScore('0.42')).toBeNull();
    expect(toScore(Number.NaN)).toBeNull();
    expect(toScore(undefined)).toBeNull();
  });

  it('strips markup and decodes entities in snippets', () => {
    expect(plainText('The <strong>Rust</strong> book &amp; more')).toBe('The Rust book & more');
    expect(plainText(null)).toBe('');
    expect(plainText('  plain text, nothing to strip ')).toBe('plain text, nothing to strip');
  });

  it('accepts only http(s) urls', () => {
    expect(isHttpUrl('https://a.example/x')).toBe(true);
    expect(isHttpUrl('javascript:alert(1)')).toBe(false);
    expect(isHttpUrl('not a url')).toBe(false);
    expect(isHttpUrl('http://localhost:8080/a?b=c#d')).toBe(true);
    expect(isHttpUrl('https://例え.jp/パス')).toBe(true);
    expect(isHttpUrl('https:// spaced.example/')).toBe(false);
    expect(isHttpUrl('ftp://files.example/')).toBe(false);
  });
});
