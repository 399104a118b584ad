import { itAnswersEachFailure, simulatorForTests } from './simulator';

const AUTH = { authorization: 'Bearer tvly-sim-key' };

describe('provider-sim: Tavily', () => {
  const sim = simulatorForTests();

  const search = (payload: unknown, headers: Record<string, string> = AUTH) =>
    sim.app.inject({ method: 'POST', url: '/tavily/search', payload: payload as Record<string, unknown>, headers });

  it('answers with query, results (title, url, content, score), response_time and request_id; 5 results by default', async () => {
    const response = await search({ query: 'best espresso sim:*=ok' });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.query).toBe('best espresso');
    expect(body.results).toHaveLength(5);
    expect(body.results[0]).toEqual(
      expect.objectContaining({ title: expect.any(String), url: expect.stringMatching(/^https:/), content: expect.any(String), score: expect.any(Number) }),
    );
    expect(body.results[0]).not.toHaveProperty('published_date');
    expect(typeof body.response_time).toBe('number');
    expect(typeof body.request_id).toBe('string');
    expect(body).not.toHaveProperty('usage');
  });

  it('honours max_results (0..20), usage credits by depth, and published_date for news', async () => {
    const twenty = (await search({ query: 'x', max_results: 20, search_depth: 'advanced', include_usage: true })).json();
    expect(twenty.results).toHaveLength(20);
    expect(twenty.usage).toEqual({ credits: 2 });
    const none = (await search({ query: 'x', max_results: 0 })).json();
    expect(none.results).toEqual([]);
    const news = (await search({ query: 'x', topic: 'news', max_results: 1 })).json();
    expect(Number.isNaN(Date.parse(news.results[0].published_date))).toBe(false);
  });

  it('is deterministic per query and depth', async () => {
    const a = (await search({ query: 'deterministic' })).json();
    const b = (await search({ query: 'deterministic' })).json();
    expect(b.results).toEqual(a.results);
  });

  it('answers a wrong or missing key with 401 {"detail":{"error"}}', async () => {
    for (const headers of [{ authorization: 'Bearer tvly-wrong' }, {}] as Record<string, string>[]) {
      const response = await search({ query: 'x' }, headers);
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual({ detail: { error: expect.any(String) } });
    }
  });

  it.each([
    [{ query: 'x', max_results: 21 }],
    [{ query: 'x', search_depth: 'deep' }],
    [{ query: 'x', topic: 'sports' }],
    [{ query: 'x', time_range: 'decade' }],
    [{ query: 'x', include_domains: 'a.com' }],
    [{ query: 'x', maxResults: 3 }],
    [{}],
  ])('rejects bad parameters %j with 400', async (payload) => {
    const response = await search(payload);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ detail: { error: expect.any(String) } });
  });

  itAnswersEachFailure('tavily', { error500: 500, error429: 429, quota: 432, badkey: 401 }, (query) => search({ query }), (body) => {
    expect(body).toEqual({ detail: { error: expect.any(String) } });
  });

  it('a 429 carries retry-after seconds', async () => {
    const response = await search({ query: 'q sim:tavily=error429' });
    expect(response.headers['retry-after']).toMatch(/^\d+$/);
  });

  it('sim:tavily=empty gives zero results; malformed gives 200 with an unparsable body', async () => {
    expect((await search({ query: 'q sim:tavily=empty' })).json().results).toEqual([]);
    const malformed = await search({ query: 'q sim:tavily=malformed' });
    expect(malformed.statusCode).toBe(200);
    expect(() => JSON.parse(malformed.body) as unknown).toThrow();
  });
});
