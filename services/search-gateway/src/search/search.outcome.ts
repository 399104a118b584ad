import { MODEL_NOT_ALLOWED_MESSAGE } from '@svc/contracts';
import type { CacheStatus, CatalogModel, FilterName } from '@svc/contracts';
import type { AttemptView } from '@svc/errors';
import type { Micros } from '@svc/money';
import { microsToUsd } from '@svc/money';
import type { AttemptCache } from '../cache/cache.ticket';
import type { NormalizedResult, ProviderFailureKind } from '../providers';

/**
 * Results already in JSON (a result-cache hit's stored text, or a miss's text made once for
 * the store): the reply takes the text as it is, without parsing it or serialising it again.
 * `length` is the number of results (the charge and the settlement count them).
 */
export class ResultsJson {
  constructor(readonly length: number, readonly json: string) {}
}

/**
 * One page an extract attempt returned (POST /v1/extract): the URL asked for, in its normal
 * form, and its text as the reply shows it (cut to max_chars_per_url), with where it came
 * from (fetched now, or the result cache).
 */
export interface ExtractedPage {
  readonly url: string;
  readonly title: string | null;
  readonly text: string;
  readonly published_at: string | null;
  /** Whether the text was cut (max_chars_per_url, at the provider or here). */
  readonly truncated: boolean;
  readonly cache: { readonly status: CacheStatus; readonly ageS: number };
}

/** An answer's results: as the provider adapter normalised them, or as JSON text; an extract attempt's pages. */
export type AttemptResults = readonly NormalizedResult[] | ResultsJson | readonly ExtractedPage[];

/** What an extract attempt (docs/decisions/0058) adds to its result: the URLs it was asked for, and those it could not fetch. */
export interface ExtractDetail {
  readonly urls: number;
  readonly failed: readonly { readonly url: string; readonly error: string }[];
}

/** The results as the JSON array the reply carries. */
export function resultsJsonText(results: AttemptResults): string {
  return results instanceof ResultsJson ? results.json : JSON.stringify(results);
}

/** Whose provider key an attempt uses: the account's own (`byok`, tried first) or the deployment's (`platform`). */
export type AttemptSource = 'platform' | 'byok';

export type SkipReason = 'not_configured' | 'capacity' | 'balance' | 'limit' | 'deadline' | 'unsupported_filter' | 'failing' | 'model_not_allowed'
  /** A search's `contents` the model cannot return (its names in `options`). */
  | 'unsupported_contents'
  /** An extract's option or format the model cannot honour (its names in `options`). */
  | 'unsupported_option';

/**
 * Why an attempt that was called failed: the provider's failure, or `deadline`, a call whose
 * timeout the search's own time limit (SEARCH_MAX_DURATION_MS) cut short and that ran out of
 * it (no provider timeout: refunded, not counted by the breaker; docs/decisions/0044).
 */
export type AttemptErrorKind = ProviderFailureKind | 'deadline'
  /** An extract call that answered, with every URL failed at the provider (the pages, not the call): no provider failure. */
  | 'urls_failed';

/** What happened to one attempt; an expected outcome, never an exception. */
export type AttemptResult =
  | {
    readonly status: 'success'; readonly model: CatalogModel; readonly source: AttemptSource; readonly results: AttemptResults; readonly reservedMicros: Micros; readonly chargedMicros: Micros; readonly cache?: AttemptCache;
    /** An extract attempt's URLs (absent on a search's). */
    readonly extract?: ExtractDetail;
  }
  | {
    readonly status: 'error'; readonly model: CatalogModel; readonly source: AttemptSource; readonly kind: AttemptErrorKind; readonly error: string; readonly reservedMicros: Micros; readonly chargedMicros: Micros;
    /** An extract attempt's URLs (absent on a search's). */
    readonly extract?: ExtractDetail;
  }
  | {
    readonly status: 'skipped'; readonly model: CatalogModel; readonly source: AttemptSource | null; readonly reason: SkipReason; readonly priceMicros: Micros; readonly filters?: readonly FilterName[]; readonly retryAfterMs?: number;
    /** unsupported_contents and unsupported_option: what the model cannot honour. */
    readonly options?: readonly string[];
  };

export const SKIP_MESSAGES: Readonly<Record<SkipReason, string>> = {
  not_configured: 'provider not configured',
  capacity: 'provider at capacity',
  balance: 'insufficient credits',
  limit: 'key credit limit reached',
  deadline: 'search time limit reached',
  unsupported_filter: 'unsupported filter',
  // The provider's breaker is open (docs/decisions/0027).
  failing: 'provider unavailable (failing)',
  // The key's allowed_models leaves it out (docs/api.md, "Key fences").
  model_not_allowed: MODEL_NOT_ALLOWED_MESSAGE,
  unsupported_contents: 'unsupported contents',
  unsupported_option: 'unsupported option',
};

