import { findExtractModel } from '@svc/contracts';
import type { ExtractModelSpec } from '@svc/contracts';
import { useUpstream } from '../../test/fake-upstream';
import { ExaContentsAdapter } from './exa.adapter';
import { normaliseUrl } from './page-url';
import { cutText } from './result-fields';
import type { ProviderExtractRequest } from './search-provider';
import { TavilyExtractAdapter } from './tavily.adapter';

function model(id: string): ExtractModelSpec {
  const found = findExtractModel(id);
  if (found === undefined) throw new Error(`no extract model ${id}`);
  return found;
}

const URLS = ['https://a.test/one', 'https://a.test/two', 'https://a.test/three'];

function request(id: string, overrides: Partial<ProviderExtractRequest> = {}): ProviderExtractRequest {
  return { urls: URLS, model: model(id), format: 'text', maxCharsPerUrl: 10, query: null, maxAgeS: null, apiKey: 'key', timeoutMs: 5_000, ...overrides };
}

describe('ExaContentsAdapter', () => {
  const fake = useUpstream((url) => new ExaContentsAdapter({ baseUrl: url }));

  it('posts the URLs, text cut at the cap, maxAgeHours rounded down from max_age_s; highlights for a query instead of text', async () => {
    fake.upstream.reply = { status: 200, body: JSON.stringify({ requestId: 'r', results: [], statuses: [] }) };
    await fake.adapter.extract(request('exa/contents', { maxAgeS: 7_199 }));
    expect(fake.upstream.seen[0]?.url).toBe('/contents');
    expect(fake.upstream.seen[0]?.headers['x-api-key']).toBe('key');
    expect(JSON.parse(fake.upstream.seen[0]?.body ?? '')).toEqual({ urls: URLS, text: { maxCharacters: 10 }, maxAgeHours: 1 });
    await fake.adapter.extract(request('exa/contents', { query: 'rank me', maxAgeS: 0 }));
    expect(JSON.parse(fake.upstream.seen[1]?.body ?? '')).toEqual({ urls: URLS, highlights: { query: 'rank me', maxCharacters: 10 }, maxAgeHours: 0 });
  });

  it('reads the pages and each URL\'s status: an error status in the platform\'s words, a URL answered nowhere as no content; a URL it was not sent is ignored', async () => {
    fake.upstream.reply = {
      status: 200,
      body: JSON.stringify({
        requestId: 'r',
        results: [
          { id: URLS[0], url: 'https://A.test/one#x', title: 'One &amp; only', text: 'abcdefghijklmnop', publishedDate: '2025-01-02T03:04:05.000Z' },
          { id: 'https://elsewhere.test/', url: 'https://elsewhere.test/', title: 'Other', text: 'not asked' },
        ],
        statuses: [{ id: URLS[0], status: 'success' }, { id: URLS[1], status: 'error', error: { tag: 'CRAWL_NOT_FOUND', httpStatusCode: 404 } }],
      }),
    };
    expect(await fake.adapter.extract(request('exa/contents'))).toEqual({
      ok: true,
      pages: [{ url: URLS[0], title: 'One & only', text: 'abcdefghij', published_at: '2025-01-02T03:04:05Z', truncated: true }],
      failed: [{ url: URLS[1], error: 'page not found (404)' }, { url: URLS[2], error: 'provider returned no content for it' }],
    });
  });

  it('classifies a failure of the whole call as a search\'s (402: credits), and refuses a format or option the model does not honour', async () => {
    fake.upstream.reply = { status: 402, body: JSON.stringify({ requestId: 'r', error: 'no credits', tag: 'NO_MORE_CREDITS' }) };
    expect(await fake.adapter.extract(request('exa/contents'))).toEqual({ ok: false, kind: 'quota', error: 'provider credits exhausted (402)', status: 402 });
    fake.upstream.reply = { status: 200, body: '{"results": 3}' };
    expect(await fake.adapter.extract(request('exa/contents'))).toEqual(expect.objectContaining({ ok: false, kind: 'malformed' }));
    await expect(fake.adapter.extract(request('exa/contents', { format: 'markdown' }))).rejects.toThrow('cannot return the format markdown');
    await expect(fake.adapter.extract(request('tavily/extract'))).rejects.toThrow('cannot serve model tavily/extract');
  });
});

describe('TavilyExtractAdapter', () => {
  const fake = useUpstream((url) => new TavilyExtractAdapter({ baseUrl: url }));

  it('posts the URLs with the model\'s extract_depth, the format, Tavily\'s own timeout in seconds and a query; never a max age', async () => {
    fake.upstream.reply = { status: 200, body: JSON.stringify({ results: [], failed_results: [], response_time: 0.1, request_id: 'r' }) };
    await fake.adapter.extract(request('tavily/extract-advanced', { format: 'markdown', query: 'chunks', timeoutMs: 15_500 }));
    expect(fake.upstream.seen[0]?.url).toBe('/extract');
    expect(fake.upstream.seen[0]?.headers.authorization).toBe('Bearer key');
    expect(JSON.parse(fake.upstream.seen[0]?.body ?? '')).toEqual({ urls: URLS, extract_depth: 'advanced', format: 'markdown', timeout: 15, query: 'chunks' });
    await expect(fake.adapter.extract(request('tavily/extract', { maxAgeS: 60 }))).rejects.toThrow('cannot honour an option sent');
  });

  it('reads results and failed_results; a 432 is the plan\'s limit', async () => {
    fake.upstream.reply = {
      status: 200,
      body: JSON.stringify({ results: [{ url: URLS[2], title: null, raw_content: 'short', images: [] }], failed_results: [{ url: URLS[0], error: 'Failed to fetch url' }], response_time: 0.2, request_id: 'r' }),
    };
    expect(await fake.adapter.extract(request('tavily/extract'))).toEqual({
      ok: true,
      pages: [{ url: URLS[2], title: null, text: 'short', published_at: null, truncated: false }],
      failed: [{ url: URLS[0], error: 'page could not be fetched' }, { url: URLS[1], error: 'provider returned no content for it' }],
    });
    fake.upstream.reply = { status: 432, body: JSON.stringify({ detail: { error: 'limit' } }) };
    expect(await fake.adapter.extract(request('tavily/extract'))).toEqual(expect.objectContaining({ ok: false, kind: 'quota' }));
  });
});

describe('page text and URLs', () => {
  it('cuts text at the cap, never between the halves of a surrogate pair', () => {
    expect(cutText('abcdef', 4)).toBe('abcd');
    expect(cutText('ab\u{1F600}cd', 3)).toBe('ab');
    expect(cutText('ab\u{1F600}cd', 4)).toBe('ab\u{1F600}');
    expect(cutText('abc', 10)).toBe('abc');
  });

  it('gives a URL its one normal form, or null for what is no http(s) URL or carries credentials', () => {
    expect(normaliseUrl('HTTP://Example.com:80/a/%7e/../b#frag')).toBe('http://example.com/a/b');
    expect(normaliseUrl('https://example.com')).toBe('https://example.com/');
    expect(normaliseUrl('https://example.com/?utm_source=x')).toBe('https://example.com/?utm_source=x');
    for (const bad of ['ftp://example.com/', 'mailto:a@b.test', 'https://u:p@example.com/', 'https://u@example.com/', '//example.com/', 'example.com',
      'https://example.com/\ud800', 'https://exa\udfffmple.com/', 'https://exa\nmple.com/', 'https://example.com/a\tb', 'https://example.com/\u0000', ' https://example.com/\u007f']) expect(normaliseUrl(bad)).toBeNull();
  });
});
