import { providerSpelling, resultsFor, SHARED_PERCENT } from '../src/results';
import { simulatorForTests } from './simulator';

/**
 * The providers' answers overlap (a fan-out's merge is tested against them): a share of each
 * answer comes from one pool of pages per query, each provider spelling a shared page's URL its
 * own way; every page keeps its own text whichever provider returns it.
 */
describe('provider-sim: answers that overlap across providers', () => {
  const sim = simulatorForTests();
  const QUERY = 'solar power storage';

  /** The page each result stands for (lower-cased host, no query, fragment or trailing slash): what the three spellings share. */
  const pageOf = (url: string): string => {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.hostname}${parsed.pathname.replace(/\/+$/, '')}`;
  };

  it('about SHARED_PERCENT of the ranks are shared pages, taken from the pool in its order by every seed', () => {
    const seeds = ['brave/web', 'exa/fast', 'exa/deep', 'tavily/basic'];
    let shared = 0;
    let total = 0;
    for (const seed of seeds) {
      for (let q = 0; q < 25; q++) {
        const results = resultsFor(seed, `query ${q}`, 20);
        total += results.length;
        const pooled = results.filter((r) => r.url !== r.pageUrl);
        shared += pooled.length;
        // The pool's pages come in the pool's order: its k-th shared result is the pool's k-th page for every seed.
        const first = pooled[0];
        if (first !== undefined) expect(first.pageUrl).toBe(resultsFor('tavily/advanced', `query ${q}`, 40).find((r) => r.url !== r.pageUrl)?.pageUrl);
      }
    }
    expect(shared / total).toBeGreaterThan((SHARED_PERCENT - 10) / 100);
    expect(shared / total).toBeLessThan((SHARED_PERCENT + 10) / 100);
  });

  it('the same page comes back from Brave, Exa and Tavily with a different tracking parameter or case, and the same text', async () => {
    const brave = (await sim.app.inject({ method: 'GET', url: '/brave/res/v1/web/search', query: { q: QUERY, count: '20' }, headers: { 'x-subscription-token': 'sim-brave-key' } })).json();
    const exa = (await sim.app.inject({ method: 'POST', url: '/exa/search', payload: { query: QUERY, numResults: 20, type: 'fast', contents: { text: true } }, headers: { 'x-api-key': 'sim-exa-key' } })).json();
    const tavily = (await sim.app.inject({ method: 'POST', url: '/tavily/search', payload: { query: QUERY, max_results: 20, include_raw_content: 'text' }, headers: { authorization: 'Bearer tvly-sim-key' } })).json();
    const braveUrls: string[] = brave.web.results.map((r: { url: string }) => r.url);
    const exaResults: { url: string; text: string }[] = exa.results;
    const tavilyResults: { url: string; raw_content: string }[] = tavily.results;
    const inAll = braveUrls.map(pageOf).filter((page) => exaResults.some((r) => pageOf(r.url) === page) && tavilyResults.some((r) => pageOf(r.url) === page));
    expect(inAll.length).toBeGreaterThan(0);
    for (const page of inAll) {
      const fromBrave = braveUrls.find((url) => pageOf(url) === page) ?? '';
      const fromExa = exaResults.find((r) => pageOf(r.url) === page);
      const fromTavily = tavilyResults.find((r) => pageOf(r.url) === page);
      expect(fromBrave).toBe(`${page}?utm_source=brave&utm_medium=search`);
      expect(fromExa?.url).toBe(providerSpelling('exa', page));
      expect(fromExa?.url).not.toBe(page);
      expect(fromTavily?.url).toBe(`${page}?gclid=sim-tavily#overview`);
      // One page, one text, whoever returns it.
      expect(fromTavily?.raw_content.startsWith((fromExa?.text ?? '').slice(0, 200))).toBe(true);
    }
  });

  it('`unfiltered` answers as a provider that ignores the domain and date filters', async () => {
    const body = (directive: string) => ({ query: `${QUERY}${directive}`, numResults: 20, type: 'fast', includeDomains: ['example.org'] });
    const honoured = (await sim.app.inject({ method: 'POST', url: '/exa/search', payload: body(''), headers: { 'x-api-key': 'sim-exa-key' } })).json();
    const ignored = (await sim.app.inject({ method: 'POST', url: '/exa/search', payload: body(' sim:exa=unfiltered'), headers: { 'x-api-key': 'sim-exa-key' } })).json();
    const inside = (url: string): boolean => /(^|\.)example\.org$/.test(new URL(url).hostname);
    expect(honoured.results.every((r: { url: string }) => inside(r.url))).toBe(true);
    expect(ignored.results.some((r: { url: string }) => !inside(r.url))).toBe(true);
  });
});
