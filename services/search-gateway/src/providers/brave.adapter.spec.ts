import { BraveAdapter } from './brave.adapter';
import { useUpstream } from '../../test/fake-upstream';
import { model } from '../../test/search-steps.fakes';

const WEB_OK = {
  type: 'search',
  query: { original: 'rust book', more_results_available: true },
  mixed: { type: 'mixed', main: [{ type: 'web', index: 0, all: false }] },
  web: {
    type: 'search',
    family_friendly: true,
    results: [
      {
        type: 'search_result', subtype: 'generic', title: 'The <strong>Rust</strong> Programming Language', url: 'https://doc.rust-lang.org/book/',
        description: 'The <strong>Rust</strong> book &amp; guide.', age: 'November 21, 2024', page_age: '2024-11-21T12:00:00',
        language: 'en', family_friendly: true, extra_snippets: ['More'], meta_url: { hostname: 'doc.rust-lang.org' },
      },
      { type: 'search_result', title: 'No date', url: 'https://example.com/a', description: 'plain', age: '2 hours ago' },
      { type: 'search_result', title: 'Bad url', url: 'javascript:void(0)', description: 'skipped' },
    ],
  },
};

const NEWS_OK = {
  type: 'news',
  query: { original: 'elections' },
  results: [{ type: 'news_result', title: 'Vote', url: 'https://news.example.com/vote', description: 'Polls open', age: '1 day ago', page_age: '2025-02-01T06:30:00' }],
};

function braveError(status: number, code: string): string {
  return JSON.stringify({ type: 'ErrorResponse', error: { id: 'f1e2', status, code, detail: 'upstream detail text', meta: {} }, time: 1700000000 });
}

