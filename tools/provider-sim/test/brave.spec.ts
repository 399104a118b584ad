import { buildSimulator } from '../src/server';
import { simulatorForTests } from './simulator';

const KEY = 'sim-brave-key';

describe('provider-sim: Brave', () => {
  const sim = simulatorForTests();

  const get = (path: string, query: Record<string, string>, key: string | null = KEY) =>
    sim.app.inject({
      method: 'GET',
      url: `/brave/res/v1/${path}`,
      query,
      headers: key === null ? {} : { 'x-subscription-token': key },
    });

  it('answers web search at web.results with the requested count and Brave fields', async () => {
    const response = await get('web/search', { q: 'solar power', count: '7' });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.type).toBe('search');
    expect(body.web.results).toHaveLength(7);
    const first = body.web.results[0];
    expect(Object.keys(first)).toEqual(expect.arrayContaining(['title', 'url', 'description', 'age', 'page_age', 'extra_snippets']));
    expect(first.url).toMatch(/^https:\/\//);
    expect(first.page_age).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
    expect(first).not.toHaveProperty('score');
  });

  it('answers news search at top-level results, up to 50', async () => {
    const response = await get('news/search', { q: 'elections', count: '50' });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.type).toBe('news');
    expect(body.results).toHaveLength(50);
    expect(body).not.toHaveProperty('web');
  });

  it('gives the same results for the same query and different ones for another query or page', async () => {
    const a = (await get('web/search', { q: 'same query', count: '5' })).json();
    const b = (await get('web/search', { q: 'same query', count: '5' })).json();
    const c = (await get('web/search', { q: 'other query', count: '5' })).json();
    const page2 = (await get('web/search', { q: 'same query', count: '5', offset: '1' })).json();
    expect(b.web.results).toEqual(a.web.results);
    expect(c.web.results[0].url).not.toBe(a.web.results[0].url);
    expect(page2.web.results[0].url).not.toBe(a.web.results[0].url);
  });

  it.each([
    ['web/search', { q: 'x', count: '21' }, 'count'],
    ['news/search', { q: 'x', count: '51' }, 'count'],
    ['web/search', { q: 'x', count: '0' }, 'count'],
    ['web/search', { q: 'x', offset: '10' }, 'offset'],
    ['web/search', { q: 'x', freshness: 'yesterday' }, 'freshness'],
    ['web/search', { q: 'x', safesearch: 'none' }, 'safesearch'],
    ['web/search', {}, 'q'],
  ])('rejects bad parameters on %s %j with 422 VALIDATION', async (path, query, field) => {
    const response = await get(path, query);
    expect(response.statusCode).toBe(422);
    const body = response.json();
    expect(body.type).toBe('ErrorResponse');
    expect(body.error.code).toBe('VALIDATION');
    expect(body.error.meta.errors[0].loc).toEqual(['query', field]);
  });

  it.each([['a wrong key', 'nope'], ['no key', null]])('answers %s with 422 SUBSCRIPTION_TOKEN_INVALID', async (_what, key) => {
    const response = await get('web/search', { q: 'x' }, key);
    expect(response.statusCode).toBe(422);
    expect(response.json().error).toMatchObject({ status: 422, code: 'SUBSCRIPTION_TOKEN_INVALID' });
  });

  it.each([
    ['error500', 500, 'INTERNAL_ERROR'],
    ['error429', 429, 'RATE_LIMITED'],
    ['quota', 429, 'QUOTA_LIMITED'],
    ['badkey', 422, 'SUBSCRIPTION_TOKEN_INVALID'],
  ])('sim:brave=%s answers %i %s', async (behaviour, status, code) => {
    const response = await get('web/search', { q: `hello sim:brave=${behaviour}` });
    expect(response.statusCode).toBe(status);
    expect(response.json()).toMatchObject({ type: 'ErrorResponse', error: { status, code } });
  });

  it('sim:brave=empty answers 200 with zero results and strips the directive from the query', async () => {
    const response = await get('web/search', { q: 'hello sim:brave=empty' });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.web.results).toEqual([]);
    expect(body.query.original).toBe('hello');
  });

  it('sim:brave=malformed answers 200 with a body that is not JSON', async () => {
    const response = await get('web/search', { q: 'hello sim:brave=malformed' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('application/json');
    expect(() => JSON.parse(response.body) as unknown).toThrow();
  });

  it('a provider-specific directive wins over sim:*, and other providers\' directives are ignored', async () => {
    const specific = await get('web/search', { q: 'sim:*=error500 hello sim:brave=ok', count: '2' });
    expect(specific.statusCode).toBe(200);
    expect(specific.json().query.original).toBe('hello');
    const other = await get('web/search', { q: 'hello sim:exa=error500', count: '2' });
    expect(other.statusCode).toBe(200);
    const wildcard = await get('web/search', { q: 'hello sim:*=error500' });
    expect(wildcard.statusCode).toBe(500);
  });

  it('an unknown behaviour is a 422 VALIDATION naming the directive', async () => {
    const response = await get('web/search', { q: 'hello sim:brave=explode' });
    expect(response.statusCode).toBe(422);
    expect(response.json().error.meta.errors[0].msg).toContain('explode');
  });

  it('accepts a configured key instead of the default', async () => {
    const custom = buildSimulator({ braveKey: 'other-key' });
    try {
      const ok = await custom.inject({ method: 'GET', url: '/brave/res/v1/web/search?q=x', headers: { 'x-subscription-token': 'other-key' } });
      const old = await custom.inject({ method: 'GET', url: '/brave/res/v1/web/search?q=x', headers: { 'x-subscription-token': KEY } });
      expect(ok.statusCode).toBe(200);
      expect(old.statusCode).toBe(422);
    } finally {
      await custom.close();
    }
  });
});
