import fc from 'fast-check';
import { filterInstantMs, hostnameMatches } from '@svc/contracts';
import type { SearchFilters } from '@svc/contracts';
import { resultIdentity } from '../../providers';
import type { NormalizedResult } from '../../providers';
import { mergeRanked } from './merge';
import type { RankedList } from './merge';

/**
 * The fan-out's merge (docs/api.md, "Fan-out"), checked against its definition for any set of
 * ranked lists: each page once, every page present unless max_results or a filter cut it, and
 * the order reciprocal rank fusion gives (computed here on its own, from the definition).
 */
const result = (url: string, position: number, published_at: string | null = null, title = `t ${url}`): NormalizedResult =>
  ({ position, title, url, snippet: `s ${url}`, published_at, score: null });

const HOSTS = ['example.org', 'docs.example.org', 'example.com', 'news.example.net'];
const DAYS = ['2024-03-01T10:00:00.000Z', '2024-09-15T00:00:00.000Z', '2025-02-10T23:59:59.000Z'];

/** A page of a small pool, in one of its spellings (so lists share pages, spelled differently). */
const spelledPage = fc.record({
  host: fc.constantFrom(...HOSTS),
  page: fc.integer({ min: 0, max: 12 }),
  spelling: fc.constantFrom('plain', 'utm', 'upper', 'slash', 'fragment', 'gclid'),
  published: fc.option(fc.constantFrom(...DAYS), { nil: null }),
}).map(({ host, page, spelling, published }) => {
  const base = `https://${host}/p${page}`;
  const url = spelling === 'utm' ? `${base}?utm_source=x` : spelling === 'upper' ? `https://${host.toUpperCase()}/p${page}`
    : spelling === 'slash' ? `${base}/` : spelling === 'fragment' ? `${base}#f` : spelling === 'gclid' ? `${base}?gclid=1` : base;
  return { url, published };
});

const lists = fc.array(fc.array(spelledPage, { maxLength: 15 }), { minLength: 1, maxLength: 5 }).map((all) => all.map((pages, i): RankedList => ({
  model: `m${i}`,
  results: pages.map((page, p) => result(page.url, p + 1, page.published)),
})));

const filters = fc.option(fc.record({
  include_domains: fc.option(fc.subarray(['example.org', 'example.com'], { minLength: 1 }), { nil: undefined }),
  exclude_domains: fc.option(fc.constant(['docs.example.org']), { nil: undefined }),
  published_after: fc.option(fc.constant('2024-06-01'), { nil: undefined }),
  published_before: fc.option(fc.constant('2025-01-31'), { nil: undefined }),
}).map((f) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)) as SearchFilters), { nil: undefined });

/** The definition, written apart from the code: per page its sources (best position per list), its fused score, its kept source. */
function expected(input: readonly RankedList[], k: number, maxResults: number, f: SearchFilters | undefined): { identities: string[]; scores: Map<string, number>; sources: Map<string, string[]> } {
  const pages = new Map<string, { positions: Map<number, number>; best: { list: number; position: number; result: NormalizedResult }; met: number }>();
  input.forEach((list, l) => list.results.forEach((r, i) => {
    const id = resultIdentity(r.url);
    let page = pages.get(id);
    if (page === undefined) {
      page = { positions: new Map(), best: { list: l, position: i + 1, result: r }, met: pages.size };
      pages.set(id, page);
    }
    if (!page.positions.has(l)) page.positions.set(l, i + 1);
    if (i + 1 < page.best.position) page.best = { list: l, position: i + 1, result: r };
  }));
  const inside = (r: NormalizedResult): boolean => {
    if (f === undefined) return true;
    const host = new URL(r.url).hostname.toLowerCase();
    if (f.include_domains !== undefined && !f.include_domains.some((d) => hostnameMatches(host, d))) return false;
    if (f.exclude_domains?.some((d) => hostnameMatches(host, d)) === true) return false;
    if (r.published_at !== null) {
      const at = Date.parse(r.published_at);
      if (f.published_after !== undefined && at < filterInstantMs(f.published_after, 'start')) return false;
      if (f.published_before !== undefined && at > filterInstantMs(f.published_before, 'end')) return false;
    }
    return true;
  };
  const scores = new Map<string, number>();
  const sources = new Map<string, string[]>();
  const kept = [...pages.entries()].filter(([, page]) => inside(page.best.result)).map(([id, page]) => {
    const positions = [...page.positions.values()].sort((a, b) => a - b);
    const score = positions.reduce((sum, p) => sum + 1 / (k + p), 0);
    scores.set(id, score);
    sources.set(id, [...page.positions.entries()].map(([l, p]) => `m${l}#${p}`).sort());
    return { id, score, page };
  });
  kept.sort((a, b) => b.score - a.score || a.page.best.position - b.page.best.position || a.page.best.list - b.page.best.list || a.page.met - b.page.met);
  return { identities: kept.slice(0, maxResults).map((p) => p.id), scores, sources };
}

