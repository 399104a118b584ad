import type { SearchFilters } from '@svc/contracts';
import { filterDay } from './filter-params';
import { HttpSearchAdapter, postJson, resultsField } from './http-search-adapter';
import type { AdapterSettings, ProviderApi } from './http-search-adapter';
import { genericFailure } from './provider-http';
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
  }),
  classify: classifyTavilyError,
  itemsOf: resultsField,
  fields: { snippet: (item) => plainText(item.content), publishedAt: 'published_date', score: 'score' },
};

/** Tavily: `POST /search` with `search_depth` = the model's upstream variant. */
export class TavilyAdapter extends HttpSearchAdapter {
  constructor(settings: AdapterSettings = {}) {
    super(TAVILY_API, settings);
  }
}
