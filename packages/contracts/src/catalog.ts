import type { Micros } from '@svc/money';
import type { FilterName } from './filters';

export const PROVIDERS = ['brave', 'exa', 'tavily'] as const;
export type Provider = (typeof PROVIDERS)[number];

export function isProvider(value: unknown): value is Provider {
  return typeof value === 'string' && (PROVIDERS as readonly string[]).includes(value);
}

export interface ModelSpec {
  readonly id: string;
  readonly provider: Provider;
  readonly variant: string;
  readonly description: string;
  /** Most results the upstream returns for this model; larger requests are served with this. */
  readonly maxResults: number;
  readonly baseMicros: Micros;
  /** Results covered by the base price; null when the provider does not price by count. */
  readonly includedResults: number | null;
  readonly perResultMicros: Micros;
  /** What the adapter sends upstream: Brave endpoint, Exa `type`, Tavily `search_depth`. */
  readonly upstreamVariant: string;
  /** The search filters this model honours (docs/providers.md, "Filters"); any other is refused, never dropped. */
  readonly supportedFilters: readonly FilterName[];
}

/** Brave: country, search_lang, freshness (a date range) and safesearch; no domain filter. */
const BRAVE_FILTERS: readonly FilterName[] = Object.freeze(['country', 'language', 'published_after', 'published_before', 'safesearch']);
/** Exa: includeDomains, excludeDomains, userLocation, start/endPublishedDate; no language or safe-search level. */
const EXA_FILTERS: readonly FilterName[] = Object.freeze(['include_domains', 'exclude_domains', 'country', 'published_after', 'published_before']);
/** Tavily: include/exclude_domains, start/end_date; its country takes names and only boosts, so it is not offered. */
const TAVILY_FILTERS: readonly FilterName[] = Object.freeze(['include_domains', 'exclude_domains', 'published_after', 'published_before']);

/** The one catalog: ids, prices and result caps (docs/providers.md). */
export const CATALOG: readonly ModelSpec[] = Object.freeze([
  {
    id: 'brave/web', provider: 'brave', variant: 'web', upstreamVariant: 'web',
    description: 'Brave Search web results', maxResults: 20,
    baseMicros: 6_000, includedResults: null, perResultMicros: 0, supportedFilters: BRAVE_FILTERS,
  },
  {
    id: 'brave/news', provider: 'brave', variant: 'news', upstreamVariant: 'news',
    description: 'Brave Search news results', maxResults: 50,
    baseMicros: 6_000, includedResults: null, perResultMicros: 0, supportedFilters: BRAVE_FILTERS,
  },
  {
    id: 'exa/auto', provider: 'exa', variant: 'auto', upstreamVariant: 'auto',
    description: 'Exa search, automatic mode', maxResults: 100,
    baseMicros: 9_000, includedResults: 10, perResultMicros: 1_250, supportedFilters: EXA_FILTERS,
  },
  {
    id: 'exa/fast', provider: 'exa', variant: 'fast', upstreamVariant: 'fast',
    description: 'Exa search, fast mode (for agents)', maxResults: 100,
    baseMicros: 9_000, includedResults: 10, perResultMicros: 1_250, supportedFilters: EXA_FILTERS,
  },
  {
    id: 'exa/instant', provider: 'exa', variant: 'instant', upstreamVariant: 'instant',
    description: 'Exa search, instant mode (lowest latency, for real-time use)', maxResults: 100,
    baseMicros: 9_000, includedResults: 10, perResultMicros: 1_250, supportedFilters: EXA_FILTERS,
  },
  {
    id: 'exa/deep', provider: 'exa', variant: 'deep', upstreamVariant: 'deep',
    description: 'Exa search, deep mode', maxResults: 100,
    baseMicros: 15_000, includedResults: 10, perResultMicros: 1_250, supportedFilters: EXA_FILTERS,
  },
  {
    id: 'tavily/basic', provider: 'tavily', variant: 'basic', upstreamVariant: 'basic',
    description: 'Tavily search, basic depth', maxResults: 20,
    baseMicros: 10_000, includedResults: null, perResultMicros: 0, supportedFilters: TAVILY_FILTERS,
  },
  {
    id: 'tavily/advanced', provider: 'tavily', variant: 'advanced', upstreamVariant: 'advanced',
    description: 'Tavily search, advanced depth', maxResults: 20,
    baseMicros: 20_000, includedResults: null, perResultMicros: 0, supportedFilters: TAVILY_FILTERS,
  },
  {
    id: 'tavily/fast', provider: 'tavily', variant: 'fast', upstreamVariant: 'fast',
    description: 'Tavily search, fast depth (lower latency)', maxResults: 20,
    baseMicros: 10_000, includedResults: null, perResultMicros: 0, supportedFilters: TAVILY_FILTERS,
  },
  {
    id: 'tavily/ultra-fast', provider: 'tavily', variant: 'ultra-fast', upstreamVariant: 'ultra-fast',
    description: 'Tavily search, ultra-fast depth (lowest latency, one summary per page)', maxResults: 20,
    baseMicros: 10_000, includedResults: null, perResultMicros: 0, supportedFilters: TAVILY_FILTERS,
  },
]);

const BY_ID = new Map(CATALOG.map((model) => [model.id, model]));

export function findModel(id: string): ModelSpec | undefined {
  return BY_ID.get(id);
}

/** The number of results asked of the upstream for a request of `maxResults`. */
export function resultCap(model: ModelSpec, maxResults: number): number {
  return Math.min(maxResults, model.maxResults);
}

/** The price of an answer that returned `results` results. */
export function costMicros(model: ModelSpec, results: number): Micros {
  if (model.includedResults === null) return model.baseMicros;
  return model.baseMicros + Math.max(0, results - model.includedResults) * model.perResultMicros;
}

/** The most a search of `maxResults` on this model can cost: what is reserved before the call. */
export function maxCostMicros(model: ModelSpec, maxResults: number): Micros {
  return costMicros(model, resultCap(model, maxResults));
}

/**
 * What a BYOK attempt is charged for a price of `priceMicros`: `feePercent` % of it, rounded
 * to the nearest micro-USD, halves up (5 % of 5,000 is 250; 5 % of 1,250 is 62.5 → 63).
 * Integer arithmetic only. The same function gives the reservation (of the most a search can
 * cost), the charge (of what it cost) and a timed-out attempt's kept base.
 */
export function byokFeeMicros(priceMicros: Micros, feePercent: number): Micros {
  return Math.floor((priceMicros * feePercent + 50) / 100);
}

/** CACHE_PRICE_PERCENT's default: a cached answer costs this percentage of the model's base price. */
export const DEFAULT_CACHE_PRICE_PERCENT = 10;

/**
 * What an answer served from the result cache (a hit, or a search that joined an identical
 * one in flight) costs on this model: `percent` % of its base price, rounded to the nearest
 * micro-USD, halves up (10 % of 6,000 is 600; 10 % of 5,005 is 500.5 → 501). Integer
 * arithmetic only.
 */
export function cachePriceMicros(model: ModelSpec, percent: number): Micros {
  return Math.floor((model.baseMicros * percent + 50) / 100);
}
