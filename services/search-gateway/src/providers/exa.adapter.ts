import { resultCap } from '@svc/contracts';
import type { SearchFilters } from '@svc/contracts';
import { assertHonoured, filterInstantIso } from './filter-params';
import { genericFailure, isRecord, isUsableKey, parseJson, ProviderHttp } from './provider-http';
import type { ProviderHttpOptions } from './provider-http';
import { isHttpUrl, plainText, toPublishedAt, toScore } from './result-fields';
import { failure } from './search-provider';
import type { NormalizedResult, ProviderFailure, ProviderOutcome, ProviderSearchRequest, SearchProvider } from './search-provider';

export const EXA_PRODUCTION_BASE_URL = 'https://api.exa.ai';

/** Exa's search types, as its official client (exa-js 2.23) types them. */
const EXA_TYPES = ['keyword', 'neural', 'auto', 'hybrid', 'fast', 'instant', 'deep-lite', 'deep', 'deep-reasoning'];
/** A text snippet, when Exa sends `text` and no highlight, is cut to this many characters. */
const MAX_TEXT_SNIPPET = 500;

export function classifyExaError(status: number): ProviderFailure {
  if (status === 401) return failure('bad_key', 'provider rejected the key (401)', status);
  if (status === 402) return failure('quota', 'provider credits exhausted (402)', status);
  return genericFailure(status);
}

/** The filters as Exa's own fields (docs/providers.md, "Filters"). */
export function exaFilterFields(filters: SearchFilters): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  if (filters.include_domains !== undefined) fields.includeDomains = filters.include_domains;
  if (filters.exclude_domains !== undefined) fields.excludeDomains = filters.exclude_domains;
  if (filters.country !== undefined) fields.userLocation = filters.country;
  if (filters.published_after !== undefined) fields.startPublishedDate = filterInstantIso(filters.published_after, 'start');
  if (filters.published_before !== undefined) fields.endPublishedDate = filterInstantIso(filters.published_before, 'end');
  return fields;
}

function snippetOf(item: Record<string, unknown>): string {
  if (Array.isArray(item.highlights)) {
    const first: unknown = item.highlights.find((highlight) => typeof highlight === 'string' && highlight.trim() !== '');
    if (typeof first === 'string') return plainText(first);
  }
  return plainText(item.text).slice(0, MAX_TEXT_SNIPPET);
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
      snippet: snippetOf(item),
      published_at: toPublishedAt(item.publishedDate),
      score: toScore(item.score),
    });
  }
  return results;
}

/** Exa: `POST /search` with `type` = the model's upstream variant and highlights as snippets. */
export class ExaAdapter implements SearchProvider {
  readonly provider = 'exa' as const;
  private readonly http: ProviderHttp;

  constructor(settings: { baseUrl?: string; http?: ProviderHttpOptions } = {}) {
    this.http = new ProviderHttp(settings.baseUrl ?? EXA_PRODUCTION_BASE_URL, settings.http);
  }

  async search(request: ProviderSearchRequest): Promise<ProviderOutcome> {
    const { model } = request;
    if (model.provider !== 'exa' || !EXA_TYPES.includes(model.upstreamVariant)) {
      throw new Error(`exa adapter cannot serve model ${model.id}`);
    }
    if (request.filters !== undefined) assertHonoured(model, request.filters);
    if (!isUsableKey(request.apiKey)) return failure('bad_key', 'provider key is not usable');
    const cap = resultCap(model, request.maxResults);
    const answer = await this.http.call({
      path: '/search',
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json', 'x-api-key': request.apiKey },
      body: request.filters === undefined
        ? JSON.stringify({ query: request.query, type: model.upstreamVariant, numResults: cap, contents: { highlights: true } })
        : JSON.stringify({ query: request.query, type: model.upstreamVariant, numResults: cap, contents: { highlights: true }, ...exaFilterFields(request.filters) }),
      timeoutMs: request.timeoutMs,
      signal: request.signal,
    });
    if (!answer.ok) return answer;
    if (answer.status !== 200) return classifyExaError(answer.status);
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