/** A skipped attempt's `error`: its reason, and for an unsupported filter, contents or option the names it cannot honour. */
export function skipMessage(attempt: Extract<AttemptResult, { status: 'skipped' }>): string {
  if (attempt.reason === 'unsupported_filter' && attempt.filters !== undefined) return `unsupported filter: ${attempt.filters.join(', ')}`;
  if (attempt.options !== undefined) return `${SKIP_MESSAGES[attempt.reason]}: ${attempt.options.join(', ')}`;
  return SKIP_MESSAGES[attempt.reason];
}

/** An attempt skipped for something sent that its model cannot honour (a filter, contents, an extract option). */
export function isUnsupported(attempt: AttemptResult): boolean {
  return attempt.status === 'skipped' && (attempt.reason === 'unsupported_filter' || attempt.reason === 'unsupported_contents' || attempt.reason === 'unsupported_option');
}

function isFenced(attempt: AttemptResult): boolean {
  return attempt.status === 'skipped' && attempt.reason === 'model_not_allowed';
}

/** How a search ends (docs/api.md 10.5, when no model answers). */
export type SearchOutcome =
  | { kind: 'success'; index: number }
  | { kind: 'payment'; code: 'key_limit_exceeded' | 'insufficient_credits'; neededMicros: Micros }
  | { kind: 'overloaded' }
  | { kind: 'unsupported_filter' }
  /** Every model skipped for what it cannot honour, not only filters (contents, an extract option): 400 unsupported_option. */
  | { kind: 'unsupported_option' }
  | { kind: 'failed' };

export function decideOutcome(all: readonly AttemptResult[]): SearchOutcome {
  const index = all.findIndex((attempt) => attempt.status === 'success');
  if (index >= 0) return { kind: 'success', index };
  // Models the key may not use take no part in the verdict (a search with none allowed was refused before).
  const attempts = all.some(isFenced) ? all.filter((attempt) => !isFenced(attempt)) : all;
  // Every model refused the filters sent (nothing was called, reserved or charged): 400, not 502;
  // unsupported_option when some refused something else sent (contents, an extract option).
  if (attempts.length > 0 && attempts.every(isUnsupported)) {
    return attempts.every((a) => a.status === 'skipped' && a.reason === 'unsupported_filter') ? { kind: 'unsupported_filter' } : { kind: 'unsupported_option' };
  }
  const moneyBlocks = attempts.filter((a) => a.status === 'skipped' && (a.reason === 'balance' || a.reason === 'limit'));
  if (attempts.length > 0 && moneyBlocks.length === attempts.length) {
    let needed = Number.MAX_SAFE_INTEGER;
    let anyLimit = false;
    for (const block of moneyBlocks) {
      if (block.status !== 'skipped') continue;
      needed = Math.min(needed, block.priceMicros);
      if (block.reason === 'limit') anyLimit = true;
    }
    return { kind: 'payment', code: anyLimit ? 'key_limit_exceeded' : 'insufficient_credits', neededMicros: needed };
  }
  const rest = attempts.filter((a) => !(a.status === 'skipped' && (a.reason === 'balance' || a.reason === 'limit')));
  if (rest.length > 0 && rest.every((a) => a.status === 'skipped' && (a.reason === 'capacity' || a.reason === 'failing'))) return { kind: 'overloaded' };
  return { kind: 'failed' };
}

/** An attempt as the API shows it: `cost_usd` only on a timed-out attempt that kept its base price. */
export function attemptView(attempt: AttemptResult): AttemptView {
  switch (attempt.status) {
    case 'skipped': {
      const view: AttemptView = { model: attempt.model.id, status: 'skipped', error: skipMessage(attempt) };
      return attempt.source === null ? view : { model: view.model, source: attempt.source, status: view.status, error: view.error };
    }
    case 'error': {
      const view: AttemptView = { model: attempt.model.id, source: attempt.source, status: 'error', error: attempt.error };
      // A search's timed-out attempt keeps its base price; an extract's keeps nothing (docs/decisions/0058).
      if (attempt.kind === 'timeout' && attempt.extract === undefined) view.cost_usd = microsToUsd(attempt.chargedMicros);
      return view;
    }
    case 'success':
      throw new Error('a successful attempt has no attempt view');
  }
}
