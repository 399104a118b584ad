import type { Micros } from '@svc/money';
import type { FilterName } from './filters';

export const PROVIDERS = ['brave', 'exa', 'tavily'] as const;
export type Provider = (typeof PROVIDERS)[number];

export function isProvider(value: unknown): value is Provider {
  return typeof value === 'string' && (PROVIDERS as readonly string[]).includes(value);
}

/**
 * What a model does: a search (POST /v1/search), an extract (POST /v1/extract, page content
 * for known URLs) or a research run (POST /v1/research; its models are in research.ts).
 * GET /v1/models and /v1/credits/pricing list every model with its kind.
 */
export const MODEL_KINDS = ['search', 'extract', 'research'] as const;
export type ModelKind = (typeof MODEL_KINDS)[number];

/**
 * What a search result may carry besides its snippet (POST /v1/search `contents`): nothing
 * more (`none`), the page's text (`text`), or its most relevant passages (`highlights`). Each
 * search model lists the ones it honours (`supportedContents`); a model that cannot return what
 * is asked is skipped, never answered with a snippet instead.
 */
export const SEARCH_CONTENTS = ['none', 'text', 'highlights'] as const;
export type SearchContents = (typeof SEARCH_CONTENTS)[number];

/**
 * How POST /v1/search uses the models it names (`strategy`): `fallback` (the default) tries them
 * in order and answers with the first that answers; `fanout` calls every one that passes its
 * checks at the same time and answers with their results merged (reciprocal rank fusion, URLs
 * de-duplicated), each model charged for what it returned.
 */
export const SEARCH_STRATEGIES = ['fallback', 'fanout'] as const;
export type SearchStrategy = (typeof SEARCH_STRATEGIES)[number];

export interface ModelSpec {
  readonly kind: 'search';
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
  /** The `contents` this model can return with its results (always `none`); any other is refused, never dropped. */
  readonly supportedContents: readonly SearchContents[];
  /**
   * What a search that asks for contents (`text` or `highlights`) costs on top of its price,
   * per search; 0 where the provider charges nothing extra for them (docs/providers.md).
   */
  readonly contentsMicros: Micros;
}

/** Brave: country, search_lang, freshness (a date range) and safesearch; no domain filter. */
const BRAVE_FILTERS: readonly FilterName[] = Object.freeze(['country', 'language', 'published_after', 'published_before', 'safesearch']);
/** Exa: includeDomains, excludeDomains, userLocation, start/endPublishedDate; no language or safe-search level. */
const EXA_FILTERS: readonly FilterName[] = Object.freeze(['include_domains', 'exclude_domains', 'country', 'published_after', 'published_before']);
/** Tavily: include/exclude_domains, start/end_date; its country takes names and only boosts, so it is not offered. */
const TAVILY_FILTERS: readonly FilterName[] = Object.freeze(['include_domains', 'exclude_domains', 'published_after', 'published_before']);

/** Brave's search answers carry snippets only (its `extra_snippets` need a plan of their own): no contents. */
const BRAVE_CONTENTS: readonly SearchContents[] = Object.freeze(['none']);
/** Exa's `/search` returns `text` and `highlights` on request, included in its price for the first 10 results. */
const EXA_CONTENTS: readonly SearchContents[] = Object.freeze(['none', 'text', 'highlights']);
/** Tavily's `/search` returns the page text (`include_raw_content`) at no extra credit; it has no highlights of its own. */
const TAVILY_CONTENTS: readonly SearchContents[] = Object.freeze(['none', 'text']);

