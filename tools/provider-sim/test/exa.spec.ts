import { itAnswersEachFailure, simulatorForTests } from './simulator';

const KEY = 'sim-exa-key';

describe('provider-sim: Exa', () => {
  const sim = simulatorForTests();

  const search = (payload: unknown, headers: Record<string, string> = { 'x-api-key': KEY }) =>
    sim.app.inject({ method: 'POST', url: '/exa/search', payload: payload as Record<string, unknown>, headers });

  it('answers with requestId, results, costDollars and searchTime; auto has no score', async () => {
    const response = await search({ query: 'rust async', numResults: 3 });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(typeof body.requestId).toBe('string');
    expect(body.results).toHaveLength(3);
    expect(body.results[0]).toEqual(
      expect.objectContaining({ id: expect.any(String), title: expect.any(String), url: expect.stringMatching(/^https:/), publishedDate: expect.any(String), author: expect.any(String) }),
    );
    expect(body.results[0]).not.toHaveProperty('score');
    expect(body.results[0]).not.toHaveProperty('highlights');
    expect(body.costDollars.total).toBe(0.007);
    expect(typeof body.searchTime).toBe('number');
  });

  it('gives a score for deep and instant, highlights only when asked, and prices results beyond 10', async () => {
    const body = (await search({ query: 'rust async', type: 'deep', numResults: 12, contents: { highlights: true } })).json();
    expect(body.results).toHaveLength(12);
    expect(typeof body.results[0].score).toBe('number');
    expect(body.results[0].highlights).toEqual([expect.any(String)]);
    expect(body.costDollars.total).toBe(0.014);
    const instant = (await search({ query: 'rust async', type: 'instant' })).json();
    expect(instant.results).toHaveLength(10);
    expect(typeof instant.results[0].score).toBe('number');
    expect(instant.costDollars.total).toBe(0.004);
  });

  it('answers two texts a person reads alike (another space, a decomposed character) with their own results', async () => {
    const urls = async (query: string): Promise<string[]> => (await search({ query, numResults: 3 })).json().results.map((r: { url: string }) => r.url);
    const plain = await urls('best vpn');
    expect(await urls('best vpn')).toEqual(plain);
    for (const other of ['best\uFEFFvpn', 'best\u00a0vpn', 'best\u3000vpn', 'best  vpn']) expect(await urls(other)).not.toEqual(plain);
    expect(await urls('cafe\u0301')).not.toEqual(await urls('caf\u00e9'));
  });

  it('accepts the key as a Bearer token too', async () => {
    const response = await search({ query: 'x' }, { authorization: `Bearer ${KEY}` });
    expect(response.statusCode).toBe(200);
  });

  it('answers a wrong or missing key with 401 and Exa\'s error body', async () => {
    for (const headers of [{ 'x-api-key': 'wrong' }, {}] as Record<string, string>[]) {
      const response = await search({ query: 'x' }, headers);
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual({ requestId: expect.any(String), error: expect.any(String), tag: 'INVALID_API_KEY' });
    }
  });

  it.each([
    [{ query: 'x', numResults: 101 }],
    [{ query: 'x', numResults: 0 }],
    [{ query: 'x', type: 'turbo' }],
    [{ query: '' }],
    [{ numResults: 3 }],
    [{ query: 'x', num_results: 3 }],
    [{ query: 'x', contents: { highlights: 'yes' } }],
  ])('rejects bad parameters %j with 400', async (payload) => {
    const response = await search(payload);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ tag: 'INVALID_REQUEST_BODY', error: expect.any(String) });
  });

  it('rejects a body that is not JSON with 400 in Exa\'s shape', async () => {
    const response = await sim.app.inject({ method: 'POST', url: '/exa/search', payload: '{nope', headers: { 'x-api-key': KEY, 'content-type': 'application/json' } });
    expect(response.statusCode).toBe(400);
    expect(response.json().tag).toBe('INVALID_REQUEST_BODY');
  });

  itAnswersEachFailure('exa', { error500: 500, error429: 429, quota: 402, badkey: 401 }, (query) => search({ query }), (body) => {
    expect(body).toMatchObject({ requestId: expect.any(String), error: expect.any(String), tag: expect.any(String) });
  });

  it('sim:*=empty gives zero results; sim:exa=malformed gives 200 with an unparsable body', async () => {
    const empty = await search({ query: 'q sim:*=empty' });
    expect(empty.statusCode).toBe(200);
    expect(empty.json().results).toEqual([]);
    const malformed = await search({ query: 'q sim:exa=malformed' });
    expect(malformed.statusCode).toBe(200);
    expect(() => JSON.parse(malformed.body) as unknown).toThrow();
  });
});
