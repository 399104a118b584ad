import { resultCap } from '@svc/contracts';
import type { ModelSpec, Provider, SearchContents } from '@svc/contracts';
import { assertHonoured } from './filter-params';
import { isRecord, isUsableKey, parseJson, ProviderHttp } from './provider-http';
import type { HttpCall, ProviderHttpOptions } from './provider-http';
import { cutPassages, cutText, isHttpUrl, plainText, toPublishedAt, toScore } from './result-fields';
import { failure } from './search-provider';
import type { NormalizedResult, ProviderFailure, ProviderOutcome, ProviderSearchRequest, SearchProvider } from './search-provider';

/** What every adapter's constructor takes: the base URL (the provider's production one without it) and pool options. */
export interface AdapterSettings {
  readonly baseUrl?: string;
  readonly http?: ProviderHttpOptions;
}

/** Where a provider puts the normalized result's snippet, date and score in one of its items. */
export interface ResultFieldMap {
  snippet(item: Record<string, unknown>): string;
  /** The item's field holding the publication date. */
  readonly publishedAt: string;
  /** The item's field holding the relevance score, or null when the provider gives none. */
  readonly score: string | null;
  /** The item's page text (contents `text`), or null when it carries none. */
  text?(item: Record<string, unknown>): string | null;
  /** The item's passages (contents `highlights`), or null when it carries none. */
  highlights?(item: Record<string, unknown>): readonly string[] | null;
}

/** The first `cap` items with an http(s) URL as normalized results, numbered from 1. */
export function normalizeResults(items: unknown[], cap: number, fields: ResultFieldMap): NormalizedResult[] {
  const results: NormalizedResult[] = [];
  for (const item of items) {
    if (results.length >= cap) break;
    if (!isRecord(item) || !isHttpUrl(item.url)) continue;
    results.push({
      position: results.length + 1,
      title: plainText(item.title),
      url: item.url,
      snippet: fields.snippet(item),
      published_at: toPublishedAt(item[fields.publishedAt]),
      score: fields.score === null ? null : toScore(item[fields.score]),
    });
  }
  return results;
}

/**
 * The first `cap` items as normalized results with the contents asked for (`text` or
 * `highlights`), each cut to `maxChars`: an item whose provider sent none carries an empty one
 * (the provider answered for the page and had no text for it). `truncated`: whether it was cut
 * (by the provider, which sent exactly `maxChars`, or here).
 */
export function normalizeWithContents(items: unknown[], cap: number, fields: ResultFieldMap, contents: Exclude<SearchContents, 'none'>, maxChars: number): NormalizedResult[] {
  const results = normalizeResults(items, cap, fields);
  let position = 0;
  const out: NormalizedResult[] = [];
  for (const item of items) {
    if (position >= results.length) break;
    if (!isRecord(item) || !isHttpUrl(item.url)) continue;
    const base = results[position] as NormalizedResult;
    position++;
    if (contents === 'text') {
      const text = fields.text?.(item) ?? '';
      out.push({ ...base, text: cutText(text, maxChars), truncated: text.length >= maxChars });
    } else {
      const cut = cutPassages(fields.highlights?.(item) ?? [], maxChars);
      out.push({ ...base, highlights: cut.passages, truncated: cut.truncated });
    }
  }
  return out;
}

/** `body.results`, where Exa and Tavily put their items. */
export function resultsField(body: unknown): unknown {
  return isRecord(body) ? body.results : undefined;
}

/** The parts of an HTTP call a provider writes for one search (the adapter adds the timeout and the signal). */
export type UpstreamCall = Pick<HttpCall, 'path' | 'method' | 'headers' | 'body'>;

/** A JSON `POST` (accepting JSON) with the provider's own headers (its key) after the content headers. */
export function postJson(path: string, headers: Record<string, string>, payload: Record<string, unknown>): UpstreamCall {
  return {
    path,
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json', ...headers },
    body: JSON.stringify(payload),
  };
}

/** What an adapter knows of one provider's search API. */
export interface ProviderApi {
  readonly provider: Provider;
  readonly productionBaseUrl: string;
  /** The upstream variants (ModelSpec.upstreamVariant) the provider knows. */
  readonly upstreamVariants: readonly string[];
  /** The request for one search, asking for `cap` results. */
  request(search: ProviderSearchRequest, cap: number): UpstreamCall;
  /** A non-200 answer as a failure (`body`: the parsed body, undefined when it is not JSON). */
  classify(status: number, body: unknown): ProviderFailure;
  /** The items in a 200 answer's parsed body (not an array when the body is malformed). */
  itemsOf(body: unknown, model: ModelSpec): unknown;
  /** Where an item keeps the normalized result's snippet, date and score. */
  readonly fields: ResultFieldMap;
}

/**
 * One search over a provider's HTTP API, the steps every provider shares: the model check, the
 * filters, the key check, the result cap, the call, and the answer classified or normalized as
 * the provider's ProviderApi says.
 */
export class HttpSearchAdapter implements SearchProvider {
  readonly provider: Provider;
  private readonly http: ProviderHttp;

  constructor(private readonly api: ProviderApi, settings: AdapterSettings) {
    this.provider = api.provider;
    this.http = new ProviderHttp(settings.baseUrl ?? api.productionBaseUrl, settings.http);
  }

  async search(request: ProviderSearchRequest): Promise<ProviderOutcome> {
    const { model } = request;
    if (model.provider !== this.provider || !this.api.upstreamVariants.includes(model.upstreamVariant)) {
      throw new Error(`${this.provider} adapter cannot serve model ${model.id}`);
    }
    if (request.filters !== undefined) assertHonoured(model, request.filters);
    if (request.contents !== undefined && request.contents !== 'none' && !model.supportedContents.includes(request.contents)) {
      throw new Error(`model ${model.id} cannot return contents ${request.contents}`);
    }
    if (!isUsableKey(request.apiKey)) return failure('bad_key', 'provider key is not usable');
    const cap = resultCap(model, request.maxResults);
    const answer = await this.http.call({ ...this.api.request(request, cap), timeoutMs: request.timeoutMs, signal: request.signal });
    if (!answer.ok) return answer;
    const body = parseJson(answer.body);
    if (answer.status !== 200) return this.api.classify(answer.status, body);
    const items = this.api.itemsOf(body, model);
    if (!Array.isArray(items)) return failure('malformed', 'provider returned an unparsable body', answer.status);
    const contents = request.contents;
    if (contents === undefined || contents === 'none') return { ok: true, results: normalizeResults(items, cap, this.api.fields) };
    return { ok: true, results: normalizeWithContents(items, cap, this.api.fields, contents, request.maxCharsPerResult ?? 5_000) };
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