describe('mergeRanked: reciprocal rank fusion of the fan-out\'s answers', () => {
  it('for any ranked lists: no page twice, every page unless max_results or a filter cut it, in the fusion\'s order', () => {
    fc.assert(fc.property(lists, fc.integer({ min: 1, max: 100 }), fc.integer({ min: 1, max: 30 }), filters, (input, k, maxResults, f) => {
      const merged = mergeRanked(input, { k, maxResults, filters: f });
      const identities = merged.results.map((r) => resultIdentity(r.url));
      // No duplicate page.
      expect(new Set(identities).size).toBe(identities.length);
      // Every page present unless cut, in the order the definition gives.
      const want = expected(input, k, maxResults, f);
      expect(identities).toEqual(want.identities);
      // Each result: its place, its fused score, every model that returned it (once, at its best position there).
      merged.results.forEach((r, i) => {
        const id = identities[i] as string;
        expect(r.position).toBe(i + 1);
        expect(r.score).toBeCloseTo(want.scores.get(id) ?? Number.NaN, 12);
        expect(r.sources.map((s) => `${s.model}#${s.position}`).sort()).toEqual(want.sources.get(id));
        if (i > 0) expect(r.score).toBeLessThanOrEqual((merged.results[i - 1] as { score: number }).score);
      });
      // Every result dropped as a duplicate is counted once.
      const total = input.reduce((sum, list) => sum + list.results.length, 0);
      const unique = new Set(input.flatMap((list) => list.results.map((r) => resultIdentity(r.url)))).size;
      expect(merged.duplicates).toBe(total - unique);
    }), { numRuns: 300 });
  });

  it('keeps the best-ranked source\'s title, URL and snippet; between equal positions the model asked first', () => {
    const merged = mergeRanked([
      { model: 'exa/fast', results: [result('https://A.example/x/', 1, null, 'exa first'), result('https://b.example/y', 2, null, 'exa b')] },
      { model: 'brave/web', results: [result('https://b.example/y?utm_source=brave', 1, null, 'brave b'), result('https://a.example/x', 2, null, 'brave a')] },
    ], { k: 60, maxResults: 10 });
    expect(merged.results.map((r) => [r.url, r.title, r.sources])).toEqual([
      ['https://A.example/x/', 'exa first', [{ model: 'exa/fast', position: 1 }, { model: 'brave/web', position: 2 }]],
      ['https://b.example/y?utm_source=brave', 'brave b', [{ model: 'brave/web', position: 1 }, { model: 'exa/fast', position: 2 }]],
    ]);
    expect(merged.duplicates).toBe(2);
  });

  it('a page two models agree on ranks above one a single model ranked first', () => {
    const merged = mergeRanked([
      { model: 'a', results: [result('https://only-a.example/', 1), result('https://both.example/', 2)] },
      { model: 'b', results: [result('https://only-b.example/', 1), result('https://both.example/', 2)] },
    ], { k: 60, maxResults: 10 });
    expect(merged.results.map((r) => r.url)).toEqual(['https://both.example/', 'https://only-a.example/', 'https://only-b.example/']);
    expect(merged.results[0]?.score).toBeCloseTo(2 / 62, 15);
  });

  it('carries the kept source\'s text and highlights', () => {
    const withText: NormalizedResult = { ...result('https://t.example/a', 1), text: 'page text', truncated: false };
    const merged = mergeRanked([{ model: 'exa/fast', results: [withText] }, { model: 'tavily/basic', results: [result('https://t.example/a', 3)] }], { k: 60, maxResults: 5 });
    expect(merged.results[0]).toEqual(expect.objectContaining({ text: 'page text', truncated: false }));
  });
});
