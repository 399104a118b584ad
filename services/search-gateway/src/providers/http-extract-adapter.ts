import type { Provider } from '@svc/contracts';
import type { AdapterSettings, UpstreamCall } from './http-search-adapter';
import { normaliseUrl } from './page-url';
import { isRecord, isUsableKey, parseJson, ProviderHttp } from './provider-http';
import { cutText, plainText, toPublishedAt } from './result-fields';
import { failure } from './search-provider';
import type { ExtractOutcome, ExtractProvider, FetchedPage, ProviderExtractRequest, ProviderFailure } from './search-provider';

/** What an adapter knows of one provider's extract API (docs/providers.md, "Extract"). */
export interface ExtractApi {
  readonly provider: Provider;
  readonly productionBaseUrl: string;
  /** The upstream variants (ExtractModelSpec.upstreamVariant) the provider knows. */
  readonly upstreamVariants: readonly string[];
  /** The request for one call, for every URL of `extract`. */
  request(extract: ProviderExtractRequest): UpstreamCall;
  /** A non-200 answer as a failure of the whole call (`body`: parsed, undefined when not JSON). */
  classify(status: number, body: unknown): ProviderFailure;
  /** The pages and the per-URL failures of a 200 answer's parsed body; null when it is malformed. */
  read(body: unknown, extract: ProviderExtractRequest): { pages: FetchedPage[]; failed: { url: string; error: string }[] } | null;
}

/** Where an item of a provider's answer keeps a page's fields. */
export interface PageFields {
  readonly url: unknown;
  readonly title: unknown;
  readonly text: unknown;
  readonly published: unknown;
}

/** A URL sent that came back in neither the pages nor the failures. */
const NOT_RETURNED = 'provider returned no content for it';

/**
 * A 200 answer's items matched to the URLs sent (by their normal form, so a provider that
 * gives a URL back spelled otherwise still answers it): each URL sent is a page (its text cut
 * at max_chars_per_url, never between a surrogate pair's halves) or a failure (`failureOf` the
 * provider's per-URL error, else "no content"). An item for a URL not sent is ignored; a URL
 * answered twice keeps its first page.
 */
export function pagesByUrl(
  extract: ProviderExtractRequest,
  items: unknown[],
  fieldsOf: (item: Record<string, unknown>) => PageFields,
  failureOf: (url: string) => string | undefined,
): { pages: FetchedPage[]; failed: { url: string; error: string }[] } {
  const byUrl = new Map<string, FetchedPage>();
  const asked = new Set(extract.urls);
  for (const item of items) {
    if (!isRecord(item)) continue;
    const fields = fieldsOf(item);
    const url = typeof fields.url === 'string' ? normaliseUrl(fields.url) : null;
    if (url === null || !asked.has(url) || byUrl.has(url) || typeof fields.text !== 'string') continue;
    const text = cutText(fields.text, extract.maxCharsPerUrl);
    const title = plainText(fields.title);
    byUrl.set(url, { url, title: title === '' ? null : title, text, published_at: toPublishedAt(fields.published), truncated: fields.text.length >= extract.maxCharsPerUrl });
  }
  const pages: FetchedPage[] = [];
  const failed: { url: string; error: string }[] = [];
  for (const url of extract.urls) {
    const page = byUrl.get(url);
    if (page !== undefined) pages.push(page);
    else failed.push({ url, error: failureOf(url) ?? NOT_RETURNED });
  }
  return { pages, failed };
}

/**
 * One extract call over a provider's HTTP API, the steps every provider shares (as
 * HttpSearchAdapter for a search): the model check, the key check, the call, and the answer
 * classified or read as the provider's ExtractApi says.
 */
export class HttpExtractAdapter implements ExtractProvider {
  readonly provider: Provider;
  private readonly http: ProviderHttp;

  constructor(private readonly api: ExtractApi, settings: AdapterSettings) {
    this.provider = api.provider;
    this.http = new ProviderHttp(settings.baseUrl ?? api.productionBaseUrl, settings.http);
  }

  async extract(request: ProviderExtractRequest): Promise<ExtractOutcome> {
    const { model } = request;
    if (model.provider !== this.provider || !this.api.upstreamVariants.includes(model.upstreamVariant)) {
      throw new Error(`${this.provider} extract adapter cannot serve model ${model.id}`);
    }
    if (!model.supportedFormats.includes(request.format)) throw new Error(`model ${model.id} cannot return the format ${request.format}`);
    if ((request.query !== null && !model.supportedOptions.includes('query')) || (request.maxAgeS !== null && !model.supportedOptions.includes('max_age_s'))) {
      throw new Error(`model ${model.id} cannot honour an option sent`);
    }
    if (!isUsableKey(request.apiKey)) return failure('bad_key', 'provider key is not usable');
    const answer = await this.http.call({ ...this.api.request(request), timeoutMs: request.timeoutMs, signal: request.signal });
    if (!answer.ok) return answer;
    const body = parseJson(answer.body);
    if (answer.status !== 200) return this.api.classify(answer.status, body);
    const read = this.api.read(body, request);
    if (read === null) return failure('malformed', 'provider returned an unparsable body', answer.status);
    return { ok: true, pages: read.pages, failed: read.failed };
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

export type { AdapterSettings };
