import { ExaAdapter } from './exa.adapter';
import { useUpstream } from '../../test/fake-upstream';
import { model } from '../../test/search-steps.fakes';

const DEEP_OK = {
  requestId: 'b5947044c4b78efa9552a7c89b306d95',
  results: [
    {
      id: 'https://arxiv.org/abs/2307.06435', title: 'A Comprehensive Overview of LLMs', url: 'https://arxiv.org/abs/2307.06435',
      publishedDate: '2023-11-16T01:36:32.547Z', author: 'Humza Naveed', score: 0.4600165784358978,
      highlights: ['Large language models have recently demonstrated remarkable capabilities.'], highlightScores: [0.46],
    },
    { id: 'x', title: null, url: 'https://example.com/untitled', text: 'Only text here, no highlights.' },
  ],
  costDollars: { total: 0.012, search: { deep: 0.012 } },
  searchTime: 1203.5,
};

function exaError(tag: string): string {
  return JSON.stringify({ requestId: 'r1', error: 'upstream detail text', tag });
}

describe('ExaAdapter', () => {
  const fake = useUpstream((url) => new ExaAdapter({ baseUrl: url }));

  const search = (id: string, maxResults = 10) =>
    fake.adapter.search({ query: 'llm survey', model: model(id), maxResults, apiKey: 'exa-key', timeoutMs: 5_000 });

  it('posts query, type (the upstream variant), numResults and highlights with x-api-key', async () => {
    fake.upstream.reply = { status: 200, body: JSON.stringify(DEEP_OK) };
    await search('exa/fast', 250);
    expect(fake.upstream.seen[0]?.method).toBe('POST');
    expect(fake.upstream.seen[0]?.url).toBe('/search');
    expect(fake.upstream.seen[0]?.headers['x-api-key']).toBe('exa-key');
    expect(fake.upstream.seen[0]?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(fake.upstream.seen[0]?.body ?? '')).toEqual({ query: 'llm survey', type: 'fast', numResults: 100, contents: { highlights: true } });
  });

  it('contents: text (with the highlights of the snippet) or highlights, each capped, read into the results', async () => {
    fake.upstream.reply = { status: 200, body: JSON.stringify({ requestId: 'r', results: [{ id: 'a', title: 't', url: 'https://x.test/a', highlights: ['first passage', 'second'], text: 'page text here' }] }) };
    const text = await fake.adapter.search({ query: 'q', model: model('exa/fast'), maxResults: 5, apiKey: 'exa-key', timeoutMs: 5_000, contents: 'text', maxCharsPerResult: 9 });
    expect(JSON.parse(fake.upstream.seen[0]?.body ?? '').contents).toEqual({ text: { maxCharacters: 9 }, highlights: true });
    expect(text.ok && text.results[0]).toEqual(expect.objectContaining({ snippet: 'first passage', text: 'page text', truncated: true }));
    const highlights = await fake.adapter.search({ query: 'q', model: model('exa/fast'), maxResults: 5, apiKey: 'exa-key', timeoutMs: 5_000, contents: 'highlights', maxCharsPerResult: 15 });
    expect(JSON.parse(fake.upstream.seen[1]?.body ?? '').contents).toEqual({ highlights: { maxCharacters: 15 } });
    expect(highlights.ok && highlights.results[0]).toEqual(expect.objectContaining({ highlights: ['first passage', 'se'], truncated: true }));
  });

  it('maps the filters onto Exa\'s own fields (a date is its whole UTC day) and refuses one the model does not honour', async () => {
    fake.upstream.reply = { status: 200, body: JSON.stringify(DEEP_OK) };
    await fake.adapter.search({
      query: 'llm survey', model: model('exa/instant'), maxResults: 5, apiKey: 'exa-key', timeoutMs: 5_000,
      filters: { include_domains: ['arxiv.org'], exclude_domains: ['example.com'], country: 'DE', published_after: '2025-01-01', published_before: '2025-01-31T12:00:00.000Z' },
    });
    expect(JSON.parse(fake.upstream.seen[0]?.body ?? '')).toEqual({
      query: 'llm survey', type: 'instant', numResults: 5, contents: { highlights: true },
      includeDomains: ['arxiv.org'], excludeDomains: ['example.com'], userLocation: 'DE',
      startPublishedDate: '2025-01-01T00:00:00.000Z', endPublishedDate: '2025-01-31T12:00:00.000Z',
    });
    await expect(fake.adapter.search({ query: 'x', model: model('exa/auto'), maxResults: 5, apiKey: 'exa-key', timeoutMs: 5_000, filters: { safesearch: 'strict' } }))
      .rejects.toThrow(/cannot honour the filters safesearch/);
    expect(fake.upstream.seen).toHaveLength(1);
  });

  it('normalizes results: first highlight (or text) as snippet, publishedDate, score or null, empty title for null', async () => {
    fake.upstream.reply = { status: 200, body: JSON.stringify(DEEP_OK) };
    expect(await search('exa/deep')).toEqual({
      ok: true,
      results: [
        {
          position: 1, title: 'A Comprehensive Overview of LLMs', url: 'https://arxiv.org/abs/2307.06435',
          snippet: 'Large language models have recently demonstrated remarkable capabilities.',
          published_at: '2023-11-16T01:36:32.547Z', score: 0.4600165784358978,
        },
        { position: 2, title: '', url: 'https://example.com/untitled', snippet: 'Only text here, no highlights.', published_at: null, score: null },
      ],
    });
  });

  it.each([
    [401, exaError('INVALID_API_KEY'), 'bad_key'],
    [402, exaError('NO_MORE_CREDITS'), 'quota'],
    [403, exaError('FORBIDDEN'), 'bad_key'],
    [400, exaError('INVALID_REQUEST_BODY'), 'bad_request'],
    [429, exaError('RATE_LIMIT_EXCEEDED'), 'rate_limited'],
    [500, exaError('INTERNAL_ERROR'), 'server_error'],
    [503, 'overloaded', 'server_error'],
  ])('classifies %i as %s without the upstream text', async (status, body, kind) => {
    fake.upstream.reply = { status, body };
    const outcome = await search('exa/auto');
    expect(outcome).toMatchObject({ ok: false, kind, status });
    expect(outcome.ok || outcome.error).not.toContain('upstream detail text');
  });

  it.each([['{"requestId":"x","results":[{"url'], ['{"requestId":"x"}'], ['null']])('a 200 body %s is malformed', async (body) => {
    fake.upstream.reply = { status: 200, body };
    expect(await search('exa/auto')).toMatchObject({ ok: false, kind: 'malformed', status: 200 });
  });
});
