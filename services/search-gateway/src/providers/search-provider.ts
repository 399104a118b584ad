import type { ModelSpec, Provider, SearchFilters } from '@svc/contracts';

/** One search result as the gateway returns it (docs/api.md 10.3). */
export interface NormalizedResult {
  readonly position: number;
  readonly title: string;
  readonly url: string;
  readonly snippet: string;
  /** RFC 3339 UTC, or null when the provider gives no usable date. */
  readonly published_at: string | null;
  readonly score: number | null;
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
