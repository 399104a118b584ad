import type { ExtractFormat, ExtractModelSpec, ModelSpec, Provider, SearchContents, SearchFilters } from '@svc/contracts';

/** One search result as the gateway returns it (docs/api.md 10.3). */
export interface NormalizedResult {
  readonly position: number;
  readonly title: string;
  readonly url: string;
  readonly snippet: string;
  /** RFC 3339 UTC, or null when the provider gives no usable date. */
  readonly published_at: string | null;
  readonly score: number | null;
  /** With contents `text`: the page's text, at most maxCharsPerResult characters. */
  readonly text?: string;
  /** With contents `highlights`: the page's most relevant passages, at most maxCharsPerResult characters in all. */
  readonly highlights?: readonly string[];
  /** With contents: whether the text or highlights were cut. */
  readonly truncated?: boolean;
}

export interface ProviderSearchRequest {
  /** The query as the account sent it (already trimmed and length-checked by the caller). */
  readonly query: string;
  readonly model: ModelSpec;
  /** The account's max_results; the adapter asks for resultCap(model, maxResults). */
  readonly maxResults: number;
  /** The platform key or the account's own key: never logged, never echoed. */
  readonly apiKey: string;
  /** PROVIDER_TIMEOUT_MS: the whole call (connect, headers, body) must finish within it. */
  readonly timeoutMs: number;
  /** Aborts the call early (e.g. the client went away). */
  readonly signal?: AbortSignal;
  /**
   * The search's filters in canonical form, or undefined without any. The gateway calls an
   * adapter only with filters its model honours (ModelSpec.supportedFilters); the adapter maps
   * each onto the provider's own parameter.
   */
  readonly filters?: SearchFilters | undefined;
  /**
   * What each result carries besides its snippet (absent or `none`: nothing more). The gateway
   * asks only for contents the model returns (ModelSpec.supportedContents).
   */
  readonly contents?: SearchContents;
  /** With contents: the most characters of text (or of all highlights) per result. */
  readonly maxCharsPerResult?: number;
}

/**
 * Why an attempt failed. The gateway decides what each means for fallback and refunds
 * (docs/providers.md, "From an upstream outcome to an attempt"):
 * - `timeout`: no complete answer within timeoutMs (base price kept);
 * - `bad_key`: the provider rejected the key (surface to operators; tell a BYOK account);
 * - `rate_limited`, `quota`, `server_error`, `malformed`, `connection`: fall back, refund;
 * - `bad_request`: the provider rejected the parameters (a bug or an over-long query).
 */
export type ProviderFailureKind =
  | 'timeout'
  | 'rate_limited'
  | 'quota'
  | 'bad_key'
  | 'server_error'
  | 'bad_request'
  | 'malformed'
  | 'connection';

export interface ProviderSuccess {
  readonly ok: true;
  readonly results: readonly NormalizedResult[];
}

export interface ProviderFailure {
  readonly ok: false;
  readonly kind: ProviderFailureKind;
  /** A short reason of our own words, safe to show the account: never the upstream's text. */
  readonly error: string;
  /** The upstream HTTP status, or null when there was no complete HTTP answer. */
  readonly status: number | null;
}

export type ProviderOutcome = ProviderSuccess | ProviderFailure;

/** One upstream provider. `search` never throws for an upstream failure; it returns the outcome. */
export interface SearchProvider {
  readonly provider: Provider;
  search(request: ProviderSearchRequest): Promise<ProviderOutcome>;
  /** Closes the keep-alive connections. */
  close(): Promise<void>;
}

export function failure(kind: ProviderFailureKind, error: string, status: number | null = null): ProviderFailure {
  return { ok: false, kind, error, status };
}

// ---------------------------------------------------------------------------------------
// Extract: page content for known URLs (POST /v1/extract, docs/decisions/0058)

/** One extract call: the URLs still missing, and what to do with each page. */
export interface ProviderExtractRequest {
  /** The URLs in their normal form (what the cache key is made of, and what the provider receives). */
  readonly urls: readonly string[];
  readonly model: ExtractModelSpec;
  readonly format: ExtractFormat;
  readonly maxCharsPerUrl: number;
  /** Rank or trim each page's text by relevance to it; null: the whole text. Only for a model that honours it. */
  readonly query: string | null;
  /** Accept provider-cached content at most this old (0: live); null: the provider's default. Only for a model that honours it. */
  readonly maxAgeS: number | null;
  readonly apiKey: string;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

/** One page an extract call returned, its text already cut to maxCharsPerUrl. */
export interface FetchedPage {
  readonly url: string;
  readonly title: string | null;
  readonly text: string;
  readonly published_at: string | null;
  readonly truncated: boolean;
}

/**
 * An extract call that answered: the pages it fetched, and the URLs it could not (in the
 * provider's per-URL failure, never a failure of the call). Every URL sent is in one of the two.
 */
export interface ExtractSuccess {
  readonly ok: true;
  readonly pages: readonly FetchedPage[];
  readonly failed: readonly { readonly url: string; readonly error: string }[];
}

export type ExtractOutcome = ExtractSuccess | ProviderFailure;

/** One provider's extract endpoint. `extract` never throws for an upstream failure; it returns the outcome. */
export interface ExtractProvider {
  readonly provider: Provider;
  extract(request: ProviderExtractRequest): Promise<ExtractOutcome>;
  close(): Promise<void>;
}