/** The search models: ids, prices and result caps (docs/providers.md). MODELS lists every kind. */
export const CATALOG: readonly ModelSpec[] = Object.freeze([
  {
    kind: 'search', id: 'brave/web', provider: 'brave', variant: 'web', upstreamVariant: 'web',
    description: 'Brave Search web results', maxResults: 20,
    baseMicros: 6_000, includedResults: null, perResultMicros: 0, supportedFilters: BRAVE_FILTERS, supportedContents: BRAVE_CONTENTS, contentsMicros: 0,
  },
  {
    kind: 'search', id: 'brave/news', provider: 'brave', variant: 'news', upstreamVariant: 'news',
    description: 'Brave Search news results', maxResults: 50,
    baseMicros: 6_000, includedResults: null, perResultMicros: 0, supportedFilters: BRAVE_FILTERS, supportedContents: BRAVE_CONTENTS, contentsMicros: 0,
  },
  {
    kind: 'search', id: 'exa/auto', provider: 'exa', variant: 'auto', upstreamVariant: 'auto',
    description: 'Exa search, automatic mode', maxResults: 100,
    baseMicros: 9_000, includedResults: 10, perResultMicros: 1_250, supportedFilters: EXA_FILTERS, supportedContents: EXA_CONTENTS, contentsMicros: 0,
  },
  {
    kind: 'search', id: 'exa/fast', provider: 'exa', variant: 'fast', upstreamVariant: 'fast',
    description: 'Exa search, fast mode (for agents)', maxResults: 100,
    baseMicros: 9_000, includedResults: 10, perResultMicros: 1_250, supportedFilters: EXA_FILTERS, supportedContents: EXA_CONTENTS, contentsMicros: 0,
  },
  {
    kind: 'search', id: 'exa/instant', provider: 'exa', variant: 'instant', upstreamVariant: 'instant',
    description: 'Exa search, instant mode (lowest latency, for real-time use)', maxResults: 100,
    baseMicros: 9_000, includedResults: 10, perResultMicros: 1_250, supportedFilters: EXA_FILTERS, supportedContents: EXA_CONTENTS, contentsMicros: 0,
  },
  {
    kind: 'search', id: 'exa/deep', provider: 'exa', variant: 'deep', upstreamVariant: 'deep',
    description: 'Exa search, deep mode', maxResults: 100,
    baseMicros: 15_000, includedResults: 10, perResultMicros: 1_250, supportedFilters: EXA_FILTERS, supportedContents: EXA_CONTENTS, contentsMicros: 0,
  },
  {
    kind: 'search', id: 'tavily/basic', provider: 'tavily', variant: 'basic', upstreamVariant: 'basic',
    description: 'Tavily search, basic depth', maxResults: 20,
    baseMicros: 10_000, includedResults: null, perResultMicros: 0, supportedFilters: TAVILY_FILTERS, supportedContents: TAVILY_CONTENTS, contentsMicros: 0,
  },
  {
    kind: 'search', id: 'tavily/advanced', provider: 'tavily', variant: 'advanced', upstreamVariant: 'advanced',
    description: 'Tavily search, advanced depth', maxResults: 20,
    baseMicros: 20_000, includedResults: null, perResultMicros: 0, supportedFilters: TAVILY_FILTERS, supportedContents: TAVILY_CONTENTS, contentsMicros: 0,
  },
  {
    kind: 'search', id: 'tavily/fast', provider: 'tavily', variant: 'fast', upstreamVariant: 'fast',
    description: 'Tavily search, fast depth (lower latency)', maxResults: 20,
    baseMicros: 10_000, includedResults: null, perResultMicros: 0, supportedFilters: TAVILY_FILTERS, supportedContents: TAVILY_CONTENTS, contentsMicros: 0,
  },
  {
    kind: 'search', id: 'tavily/ultra-fast', provider: 'tavily', variant: 'ultra-fast', upstreamVariant: 'ultra-fast',
    description: 'Tavily search, ultra-fast depth (lowest latency, one summary per page)', maxResults: 20,
    baseMicros: 10_000, includedResults: null, perResultMicros: 0, supportedFilters: TAVILY_FILTERS, supportedContents: TAVILY_CONTENTS, contentsMicros: 0,
  },
]);

const BY_ID = new Map(CATALOG.map((model) => [model.id, model]));

/** The search model of this id (POST /v1/search); undefined for an unknown id or a model of another kind. */
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

// ---------------------------------------------------------------------------------------
// Extract models: page content for known URLs (POST /v1/extract)

/** The text formats of POST /v1/extract (`format`): plain text, or markdown. */
export const EXTRACT_FORMATS = ['text', 'markdown'] as const;
export type ExtractFormat = (typeof EXTRACT_FORMATS)[number];

/**
 * The optional fields of POST /v1/extract that a model may not be able to honour (besides the
 * format): `max_age_s` (a bound on the age of provider-cached content: freshness control) and
 * `query` (the page's text ranked or trimmed by relevance to it). A model that cannot honour
 * one sent is skipped with the reason, never called with it dropped.
 */
