import type { SearchFilters } from '@svc/contracts';
import { filterDay } from './filter-params';
import { HttpSearchAdapter } from './http-search-adapter';
import type { AdapterSettings, ProviderApi } from './http-search-adapter';
import { genericFailure, isRecord } from './provider-http';
import { plainText } from './result-fields';
import { failure } from './search-provider';
import type { ProviderFailure } from './search-provider';

export const BRAVE_PRODUCTION_BASE_URL = 'https://api.search.brave.com/res/v1';

/** Brave's `error.code`, from either `{"error": {...}}` or `{"errors": [{...}]}`. */
export function braveErrorCode(body: unknown): string | undefined {
  if (!isRecord(body)) return undefined;
  const candidates = [body.error, ...(Array.isArray(body.errors) ? body.errors : [])];
  for (const candidate of candidates) {
    if (isRecord(candidate) && typeof candidate.code === 'string') return candidate.code;
  }
  return undefined;
}

/** Brave branches on error.code: a bad key is 422, and 429 is either rate or quota. */
export function classifyBraveError(status: number, body: unknown): ProviderFailure {
  const code = braveErrorCode(body);
  if (code === 'SUBSCRIPTION_TOKEN_INVALID' || code === 'SUBSCRIPTION_NOT_FOUND') {
    return failure('bad_key', `provider rejected the key (${status})`, status);
  }
  if (code === 'QUOTA_LIMITED') return failure('quota', `provider quota exhausted (${status})`, status);
  if (code === 'RATE_LIMITED') return failure('rate_limited', `provider rate limited the request (${status})`, status);
  return genericFailure(status);
}

/** Web results sit at `web.results` (no `web` at all when nothing matched); news at `results`. */
function resultsOf(variant: string, body: Record<string, unknown>): unknown {
  if (variant === 'news') return body.results;
  if (isRecord(body.web)) return body.web.results;
  return body.type === 'search' ? [] : undefined;
}

/** ISO 639-1 codes that Brave's search_lang spells its own way. */
const BRAVE_LANGUAGES: Readonly<Record<string, string>> = { ja: 'jp', zh: 'zh-hans', pt: 'pt-pt' };

/**
 * The filters as Brave's own query parameters (docs/providers.md, "Filters"): the dates as a
 * `freshness` range of whole days rounded inward (an open end is 1970-01-01 or today).
 */
export function braveFilterParams(filters: SearchFilters, params: URLSearchParams, nowMs: number = Date.now()): void {
  if (filters.country !== undefined) params.set('country', filters.country);
  if (filters.language !== undefined) params.set('search_lang', BRAVE_LANGUAGES[filters.language] ?? filters.language);
  if (filters.safesearch !== undefined) params.set('safesearch', filters.safesearch);
  if (filters.published_after !== undefined || filters.published_before !== undefined) {
    const from = filters.published_after === undefined ? '1970-01-01' : filterDay(filters.published_after, 'start');
    const to = filters.published_before === undefined ? new Date(nowMs).toISOString().slice(0, 10) : filterDay(filters.published_before, 'end');
    params.set('freshness', `${from}to${to}`);
  }
}

const BRAVE_API: ProviderApi = {
  provider: 'brave',
  productionBaseUrl: BRAVE_PRODUCTION_BASE_URL,
  upstreamVariants: ['web', 'news'],
  request(search, cap) {
    const params = new URLSearchParams({ q: search.query, count: String(cap) });
    if (search.filters !== undefined) braveFilterParams(search.filters, params);
    return {
      path: `/${search.model.upstreamVariant}/search?${params.toString()}`,
      method: 'GET',
      headers: { accept: 'application/json', 'x-subscription-token': search.apiKey },
    };
  },
  classify: classifyBraveError,
  itemsOf: (body, model) => (isRecord(body) ? resultsOf(model.upstreamVariant, body) : undefined),
  fields: { snippet: (item) => plainText(item.description), publishedAt: 'page_age', score: null },
};

/** Brave Search API: `GET /web/search` or `/news/search` by the model's upstream variant. */
export class BraveAdapter extends HttpSearchAdapter {
  constructor(settings: AdapterSettings = {}) {
    super(BRAVE_API, settings);
  }
}
