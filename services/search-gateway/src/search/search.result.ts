import type { CacheStatus, CatalogModel, KeyRecord, SearchFilters } from '@svc/contracts';
import type { AttemptResult } from './search.outcome';
import type { SearchRequest } from './search.schema';
import type { UpstreamTimer } from './server-timing';

/**
 * What every kind of request runs on the attempt seam has (docs/decisions/0042, 0058): its
 * models in fallback order, and what its settlement record keeps of it. A search's is its
 * SearchRequest (no kind); an extract's, its ExtractRequest.
 */
export interface AttemptedRequest {
  /** Absent: a search; `extract`: POST /v1/extract (the settlement record carries it). */
  readonly kind?: 'extract';
  readonly models: readonly CatalogModel[];
  /** A search's filters (canonical), which its record keeps; never on an extract. */
  readonly filters?: SearchFilters | undefined;
}

export interface SearchCall<R extends AttemptedRequest = SearchRequest> {
  readonly record: KeyRecord;
  readonly requestId: string;
  readonly request: R;
  /** Digest of the Idempotency-Key header and of the body, or null without the header. */
  readonly idempotency: { readonly keyDigest: string; readonly bodyDigest: string } | null;
  /** Milliseconds since the request arrived. */
  readonly elapsedMs: () => number;
  /** Times the provider calls of this search (Server-Timing's upstream); absent: not timed. */
  readonly upstream?: UpstreamTimer;
}

/** The key's rate-limit state after this request, for x-ratelimit-limit and x-ratelimit-remaining. */
export interface RateLimitState {
  readonly limit: number;
  readonly remaining: number;
}

/** A reply ready to send: status and JSON body (the same bytes are kept for idempotent repeats). */
export interface SearchReply {
  readonly kind: 'reply';
  readonly status: number;
  readonly body: string;
  /** The request id in the body (the first request's on an idempotent repeat). */
  readonly requestId: string;
  /** Set when the request passed the rate limit (every search whose first admission was admitted). */
  readonly rateLimit: RateLimitState | undefined;
  /** This search's attempts (undefined on an idempotent repeat): read by SearchMetrics after the reply. */
  readonly attempts: readonly AttemptResult[] | undefined;
  /** Retry-After of a 503 whose models were all skipped by open breakers: the shortest cool-down left (else 1). */
  readonly retryAfterSeconds?: number;
  /** A 200's cache status (the x-svc-cache header); undefined on an error reply. */
  readonly cache?: CacheStatus | undefined;
}

/**
 * Why a search answers with an error of its own instead of an outcome of its attempts. Each
 * is expected (data, not an exception): the route (and the MCP tool) turns it into the error
 * reply.
 * - `rate_limited`: the key's rate (429 rate_limited);
 * - `too_many`: the account's in-flight cap (429 too_many_concurrent_requests);
 * - `cold`: the account's balance is being rebuilt after a Redis loss, and was not back
 *   within the wait (503 overloaded);
 * - `saturated`: this gateway holds too many unconfirmed settlements (503 overloaded);
 * - `unavailable`: Redis did not answer an admission before any provider call (503 overloaded);
 * - `first_running`: the first request with this Idempotency-Key has not finished within the
 *   bound (503 overloaded);
 * - `body_mismatch`: the Idempotency-Key was used with another body (400 invalid_request);
 * - `settlement_failed`: the settlement could not be handed to Redis; nothing is charged
 *   (500 internal);
 * - `model_not_allowed`: the key's model fence allows none of the requested models; nothing
 *   is admitted, reserved or charged (403 model_not_allowed).
 */
export type RefusalReason = 'rate_limited' | 'too_many' | 'cold' | 'saturated' | 'unavailable' | 'first_running' | 'body_mismatch' | 'settlement_failed' | 'model_not_allowed';

export type RefusalCode = 'rate_limited' | 'too_many_concurrent_requests' | 'overloaded' | 'invalid_request' | 'internal' | 'model_not_allowed';

/** A search answered with an error of its own (see RefusalReason); it carries what the error reply says. */
export interface SearchRefusal {
  readonly kind: 'refused';
  readonly reason: RefusalReason;
  readonly code: RefusalCode;
  readonly message: string;
  /** Seconds for Retry-After; undefined on 400 and 500. */
  readonly retryAfterSeconds: number | undefined;
  /** The request id of the error body (the first request's for a copy that waited for it). */
  readonly requestId: string;
}

/** What SearchService.search answers: a reply, or a refusal the route makes an error reply. */
export type SearchResult = SearchReply | SearchRefusal;

const RETRY_SHORTLY = 'the service is temporarily unable to admit searches; retry shortly';

function refusal(reason: RefusalReason, code: RefusalCode, message: string, retryAfterSeconds: number | undefined, requestId: string): SearchRefusal {
  return { kind: 'refused', reason, code, message, retryAfterSeconds, requestId };
}

/** The refusals, one constructor each (messages as the API documents them). */
export const refuse = {
  rateLimited: (requestId: string, ratePerSecond: number, burst: number, retryAfterMs: number): SearchRefusal =>
    refusal('rate_limited', 'rate_limited', `this API key is limited to ${ratePerSecond} requests per second (bursts up to ${burst}); retry after the Retry-After delay`, Math.max(1, Math.ceil(retryAfterMs / 1000)), requestId),
  tooMany: (requestId: string, accountCap: number): SearchRefusal =>
    refusal('too_many', 'too_many_concurrent_requests', `the account already has ${accountCap} searches in flight; retry shortly`, 1, requestId),
  cold: (requestId: string): SearchRefusal => refusal('cold', 'overloaded', 'this account\'s balance is being restored; retry shortly', 1, requestId),
  saturated: (requestId: string): SearchRefusal => refusal('saturated', 'overloaded', RETRY_SHORTLY, 1, requestId),
  unavailable: (requestId: string): SearchRefusal => refusal('unavailable', 'overloaded', RETRY_SHORTLY, 1, requestId),
  firstRunning: (requestId: string): SearchRefusal => refusal('first_running', 'overloaded', 'the first request with this Idempotency-Key has not finished; retry shortly', 1, requestId),
  bodyMismatch: (requestId: string): SearchRefusal => refusal('body_mismatch', 'invalid_request', 'this Idempotency-Key was used with a different request body', undefined, requestId),
  settlementFailed: (requestId: string): SearchRefusal => refusal('settlement_failed', 'internal', 'internal error', undefined, requestId),
  modelNotAllowed: (requestId: string): SearchRefusal =>
    refusal('model_not_allowed', 'model_not_allowed', 'this key may not use any of the requested models (its allowed_models)', undefined, requestId),
} as const;
