import { resultCap } from '@svc/contracts';
import type { SearchFilters } from '@svc/contracts';
import { assertHonoured, filterDay } from './filter-params';
import { genericFailure, isRecord, isUsableKey, parseJson, ProviderHttp } from './provider-http';
import type { ProviderHttpOptions } from './provider-http';
import { isHttpUrl, plainText, toPublishedAt, toScore } from './result-fields';
import { failure } from './search-provider';
import type { NormalizedResult, ProviderFailure, ProviderOutcome, ProviderSearchRequest, SearchProvider } from './search-provider';

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

function normalize(items: unknown[], cap: number): NormalizedResult[] {
  const results: NormalizedResult[] = [];
  for (const item of items) {
    if (results.length >= cap) break;
    if (!isRecord(item) || !isHttpUrl(item.url)) continue;
    results.push({
      position: results.length + 1,
      title: plainText(item.title),
      url: item.url,
      snippet: plainText(item.content),
      published_at: toPublishedAt(item.published_date),
      score: toScore(item.score),
    });
  }
  return results;
}

/** Tavily: `POST /search` with `search_depth` = the model's upstream variant. */
export class TavilyAdapter implements SearchProvider {
  readonly provider = 'tavily' as const;
  private readonly http: ProviderHttp;

  constructor(settings: { baseUrl?: string; http?: ProviderHttpOptions } = {}) {
    this.http = new ProviderHttp(settings.baseUrl ?? TAVILY_PRODUCTION_BASE_URL, settings.http);
  }

  async search(request: ProviderSearchRequest): Promise<ProviderOutcome> {
    const { model } = request;
    if (model.provider !== 'tavily' || !TAVILY_DEPTHS.includes(model.upstreamVariant)) {
      throw new Error(`tavily adapter cannot serve model ${model.id}`);
    }
    if (request.filters !== undefined) assertHonoured(model, request.filters);
    if (!isUsableKey(request.apiKey)) return failure('bad_key', 'provider key is not usable');
    const cap = resultCap(model, request.maxResults);
    const answer = await this.http.call({
      path: '/search',
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json', authorization: `Bearer ${request.apiKey}` },
      body: request.filters === undefined
        ? JSON.stringify({ query: request.query, search_depth: model.upstreamVariant, max_results: cap })
        : JSON.stringify({ query: request.query, search_depth: model.upstreamVariant, max_results: cap, ...tavilyFilterFields(request.filters) }),
      timeoutMs: request.timeoutMs,
      signal: request.signal,
    });
    if (!answer.ok) return answer;
    if (answer.status !== 200) return classifyTavilyError(answer.status);
    const body = parseJson(answer.body);
    if (!isRecord(body) || !Array.isArray(body.results)) {
      return failure('malformed', 'provider returned an unparsable body', answer.status);
    }
    return { ok: true, results: normalize(body.results, cap) };
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