describe('BraveAdapter', () => {
  const fake = useUpstream((url) => new BraveAdapter({ baseUrl: `${url}/res/v1/` }));

  const search = (id: string, maxResults = 10) =>
    fake.adapter.search({ query: 'rust book', model: model(id), maxResults, apiKey: 'brave-key', timeoutMs: 5_000 });

  it('calls GET /web/search with q, count capped at 20 and the subscription token, and normalizes web.results', async () => {
    fake.upstream.reply = { status: 200, body: JSON.stringify(WEB_OK) };
    const outcome = await search('brave/web', 50);
    expect(fake.upstream.seen).toHaveLength(1);
    const url = new URL(fake.upstream.seen[0]?.url ?? '', 'http://x');
    expect(fake.upstream.seen[0]?.method).toBe('GET');
    expect(url.pathname).toBe('/res/v1/web/search');
    expect(url.searchParams.get('q')).toBe('rust book');
    expect(url.searchParams.get('count')).toBe('20');
    expect(fake.upstream.seen[0]?.headers['x-subscription-token']).toBe('brave-key');
    expect(fake.upstream.seen[0]?.headers.accept).toBe('application/json');
    expect(outcome).toEqual({
      ok: true,
      results: [
        { position: 1, title: 'The Rust Programming Language', url: 'https://doc.rust-lang.org/book/', snippet: 'The Rust book & guide.', published_at: '2024-11-21T12:00:00Z', score: null },
        { position: 2, title: 'No date', url: 'https://example.com/a', snippet: 'plain', published_at: null, score: null },
      ],
    });
  });

  it('maps country, language, safesearch and the dates (a freshness range of whole days) onto Brave\'s parameters', async () => {
    fake.upstream.reply = { status: 200, body: JSON.stringify(WEB_OK) };
    await fake.adapter.search({
      query: 'rust book', model: model('brave/web'), maxResults: 5, apiKey: 'brave-key', timeoutMs: 5_000,
      filters: { country: 'JP', language: 'ja', published_after: '2025-01-01', published_before: '2025-02-01', safesearch: 'strict' },
    });
    const params = new URL(fake.upstream.seen[0]?.url ?? '', 'http://x').searchParams;
    expect(Object.fromEntries(params)).toEqual({ q: 'rust book', count: '5', country: 'JP', search_lang: 'jp', safesearch: 'strict', freshness: '2025-01-01to2025-02-01' });
    await expect(fake.adapter.search({ query: 'x', model: model('brave/web'), maxResults: 5, apiKey: 'brave-key', timeoutMs: 5_000, filters: { include_domains: ['a.example'] } }))
      .rejects.toThrow(/cannot honour the filters include_domains/);
  });

  it('calls /news/search for brave/news (count up to 50) and reads top-level results', async () => {
    fake.upstream.reply = { status: 200, body: JSON.stringify(NEWS_OK) };
    const outcome = await search('brave/news', 100);
    const url = new URL(fake.upstream.seen[0]?.url ?? '', 'http://x');
    expect(url.pathname).toBe('/res/v1/news/search');
    expect(url.searchParams.get('count')).toBe('50');
    expect(outcome).toEqual({ ok: true, results: [{ position: 1, title: 'Vote', url: 'https://news.example.com/vote', snippet: 'Polls open', published_at: '2025-02-01T06:30:00Z', score: null }] });
  });

  it('returns no more results than were asked for', async () => {
    fake.upstream.reply = { status: 200, body: JSON.stringify(WEB_OK) };
    const outcome = await search('brave/web', 1);
    expect(outcome.ok && outcome.results.length).toBe(1);
  });

  it('a web answer without a web section is zero results', async () => {
    fake.upstream.reply = { status: 200, body: JSON.stringify({ type: 'search', query: { original: 'zzz' } }) };
    expect(await search('brave/web')).toEqual({ ok: true, results: [] });
  });

  it.each([
    [422, braveError(422, 'SUBSCRIPTION_TOKEN_INVALID'), 'bad_key'],
    [404, braveError(404, 'SUBSCRIPTION_NOT_FOUND'), 'bad_key'],
    [429, braveError(429, 'RATE_LIMITED'), 'rate_limited'],
    [429, braveError(429, 'QUOTA_LIMITED'), 'quota'],
    [429, JSON.stringify({ errors: [{ status: 429, code: 'QUOTA_LIMITED', detail: 'x' }] }), 'quota'],
    [422, JSON.stringify({ errors: [{ code: 'SUBSCRIPTION_TOKEN_INVALID' }] }), 'bad_key'],
    [422, braveError(422, 'VALIDATION'), 'bad_request'],
    [429, 'not json', 'rate_limited'],
    [500, braveError(500, 'INTERNAL_ERROR'), 'server_error'],
    [503, '<html>down</html>', 'server_error'],
  ])('classifies %i %s as %s, never echoing the upstream text', async (status, body, kind) => {
    fake.upstream.reply = { status, body };
    const outcome = await search('brave/web');
    expect(outcome).toMatchObject({ ok: false, kind, status });
    expect(outcome.ok || outcome.error).not.toContain('upstream detail text');
    expect(outcome.ok || outcome.error.length).toBeLessThan(80);
  });

  it.each([['{"type":"search","web":{"results":[{"tit'], ['{"type":"ErrorResponse"}'], ['[]']])('a 200 body %s is malformed', async (body) => {
    fake.upstream.reply = { status: 200, body };
    expect(await search('brave/web')).toMatchObject({ ok: false, kind: 'malformed', error: 'provider returned an unparsable body' });
  });

  it('a key that cannot go in a header is bad_key without calling upstream', async () => {
    const outcome = await fake.adapter.search({ query: 'x', model: model('brave/web'), maxResults: 5, apiKey: 'bad\nkey', timeoutMs: 1_000 });
    expect(outcome).toMatchObject({ ok: false, kind: 'bad_key' });
    expect(fake.upstream.seen).toHaveLength(0);
  });

  it('refuses a model of another provider (a programming error)', async () => {
    await expect(fake.adapter.search({ query: 'x', model: model('exa/auto'), maxResults: 5, apiKey: 'k', timeoutMs: 1_000 })).rejects.toThrow('exa/auto');
  });
});
