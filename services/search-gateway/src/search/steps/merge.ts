import { resultWithinFilters } from '@svc/contracts';
import type { SearchFilters } from '@svc/contracts';
import { resultIdentity } from '../../providers';
import type { NormalizedResult } from '../../providers';

/**
 * A fan-out's merge (docs/api.md, "Fan-out"; docs/decisions/0066): the ranked lists of the
 * models that answered, as one list. Pure: no I/O, no clock.
 *
 * 1. **The same page once.** Two results are the same page when their URLs have the same
 *    identity (resultIdentity: the one rule, in providers/page-url.ts). A model that returned a
 *    page twice counts it once, at its better position.
 * 2. **Reciprocal rank fusion.** A page's score is the sum, over the models that returned it, of
 *    1 / (k + its position in that model's list), k the setting FANOUT_RRF_K (60 by default).
 *    The terms are added smallest position first, so pages at the same positions in different
 *    models have exactly the same score.
 * 3. **The best-ranked source is kept**: its title, URL, snippet, date and contents (text,
 *    highlights). The best-ranked is the one at the smallest position; between equal positions,
 *    the model asked first.
 * 4. **Order**: score, highest first; then the best position, smallest first; then the model
 *    asked first; then the order in which the pages were first met (model by model, position
 *    by position).
 * 5. **The filters again**: a page outside the search's filters (resultWithinFilters: its URL's
 *    domain, the kept source's date) is dropped, whatever its provider returned.
 * 6. **`max_results`**: the first `maxResults` are kept.
 */
export interface RankedList {
  readonly model: string;
  /** In the model's own order: position i + 1 is results[i]. */
  readonly results: readonly NormalizedResult[];
}

/** A model that returned a page, and the page's position in that model's list. */
export interface MergedSource {
  readonly model: string;
  readonly position: number;
}

/** A merged result: the best-ranked source's fields, its place in the merged list, its fused score and every source. */
export interface MergedResult extends NormalizedResult {
  readonly score: number;
  readonly sources: readonly MergedSource[];
}

export interface Merged {
  readonly results: readonly MergedResult[];
  /** Results dropped because their page had been met already (in another model's list, or the same). */
  readonly duplicates: number;
  /** Pages dropped because they lie outside the filters. */
  readonly filtered: number;
}

export interface MergeOptions {
  /** The fusion's constant k (>= 1). */
  readonly k: number;
  readonly maxResults: number;
  /** The search's filters (canonical); undefined: none. */
  readonly filters?: SearchFilters | undefined;
}

interface Page {
  best: NormalizedResult;
  bestPosition: number;
  bestList: number;
  readonly met: number;
  readonly sources: { readonly model: string; readonly position: number; readonly list: number }[];
  score: number;
}

export function mergeRanked(lists: readonly RankedList[], options: MergeOptions): Merged {
  const pages = new Map<string, Page>();
  const all: Page[] = [];
  let duplicates = 0;
  lists.forEach((list, listIndex) => {
    const here = new Set<string>();
    list.results.forEach((result, i) => {
      const position = i + 1;
      const identity = resultIdentity(result.url);
      if (here.has(identity)) {
        duplicates += 1;
        return;
      }
      here.add(identity);
      const source = { model: list.model, position, list: listIndex };
      const page = pages.get(identity);
      if (page === undefined) {
        const fresh: Page = { best: result, bestPosition: position, bestList: listIndex, met: all.length, sources: [source], score: 0 };
        pages.set(identity, fresh);
        all.push(fresh);
        return;
      }
      duplicates += 1;
      page.sources.push(source);
      // Lists come in the order asked: an equal position never replaces the earlier model's.
      if (position < page.bestPosition) {
        page.best = result;
        page.bestPosition = position;
        page.bestList = listIndex;
      }
    });
  });
  const kept: Page[] = [];
  let filtered = 0;
  for (const page of all) {
    if (options.filters !== undefined && !resultWithinFilters(page.best.url, page.best.published_at, options.filters)) {
      filtered += 1;
      continue;
    }
    page.sources.sort((a, b) => a.position - b.position || a.list - b.list);
    page.score = fusedScore(page.sources, options.k);
    kept.push(page);
  }
  kept.sort(fusionOrder);
  const results = kept.slice(0, options.maxResults).map((page, i) => mergedResult(page, i + 1));
  return { results, duplicates, filtered };
}

/** Reciprocal rank fusion: the sum of 1 / (k + position), the smallest position first (`positions` sorted). */
export function fusedScore(sources: readonly { readonly position: number }[], k: number): number {
  let score = 0;
  for (const source of sources) score += 1 / (k + source.position);
  return score;
}

/** The merged list's order (see mergeRanked, 4). */
function fusionOrder(a: Page, b: Page): number {
  return b.score - a.score || a.bestPosition - b.bestPosition || a.bestList - b.bestList || a.met - b.met;
}

/** A page as the answer shows it: the best source's fields, its place, its score and its sources. */
function mergedResult(page: Page, position: number): MergedResult {
  const { best } = page;
  const result: { -readonly [K in keyof MergedResult]: MergedResult[K] } = {
    position, title: best.title, url: best.url, snippet: best.snippet, published_at: best.published_at, score: page.score, sources: [],
  };
  if (best.text !== undefined) result.text = best.text;
  if (best.highlights !== undefined) result.highlights = best.highlights;
  if (best.truncated !== undefined) result.truncated = best.truncated;
  result.sources = page.sources.map((source) => ({ model: source.model, position: source.position }));
  return result;
}