export const EXTRACT_OPTIONS = ['max_age_s', 'query'] as const;
export type ExtractOption = (typeof EXTRACT_OPTIONS)[number];

export interface ExtractModelSpec {
  readonly kind: 'extract';
  readonly id: string;
  readonly provider: Provider;
  readonly variant: string;
  readonly description: string;
  /** What the adapter sends upstream: Exa `contents` (its endpoint), Tavily `extract_depth`. */
  readonly upstreamVariant: string;
  /** Most URLs one call takes (LIMITS.extractUrls.max). */
  readonly maxUrls: number;
  /** The price of one URL that came back. */
  readonly perUrlMicros: Micros;
  /**
   * URLs are charged in whole blocks of this many per model call (1: each URL on its own).
   * Tavily bills a credit per 5 successful URLs of a request, so a call that returns 1 to 5
   * URLs costs it one credit: the platform never charges a call less than its provider does.
   */
  readonly urlBlock: number;
  readonly supportedFormats: readonly ExtractFormat[];
  readonly supportedOptions: readonly ExtractOption[];
}

/** The extract models (docs/providers.md, "Extract"): the prices stand on the providers' published pricing. */
export const EXTRACT_CATALOG: readonly ExtractModelSpec[] = Object.freeze([
  {
    kind: 'extract', id: 'exa/contents', provider: 'exa', variant: 'contents', upstreamVariant: 'contents',
    description: 'Exa contents: the text of known pages, from Exa\'s cache or crawled live', maxUrls: 20,
    perUrlMicros: 1_250, urlBlock: 1, supportedFormats: ['text'], supportedOptions: ['max_age_s', 'query'],
  },
  {
    kind: 'extract', id: 'tavily/extract', provider: 'tavily', variant: 'extract', upstreamVariant: 'basic',
    description: 'Tavily extract, basic depth', maxUrls: 20,
    perUrlMicros: 2_000, urlBlock: 5, supportedFormats: ['text', 'markdown'], supportedOptions: ['query'],
  },
  {
    kind: 'extract', id: 'tavily/extract-advanced', provider: 'tavily', variant: 'extract-advanced', upstreamVariant: 'advanced',
    description: 'Tavily extract, advanced depth (tables, embedded and script-rendered content)', maxUrls: 20,
    perUrlMicros: 4_000, urlBlock: 5, supportedFormats: ['text', 'markdown'], supportedOptions: ['query'],
  },
] satisfies ExtractModelSpec[]);

const EXTRACT_BY_ID = new Map(EXTRACT_CATALOG.map((model) => [model.id, model]));

/** The extract model of this id (POST /v1/extract); undefined for an unknown id or a model of another kind. */
export function findExtractModel(id: string): ExtractModelSpec | undefined {
  return EXTRACT_BY_ID.get(id);
}

/** A model of any kind. */
export type CatalogModel = ModelSpec | ExtractModelSpec;

/** Every model, search models first, as GET /v1/models and /v1/credits/pricing list them. */
export const MODELS: readonly CatalogModel[] = Object.freeze([...CATALOG, ...EXTRACT_CATALOG]);

/** Whether `id` names a model of any kind (a key's `allowed_models`, CACHE_TTL_BY_MODEL). */
export function isModelId(id: string): boolean {
  return BY_ID.has(id) || EXTRACT_BY_ID.has(id);
}

/**
 * What one extract call on `model` costs for `urls` URLs that came back: whole blocks of
 * `urlBlock` URLs at `perUrlMicros` each (0 URLs: nothing). The same function gives the most
 * a call can cost (every URL it is sent), which is what it reserves.
 */
export function extractCostMicros(model: ExtractModelSpec, urls: number): Micros {
  if (urls <= 0) return 0;
  return Math.ceil(urls / model.urlBlock) * model.urlBlock * model.perUrlMicros;
}

/**
 * What one URL served from the result cache costs on an extract model: `percent` % of its
 * price per URL, rounded to the nearest micro-USD, halves up (no block: no provider call).
 */
export function extractCachePriceMicros(model: ExtractModelSpec, percent: number): Micros {
  return Math.floor((model.perUrlMicros * percent + 50) / 100);
}
