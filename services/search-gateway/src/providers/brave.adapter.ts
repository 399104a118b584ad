import { resultCap } from '@svc/contracts';
import type { SearchFilters } from '@svc/contracts';
import { assertHonoured, filterDay } from './filter-params';
import { genericFailure, isRecord, isUsableKey, parseJson, ProviderHttp } from './provider-http';
import type { ProviderHttpOptions } from './provider-http';
import { isHttpUrl, plainText, toPublishedAt } from './result-fields';
import { failure } from './search-provider';
import type { NormalizedResult, ProviderFailure, ProviderOutcome, ProviderSearchRequest, SearchProvider } from './search-provider';

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
function resultsOf(endpoint: 'web' | 'news', body: Record<string, unknown>): unknown {
  if (endpoint === 'news') return body.results;
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

function normalize(items: unknown[], cap: number): NormalizedResult[] {
  const results: NormalizedResult[] = [];
  for (const item of items) {
    if (results.length >= cap) break;
    if (!isRecord(item) || !isHttpUrl(item.url)) continue;
    results.push({
      position: results.length + 1,
      title: plainText(item.title),
      url: item.url,
      snippet: plainText(item.description),
      published_at: toPublishedAt(item.page_age),
      score: null,
    });
  }
  return results;
}

/** Brave Search API: `GET /web/search` or `/news/search` by the model's upstream variant. */
export class BraveAdapter implements SearchProvider {
  readonly provider = 'brave' as const;
  private readonly http: ProviderHttp;

  constructor(settings: { baseUrl?: string; http?: ProviderHttpOptions } = {}) {
    this.http = new ProviderHttp(settings.baseUrl ?? BRAVE_PRODUCTION_BASE_URL, settings.http);
  }

  async search(request: ProviderSearchRequest): Promise<ProviderOutcome> {
    const { model } = request;
    if (model.provider !== 'brave' || (model.upstreamVariant !== 'web' && model.upstreamVariant !== 'news')) {
      throw new Error(`brave adapter cannot serve model ${model.id}`);
    }
    if (request.filters !== undefined) assertHonoured(model, request.filters);
    if (!isUsableKey(request.apiKey)) return failure('bad_key', 'provider key is not usable');
    const cap = resultCap(model, request.maxResults);
    const params = new URLSearchParams({ q: request.query, count: String(cap) });
    if (request.filters !== undefined) braveFilterParams(request.filters, params);
    const answer = await this.http.call({
      path: `/${model.upstreamVariant}/search?${params.toString()}`,
      method: 'GET',
      headers: { accept: 'application/json', 'x-subscription-token': request.apiKey },
      timeoutMs: request.timeoutMs,
      signal: request.signal,
    });
    if (!answer.ok) return answer;
    const body = parseJson(answer.body);
    if (answer.status !== 200) return classifyBraveError(answer.status, body);
    const items = isRecord(body) ? resultsOf(model.upstreamVariant, body) : undefined;
    if (!Array.isArray(items)) return failure('malformed', 'provider returned an unparsable body', answer.status);
    return { ok: true, results: normalize(items, cap) };
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
