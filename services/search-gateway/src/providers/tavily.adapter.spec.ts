import { freePort, waitFor } from '@svc/test-kit';
import { TavilyAdapter } from './tavily.adapter';
import { useUpstream } from '../../test/fake-upstream';
import { model } from '../../test/search-steps.fakes';

const OK = {
  query: 'Who is Leo Messi?',
  follow_up_questions: null,
  answer: null,
  images: [],
  results: [
    { title: 'Lionel Messi - Wikipedia', url: 'https://en.wikipedia.org/wiki/Lionel_Messi', content: 'Lionel Andrés Messi is an Argentine footballer.', score: 0.81025416, raw_content: null },
    { title: 'Messi news', url: 'https://news.example.com/messi', content: 'Latest.', score: 0.5, raw_content: null, published_date: 'Wed, 15 Jan 2025 10:00:00 GMT' },
  ],
  response_time: 1.67,
  request_id: '123e4567-e89b-12d3-a456-426614174111',
};

describe('TavilyAdapter', () => {
  const fake = useUpstream((url) => new TavilyAdapter({ baseUrl: `${url}/` }));

  const search = (id: string, maxResults = 10, timeoutMs = 5_000, signal?: AbortSignal) =>
    fake.adapter.search({ query: 'Who is Leo Messi?', model: model(id), maxResults, apiKey: 'tvly-key', timeoutMs, signal });

  it('posts query, search_depth and max_results (capped at 20) with a Bearer key', async () => {
    fake.upstream.reply = { status: 200, body: JSON.stringify(OK) };
    await search('tavily/advanced', 100);
    expect(fake.upstream.seen[0]?.url).toBe('/search');
    expect(fake.upstream.seen[0]?.headers.authorization).toBe('Bearer tvly-key');
    expect(JSON.parse(fake.upstream.seen[0]?.body ?? '')).toEqual({ query: 'Who is Leo Messi?', search_depth: 'advanced', max_results: 20 });
  });

  it('contents text: asks for the raw content as text and cuts it at the cap; highlights are refused (Tavily has none)', async () => {
    fake.upstream.reply = { status: 200, body: JSON.stringify({ ...OK, results: [{ url: 'https://x.test/a', title: 't', content: 'c', score: 0.5, raw_content: 'r'.repeat(30) }, { url: 'https://x.test/b', title: 't', content: 'c', score: 0.4, raw_content: 'short' }] }) };
    const outcome = await fake.adapter.search({ query: 'q', model: model('tavily/basic'), maxResults: 5, apiKey: 'tvly-key', timeoutMs: 5_000, contents: 'text', maxCharsPerResult: 10 });
    expect(JSON.parse(fake.upstream.seen[0]?.body ?? '')).toEqual({ query: 'q', search_depth: 'basic', max_results: 5, include_raw_content: 'text' });
    expect(outcome.ok && outcome.results.map((r) => [r.text, r.truncated])).toEqual([['r'.repeat(10), true], ['short', false]]);
    await expect(fake.adapter.search({ query: 'q', model: model('tavily/basic'), maxResults: 5, apiKey: 'tvly-key', timeoutMs: 5_000, contents: 'highlights' })).rejects.toThrow('cannot return contents highlights');
  });

  it('maps the filters onto Tavily\'s fields, its whole-day dates rounded inward', async () => {
    fake.upstream.reply = { status: 200, body: JSON.stringify(OK) };
    await fake.adapter.search({
      query: 'q', model: model('tavily/ultra-fast'), maxResults: 5, apiKey: 'tvly-key', timeoutMs: 5_000,
      filters: { include_domains: ['a.example'], exclude_domains: ['b.example'], published_after: '2025-01-01T12:00:00.000Z', published_before: '2025-01-31T12:00:00.000Z' },
    });
    expect(JSON.parse(fake.upstream.seen[0]?.body ?? '')).toEqual({
      query: 'q', search_depth: 'ultra-fast', max_results: 5, include_domains: ['a.example'], exclude_domains: ['b.example'], start_date: '2025-01-02', end_date: '2025-01-30',
    });
  });

  it('normalizes content as snippet, score and published_date', async () => {
    fake.upstream.reply = { status: 200, body: JSON.stringify(OK) };
    expect(await search('tavily/basic')).toEqual({
      ok: true,
      results: [
        { position: 1, title: 'Lionel Messi - Wikipedia', url: 'https://en.wikipedia.org/wiki/Lionel_Messi', snippet: 'Lionel Andrés Messi is an Argentine footballer.', published_at: null, score: 0.81025416 },
        { position: 2, title: 'Messi news', url: 'https://news.example.com/messi', snippet: 'Latest.', published_at: '2025-01-15T10:00:00Z', score: 0.5 },
      ],
    });
  });

  it.each([
    [401, 'bad_key'],
    [403, 'bad_key'],
    [432, 'quota'],
    [433, 'quota'],
    [429, 'rate_limited'],
    [400, 'bad_request'],
    [500, 'server_error'],
    [502, 'server_error'],
  ])('classifies %i as %s without the upstream text', async (status, kind) => {
    fake.upstream.reply = { status, body: JSON.stringify({ detail: { error: 'upstream detail text' } }) };
    const outcome = await search('tavily/basic');
    expect(outcome).toMatchObject({ ok: false, kind, status });
    expect(outcome.ok || outcome.error).not.toContain('upstream detail text');
  });

  it('a 200 body that is not JSON is malformed', async () => {
    fake.upstream.reply = { status: 200, body: '{"query": "x", "results": [' };
    expect(await search('tavily/basic')).toMatchObject({ ok: false, kind: 'malformed' });
  });

  it('no answer within timeoutMs aborts the call and is a timeout', async () => {
    fake.upstream.reply = 'hang';
    const outcome = await search('tavily/basic', 5, 200);
    expect(outcome).toEqual({ ok: false, kind: 'timeout', error: 'provider did not answer within 200 ms', status: null });
  });

  it('a caller abort ends the call as a connection failure, not a timeout', async () => {
    fake.upstream.reply = 'hang';
    const controller = new AbortController();
    const pending = search('tavily/basic', 5, 60_000, controller.signal);
    await waitFor('the request to reach the upstream', () => (fake.upstream.seen.length > 0 ? true : undefined));
    controller.abort();
    expect(await pending).toMatchObject({ ok: false, kind: 'connection' });
  });

  it('an unreachable host is a connection failure', async () => {
    const port = await freePort();
    const nowhere = new TavilyAdapter({ baseUrl: `http://127.0.0.1:${port}` });
    try {
      const outcome = await nowhere.search({ query: 'x', model: model('tavily/basic'), maxResults: 5, apiKey: 'tvly-key', timeoutMs: 5_000 });
      expect(outcome).toEqual({ ok: false, kind: 'connection', error: 'could not reach the provider', status: null });
    } finally {
      await nowhere.close();
    }
  });
});
