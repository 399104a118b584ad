import { failsAt, pageFor, passagesOf } from '../src/pages';
import { simulatorForTests } from './simulator';

const EXA = { 'x-api-key': 'sim-exa-key' };
const TAVILY = { authorization: 'Bearer tvly-sim-key' };

describe('provider-sim: pages', () => {
  it('is the same page for the same URL, another for another URL', () => {
    expect(pageFor('https://example.com/a')).toEqual(pageFor('https://example.com/a'));
    expect(pageFor('https://example.com/a').text).not.toBe(pageFor('https://example.com/b').text);
  });

  it('makes a page of exactly sim-chars-<n> characters, plain and markdown', () => {
    const page = pageFor('https://example.com/sim-chars-12345/doc');
    expect(page.text).toHaveLength(12_345);
    expect(page.markdown).toHaveLength(12_345);
    expect(page.markdown.startsWith('# ')).toBe(true);
  });

  it('fails a URL at one provider (sim-fail-<provider>) or at every one (sim-fail-all), by its path only', () => {
    expect([failsAt('https://x.test/sim-fail-exa', 'exa'), failsAt('https://x.test/sim-fail-exa', 'tavily')]).toEqual([true, false]);
    expect([failsAt('https://x.test/p/sim-fail-all', 'exa'), failsAt('https://x.test/p/sim-fail-all', 'tavily')]).toEqual([true, true]);
    expect(failsAt('https://x.test/p?q=sim-fail-all', 'exa')).toBe(false);
  });

  it('ranks passages by the query\'s words, within the cap', () => {
    const page = pageFor('https://example.com/sim-chars-5000');
    const passages = passagesOf(page, 'ledger balance', 300);
    expect(passages.join('').length).toBeLessThanOrEqual(300);
    expect(passages.length).toBeGreaterThan(0);
  });
});

describe('provider-sim: Exa POST /contents', () => {
  const sim = simulatorForTests();
  const contents = (payload: unknown, headers: Record<string, string> = EXA) =>
    sim.app.inject({ method: 'POST', url: '/exa/contents', payload: payload as Record<string, unknown>, headers });

  it('answers a result and a success status per page, the text cut to maxCharacters, billed per page', async () => {
    const urls = ['https://example.com/one', 'https://example.org/sim-chars-3000/two'];
    const response = await contents({ urls, text: { maxCharacters: 1_000 } });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.results.map((r: { url: string }) => r.url)).toEqual(urls);
    expect(body.results[1].text).toBe(pageFor(urls[1] ?? '').text.slice(0, 1_000));
    expect(body.results[0]).toEqual(expect.objectContaining({ id: urls[0], title: expect.any(String), publishedDate: expect.any(String) }));
    expect(body.statuses).toEqual(urls.map((id) => ({ id, status: 'success', source: 'cached' })));
    expect(body.costDollars).toEqual({ total: 0.002, contents: { text: 0.002 } });
  });

  it('fails sim-fail-exa and sim-fail-all in statuses (CRAWL_NOT_FOUND, 404), answering the others and billing only them', async () => {
    const urls = ['https://example.com/ok', 'https://example.com/sim-fail-exa', 'https://example.com/sim-fail-all', 'https://example.com/sim-fail-tavily'];
    const body = (await contents({ urls, text: true })).json();
    expect(body.results.map((r: { url: string }) => r.url)).toEqual([urls[0], urls[3]]);
    expect(body.statuses[1]).toEqual({ id: urls[1], status: 'error', source: 'none', error: { tag: 'CRAWL_NOT_FOUND', httpStatusCode: 404 } });
    expect(body.statuses[2].status).toBe('error');
    expect(body.costDollars.total).toBe(0.002);
  });

  it('answers highlights for a query instead of text, and text when no content type is asked', async () => {
    const url = 'https://example.com/sim-chars-8000/h';
    const highlighted = (await contents({ urls: [url], highlights: { query: 'cache budget', maxCharacters: 400 } })).json();
    expect(highlighted.results[0]).not.toHaveProperty('text');
    expect(highlighted.results[0].highlights.join('').length).toBeLessThanOrEqual(400);
    const bare = (await contents({ urls: [url] })).json();
    expect(bare.results[0].text).toBe(pageFor(url).text);
  });

  it('refuses what Exa refuses: no urls, an unknown field, a bad maxAgeHours, a wrong key', async () => {
    for (const payload of [{ urls: [] }, { urls: ['https://x.test'], format: 'md' }, { urls: ['https://x.test'], maxAgeHours: -2 }]) {
      const response = await contents(payload);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ requestId: expect.any(String), error: expect.any(String), tag: 'INVALID_REQUEST_BODY' });
    }
    expect((await contents({ urls: ['https://x.test'] }, { 'x-api-key': 'wrong' })).statusCode).toBe(401);
  });

  it('takes maxAgeHours 0 as a live crawl (source crawled)', async () => {
    const body = (await contents({ urls: ['https://example.com/live'], text: true, maxAgeHours: 0 })).json();
    expect(body.statuses[0].source).toBe('crawled');
  });

  it('answers a whole-call failure from a directive in the highlights query, as a search', async () => {
    const response = await contents({ urls: ['https://example.com/x'], highlights: { query: 'q sim:exa=error500' } });
    expect(response.statusCode).toBe(500);
  });
});

