import type { SearchFilters } from '@svc/contracts';
import { filterDay } from './filter-params';
import { HttpSearchAdapter, postJson, resultsField } from './http-search-adapter';
import type { AdapterSettings, ProviderApi } from './http-search-adapter';
import { HttpExtractAdapter, pagesByUrl } from './http-extract-adapter';
import type { ExtractApi } from './http-extract-adapter';
import { genericFailure, isRecord } from './provider-http';
import { plainText } from './result-fields';
import { failure } from './search-provider';
import type { ProviderFailure } from './search-provider';

export const TAVILY_PRODUCTION_BASE_URL = 'https://api.tavily.com';

export function classifyTavilyError(status: number): ProviderFailure {
  if (status === 401) return failure('bad_key', 'provider rejected the key (401)', status);
  if (status === 432 || status === 433) return failure('quota', `provider usage limit exceeded (${status})`, status);
  return genericFailure(status);
}

/** Tavily's search depths, as its official client (@tavily/core 0.7.13) types them. */
const TAVILY_DEPTHS = ['basic', 'advanced', 'fast', 'ultra-fast'];

/** The filters as Tavily's own fields (docs/providers.md, "Filters"); its dates are whole days, rounded inward. */
export function tavilyFilterFields(filters: SearchFilters): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  if (filters.include_domains !== undefined) fields.include_domains = filters.include_domains;
  if (filters.exclude_domains !== undefined) fields.exclude_domains = filters.exclude_domains;
  if (filters.published_after !== undefined) fields.start_date = filterDay(filters.published_after, 'start');
  if (filters.published_before !== undefined) fields.end_date = filterDay(filters.published_before, 'end');
  return fields;
}

const TAVILY_API: ProviderApi = {
  provider: 'tavily',
  productionBaseUrl: TAVILY_PRODUCTION_BASE_URL,
  upstreamVariants: TAVILY_DEPTHS,
  request: (search, cap) => postJson('/search', { authorization: `Bearer ${search.apiKey}` }, {
    query: search.query,
    search_depth: search.model.upstreamVariant,
    max_results: cap,
    ...(search.filters === undefined ? {} : tavilyFilterFields(search.filters)),
    // Contents `text`: the page's text (Tavily's raw content, at no extra credit), cut here at the cap.
    ...(search.contents === 'text' ? RAW_TEXT : NO_FIELDS),
  }),
  classify: classifyTavilyError,
  itemsOf: resultsField,
  fields: {
    snippet: (item) => plainText(item.content), publishedAt: 'published_date', score: 'score',
    text: (item) => (typeof item.raw_content === 'string' ? item.raw_content : null),
  },
};

const RAW_TEXT = Object.freeze({ include_raw_content: 'text' });
/** No field added: one frozen object, so a search without contents allocates nothing for them. */
const NO_FIELDS = Object.freeze({});

/** Tavily: `POST /search` with `search_depth` = the model's upstream variant. */
export class TavilyAdapter extends HttpSearchAdapter {
  constructor(settings: AdapterSettings = {}) {
    super(TAVILY_API, settings);
  }
}

/** What Tavily's /extract writes for a page it could not fetch is its own text; the platform says this. */
const TAVILY_FETCH_FAILED = 'page could not be fetched';
/** Tavily takes a timeout of 1 to 60 seconds for the extraction. */
const TAVILY_MAX_TIMEOUT_S = 60;

/**
 * Tavily's `POST /extract` (@tavily/core extract: the options in snake_case): `extract_depth`
 * the model's, `format` as asked, a `query` to rank the page's chunks by, and Tavily's own
 * timeout within the call's (whole seconds, 1 to 60). Tavily has no freshness control. A URL
 * it cannot fetch is in its `failed_results`, not a failure of the call.
 */
const TAVILY_EXTRACT_API: ExtractApi = {
  provider: 'tavily',
  productionBaseUrl: TAVILY_PRODUCTION_BASE_URL,
  upstreamVariants: ['basic', 'advanced'],
  request: (extract) => postJson('/extract', { authorization: `Bearer ${extract.apiKey}` }, {
    urls: extract.urls,
    extract_depth: extract.model.upstreamVariant,
    format: extract.format,
    timeout: Math.max(1, Math.min(TAVILY_MAX_TIMEOUT_S, Math.floor(extract.timeoutMs / 1_000))),
    ...(extract.query === null ? {} : { query: extract.query }),
  }),
  classify: classifyTavilyError,
  read(body, extract) {
    if (!isRecord(body) || !Array.isArray(body.results)) return null;
    const failed = new Set<string>();
    if (Array.isArray(body.failed_results)) {
      for (const item of body.failed_results) if (isRecord(item) && typeof item.url === 'string') failed.add(item.url);
    }
    return pagesByUrl(extract, body.results, (item) => ({ url: item.url, title: item.title, text: item.raw_content, published: undefined }), (url) => (failed.has(url) ? TAVILY_FETCH_FAILED : undefined));
  },
};

/** Tavily extract: `POST /extract` with `extract_depth` = the model's upstream variant. */
export class TavilyExtractAdapter extends HttpExtractAdapter {
  constructor(settings: AdapterSettings = {}) {
    super(TAVILY_EXTRACT_API, settings);
  }
}
