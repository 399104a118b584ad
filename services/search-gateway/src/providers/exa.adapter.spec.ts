import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { findModel } from '@svc/contracts';
import type { ModelSpec } from '@svc/contracts';
import { ExaAdapter } from './exa.adapter';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

function model(id: string): ModelSpec {
  const found = findModel(id);
  if (found === undefined) throw new Error(`no model ${id}`);
  return found;
}

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
  let server: Server;
  let canned = { status: 200, body: '{}' };
  const seen: Seen[] = [];
  let adapter: ExaAdapter;

  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8');
      });
      request.on('end', () => {
        seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
        response.writeHead(canned.status, { 'content-type': 'application/json' });
        response.end(canned.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    adapter = new ExaAdapter({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  });
  afterAll(async () => {
    await adapter.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    seen.length = 0;
  });

  const search = (id: string, maxResults = 10) =>
    adapter.search({ query: 'llm survey', model: model(id), maxResults, apiKey: 'exa-key', timeoutMs: 5_000 });

  it('posts query, type (the upstream variant), numResults and highlights with x-api-key', async () => {
    canned = { status: 200, body: JSON.stringify(DEEP_OK) };
    await search('exa/fast', 250);
    expect(seen[0]?.method).toBe('POST');
    expect(seen[0]?.url).toBe('/search');
    expect(seen[0]?.headers['x-api-key']).toBe('exa-key');
    expect(seen[0]?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ query: 'llm survey', type: 'fast', numResults: 100, contents: { highlights: true } });
  });

  it('maps the filters onto Exa\'s own fields (a date is its whole UTC day) and refuses one the model does not honour', async () => {
    canned = { status: 200, body: JSON.stringify(DEEP_OK) };
    await adapter.search({
      query: 'llm survey', model: model('exa/instant'), maxResults: 5, apiKey: 'exa-key', timeoutMs: 5_000,
      filters: { include_domains: ['arxiv.org'], exclude_domains: ['example.com'], country: 'DE', published_after: '2025-01-01', published_before: '2025-01-31T12:00:00.000Z' },
    });
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({
      query: 'llm survey', type: 'instant', numResults: 5, contents: { highlights: true },
      includeDomains: ['arxiv.org'], excludeDomains: ['example.com'], userLocation: 'DE',
      startPublishedDate: '2025-01-01T00:00:00.000Z', endPublishedDate: '2025-01-31T12:00:00.000Z',
    });
    await expect(adapter.search({ query: 'x', model: model('exa/auto'), maxResults: 5, apiKey: 'exa-key', timeoutMs: 5_000, filters: { safesearch: 'strict' } }))
      .rejects.toThrow(/cannot honour the filters safesearch/);
    expect(seen).toHaveLength(1);
  });

  it('normalizes results: first highlight (or text) as snippet, publishedDate, score or null, empty title for null', async () => {
    canned = { status: 200, body: JSON.stringify(DEEP_OK) };
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
    canned = { status, body };
    const outcome = await search('exa/auto');
    expect(outcome).toMatchObject({ ok: false, kind, status });
    expect(outcome.ok || outcome.error).not.toContain('upstream detail text');
  });

  it.each([['{"requestId":"x","results":[{"url'], ['{"requestId":"x"}'], ['null']])('a 200 body %s is malformed', async (body) => {
    canned = { status: 200, body };
    expect(await search('exa/auto')).toMatchObject({ ok: false, kind: 'malformed', status: 200 });
  });
});