describe('provider-sim: Tavily POST /extract', () => {
  const sim = simulatorForTests();
  const extract = (payload: unknown, headers: Record<string, string> = TAVILY) =>
    sim.app.inject({ method: 'POST', url: '/tavily/extract', payload: payload as Record<string, unknown>, headers });

  it('answers results (markdown by default) and failed_results, 1 credit per 5 successful URLs rounded up', async () => {
    const urls = ['https://example.com/a', 'https://example.com/sim-fail-tavily', 'https://example.com/sim-fail-exa'];
    const body = (await extract({ urls, include_usage: true })).json();
    expect(body.results.map((r: { url: string }) => r.url)).toEqual([urls[0], urls[2]]);
    expect(body.results[0]).toEqual({ url: urls[0], title: expect.any(String), raw_content: pageFor(urls[0] ?? '').markdown, images: [] });
    expect(body.failed_results).toEqual([{ url: urls[1], error: expect.any(String) }]);
    expect(body.usage).toEqual({ credits: 1 });
    expect(typeof body.request_id).toBe('string');
    const six = (await extract({ urls: Array.from({ length: 6 }, (_, i) => `https://example.com/p${i}`), extract_depth: 'advanced', include_usage: true, format: 'text' })).json();
    expect(six.usage).toEqual({ credits: 4 });
    expect(six.results[0].raw_content).toBe(pageFor('https://example.com/p0').text);
  });

  it('answers every URL failed with 200 and no credits', async () => {
    const body = (await extract({ urls: ['https://example.com/sim-fail-all'], include_usage: true })).json();
    expect(body.results).toEqual([]);
    expect(body.usage).toEqual({ credits: 0 });
  });

  it('answers chunks of at most 500 characters for a query (chunks_per_source)', async () => {
    const body = (await extract({ urls: ['https://example.com/sim-chars-9000/q'], query: 'ledger credit', chunks_per_source: 2 })).json();
    const chunks = String(body.results[0].raw_content).split(' [...] ');
    expect(chunks.length).toBeLessThanOrEqual(2);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(500);
  });

  it('refuses what Tavily refuses: no URLs, 21 URLs, an unknown field, a bad depth, chunks without a query', async () => {
    for (const payload of [{ urls: [] }, { urls: Array.from({ length: 21 }, (_, i) => `https://x.test/${i}`) }, { urls: ['https://x.test'], depth: 'basic' },
      { urls: ['https://x.test'], extract_depth: 'deep' }, { urls: ['https://x.test'], chunks_per_source: 2 }]) {
      const response = await extract(payload);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ detail: { error: expect.any(String) } });
    }
    expect((await extract({ urls: ['https://x.test'] }, { authorization: 'Bearer nope' })).statusCode).toBe(401);
  });
});
