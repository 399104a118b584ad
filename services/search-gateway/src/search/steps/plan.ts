import { byokFeeMicros, maxCostMicros, modelAllowed, unsupportedFilters } from '@svc/contracts';
import type { CatalogModel, FilterName, ModelSpec, SearchContents, SearchFilters } from '@svc/contracts';
import type { ProviderKeySet } from '../../byok/provider-key-cache';
import type { Claim } from '../../money/money.ops';
import type { AttemptResult, SkipReason } from '../search.outcome';
import type { AttemptedRequest } from '../search.result';
import type { SearchRequest } from '../search.schema';
import { ProviderCall } from './attempt';
import { DEFAULT_BYOK_FEE_PERCENT } from './price';
import type { ModelOf, PlannedAttempt, SearchContext, SearchSettings, SearchSteps } from './search-steps';

export { chargeOf, keptOnTimeout } from './price';
export type { AttemptRequest } from './search-steps';

/**
 * Attempts in order (docs/api.md 10.4): per model, the account's own key (`byok`) first
 * when it has one, then the deployment's (`platform`) when there is one; a model with
 * neither is one attempt without a key (skipped: not configured). Whether a platform
 * attempt after a BYOK one runs is decided when its turn comes (gateAttempt).
 */
export function planAttempts(steps: Pick<SearchSteps, 'providers' | 'settings'>, request: SearchRequest, accountKeys: ProviderKeySet): PlannedAttempt[] {
  return planOf(steps, request.models, accountKeys, request, searchPrice);
}

/** The most a search's attempt on `model` can cost: its price for max_results, and what asking for contents adds. */
function searchPrice(model: ModelSpec, request: SearchRequest): number {
  const price = maxCostMicros(model, request.maxResults);
  return request.contents === 'none' ? price : price + model.contentsMicros;
}

/**
 * The plan of any kind of request: per model, BYOK then platform, each reserving
 * `price(model, request)` (or the BYOK fee of it). `price` is a module function: nothing is
 * allocated per plan for it.
 */
export function planOf<M extends CatalogModel, R>(steps: Pick<SearchSteps, 'providers' | 'settings'>, models: readonly M[], accountKeys: ProviderKeySet, request: R, price: (model: M, request: R) => number): PlannedAttempt<M>[] {
  const plan: PlannedAttempt<M>[] = [];
  const feePercent = steps.settings.byokFeePercent ?? DEFAULT_BYOK_FEE_PERCENT;
  for (const model of models) {
    const own = accountKeys[model.provider];
    const platform = steps.providers.platformKey(model.provider) ?? null;
    const priceMicros = price(model, request);
    if (own !== undefined) plan.push({ index: plan.length, model, source: 'byok', apiKey: own, priceMicros: byokFeeMicros(priceMicros, feePercent) });
    if (platform !== null || own === undefined) plan.push({ index: plan.length, model, source: 'platform', apiKey: platform, priceMicros });
  }
  return plan;
}

/** How long a repeat may wait for the first request: longer than any search of `attempts` attempts can run. */
export function runningBoundMs(settings: SearchSettings, attempts: number): number {
  return attempts * (settings.providerTimeoutMs + settings.leaseMarginMs) + 30_000;
}

/**
 * Whether an attempt's turn runs it:
 * - `after_byok`: a platform attempt right after its model's BYOK attempt that did not fail
 *   outright (it timed out, was cut short by the search's time limit, or money or capacity
 *   blocked it; an extract's that answered, in part or with every URL failed at the pages):
 *   it would meet the same block, or wait again. Not shown among the attempts;
 * - `deadline`: SEARCH_MAX_DURATION_MS has passed (skipped, shown);
 * - `not_configured`: no key for its provider and source (skipped, shown);
 * - `run`: admit it.
 */
export type AttemptGate = 'run' | 'after_byok' | 'deadline' | 'not_configured';

/** `previous`: the last attempt recorded so far; `leftMs`: what is left of the search's time. */
export function gateAttempt(planned: PlannedAttempt<CatalogModel>, previous: AttemptResult | undefined, leftMs: number): AttemptGate {
  if (planned.source === 'platform' && previous !== undefined && previous.source === 'byok' && previous.model.id === planned.model.id
    && (previous.status === 'skipped' || previous.status === 'success'
      || (previous.status === 'error' && (previous.kind === 'timeout' || previous.kind === 'deadline' || previous.kind === 'urls_failed')))) {
    return 'after_byok';
  }
  if (leftMs < 1) return 'deadline';
  if (planned.apiKey === null) return 'not_configured';
  return 'run';
}

/**
 * The filter gate (docs/api.md, "Filters"): the filters sent that the attempt's model cannot
 * honour, or null when it honours them all. A model that would drop a filter is never called:
 * its attempt is skipped (`unsupported filter: <names>`), charged and reserved nothing, and the
 * fallback moves on. Null at once for a search without filters.
 */
export function filterGate(planned: PlannedAttempt, filters: SearchFilters | undefined): readonly FilterName[] | null {
  return filters === undefined ? null : unsupportedFilters(planned.model.supportedFilters, filters);
}

/** The contents gate: the search's `contents` when its model cannot return them (never a snippet instead), else null. Null at once for `none`. */
export function contentsGate(planned: PlannedAttempt, contents: SearchContents): readonly string[] | null {
  return contents === 'none' || planned.model.supportedContents.includes(contents) ? null : [contents];
}

/** Why a kind of request skips a model before anything is held: a skip reason with its names, or null to go on. */
export interface OptionSkip {
  readonly reason: SkipReason;
  readonly filters?: readonly FilterName[];
  readonly options?: readonly string[];
}

