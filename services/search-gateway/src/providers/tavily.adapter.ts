import { resultCap } from '@svc/contracts';
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
    if (model.provider !== 'tavily' || (model.upstreamVariant !== 'basic' && model.upstreamVariant !== 'advanced')) {
      throw new Error(`tavily adapter cannot serve model ${model.id}`);
    }
    if (!isUsableKey(request.apiKey)) return failure('bad_key', 'provider key is not usable');
    const cap = resultCap(model, request.maxResults);
    const answer = await this.http.call({
      path: '/search',
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json', authorization: `Bearer ${request.apiKey}` },
      body: JSON.stringify({ query: request.query, search_depth: model.upstreamVariant, max_results: cap }),
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