/** A search's gates before its admission: the filters, then the contents. Nothing allocated for a search with neither. */
function searchGate(planned: PlannedAttempt, request: SearchRequest): OptionSkip | null {
  const unsupported = filterGate(planned, request.filters);
  if (unsupported !== null) return { reason: 'unsupported_filter', filters: unsupported };
  const contents = contentsGate(planned, request.contents);
  return contents === null ? null : { reason: 'unsupported_contents', options: contents };
}

/** A search's attempt once it passed its gates: its provider call. */
function searchCall(planned: PlannedAttempt, settings: SearchSettings, ctx: SearchContext, claim: Claim | undefined, leftMs: number, _attempts: readonly AttemptResult[]): ProviderCall {
  return new ProviderCall(planned, settings, ctx.call.requestId, claim, leftMs);
}

/** Whether `previous` already records `planned`'s model as skipped for `reason` (its BYOK and platform attempts are one skip). */
function sameModelSkipped(previous: AttemptResult | undefined, planned: PlannedAttempt<CatalogModel>, reason: SkipReason): boolean {
  return previous !== undefined && previous.status === 'skipped' && previous.reason === reason && previous.model.id === planned.model.id;
}

/**
 * The next attempt to admit, from plan index `from`: the attempts passed over are recorded
 * in `attempts` (a filter or contents it cannot honour, the deadline, not configured) or left out (after_byok). Null when no attempt
 * is left. A model outside the key's `allowedModels` is skipped (`model not allowed for this key`). `claim`: the Idempotency-Key claim (the search's first admission only).
 */
export function nextAttempt(steps: Pick<SearchSteps, 'settings' | 'health'>, ctx: SearchContext, attempts: AttemptResult[], from: number, claim: Claim | undefined): ProviderCall | null {
  return nextOf(steps, ctx, attempts, from, claim, searchGate, searchCall);
}

/**
 * The next attempt of any kind of request (see nextAttempt): the gates every kind shares (the
 * key's model fence, the deadline, not configured, the breaker) around its own (`gate`: what
 * its model cannot honour), and its attempt made by `make`. Both are module functions: nothing
 * is allocated per call for them.
 */
export function nextOf<R extends AttemptedRequest, C>(
  steps: Pick<SearchSteps, 'settings' | 'health'>,
  ctx: SearchContext<R>,
  attempts: AttemptResult[],
  from: number,
  claim: Claim | undefined,
  gate: (planned: PlannedAttempt<ModelOf<R>>, request: R) => OptionSkip | null,
  make: (planned: PlannedAttempt<ModelOf<R>>, settings: SearchSettings, ctx: SearchContext<R>, claim: Claim | undefined, leftMs: number, attempts: readonly AttemptResult[]) => C,
): C | null {
  const { plan, call } = ctx;
  const { settings } = steps;
  const modelFence = call.record.allowedModels;
  for (let i = from; i < plan.length; i++) {
    const planned = plan[i] as PlannedAttempt<ModelOf<R>>;
    if (modelFence !== undefined && !modelAllowed(modelFence, planned.model)) {
      // The key may not use this model: skipped once per model, nothing reserved or charged.
      if (!sameModelSkipped(attempts[attempts.length - 1], planned, 'model_not_allowed')) {
        attempts.push({ status: 'skipped', model: planned.model, source: null, reason: 'model_not_allowed', priceMicros: planned.priceMicros });
      }
      continue;
    }
    const skip = gate(planned, call.request);
    if (skip !== null) {
      if (!sameModelSkipped(attempts[attempts.length - 1], planned, skip.reason)) {
        attempts.push(skip.filters !== undefined
          ? { status: 'skipped', model: planned.model, source: null, reason: skip.reason, priceMicros: planned.priceMicros, filters: skip.filters }
          : { status: 'skipped', model: planned.model, source: null, reason: skip.reason, priceMicros: planned.priceMicros, options: skip.options ?? [] });
      }
      continue;
    }
    const leftMs = (settings.maxDurationMs ?? Number.POSITIVE_INFINITY) - call.elapsedMs();
    const gated = gateAttempt(planned, attempts[attempts.length - 1], leftMs);
    if (gated === 'run') {
      if (breakerGate(steps, planned, attempts)) continue;
      return make(planned, settings, ctx, claim, leftMs, attempts);
    }
    if (gated !== 'after_byok') attempts.push({ status: 'skipped', model: planned.model, source: null, reason: gated, priceMicros: planned.priceMicros });
  }
  return null;
}

/**
 * The breaker's gate (docs/decisions/0027): a platform attempt at a provider whose breaker is
 * open is skipped (`failing`: charged nothing, not waited for, the fallback moves on), with
 * the cool-down left for Retry-After. An attempt with an account's own key is judged apart
 * and never skipped here. True when it skipped the attempt. An in-process read, no Redis.
 */
export function breakerGate(steps: Pick<SearchSteps, 'health'>, planned: PlannedAttempt<CatalogModel>, attempts: AttemptResult[]): boolean {
  const health = steps.health;
  if (health === undefined || planned.source !== 'platform') return false;
  const provider = planned.model.provider;
  const blockedMs = health.blockedMs(provider);
  if (blockedMs < 0) return false;
  health.skipped(provider);
  attempts.push({ status: 'skipped', model: planned.model, source: 'platform', reason: 'failing', priceMicros: planned.priceMicros, retryAfterMs: blockedMs });
  return true;
}
