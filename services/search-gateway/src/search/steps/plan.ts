import { byokFeeMicros, maxCostMicros, modelAllowed, unsupportedFilters } from '@svc/contracts';
import type { FilterName, SearchFilters } from '@svc/contracts';
import type { ProviderKeySet } from '../../byok/provider-key-cache';
import type { Claim } from '../../money/money.ops';
import type { AttemptResult } from '../search.outcome';
import type { SearchRequest } from '../search.schema';
import { ProviderCall } from './attempt';
import { DEFAULT_BYOK_FEE_PERCENT } from './price';
import type { PlannedAttempt, SearchContext, SearchSettings, SearchSteps } from './search-steps';

export { chargeOf, keptOnTimeout } from './price';
export type { AttemptRequest } from './search-steps';

/**
 * Attempts in order (docs/api.md 10.4): per model, the account's own key (`byok`) first
 * when it has one, then the deployment's (`platform`) when there is one; a model with
 * neither is one attempt without a key (skipped: not configured). Whether a platform
 * attempt after a BYOK one runs is decided when its turn comes (gateAttempt).
 */
export function planAttempts(steps: Pick<SearchSteps, 'providers' | 'settings'>, request: SearchRequest, accountKeys: ProviderKeySet): PlannedAttempt[] {
  const plan: PlannedAttempt[] = [];
  const feePercent = steps.settings.byokFeePercent ?? DEFAULT_BYOK_FEE_PERCENT;
  for (const model of request.models) {
    const own = accountKeys[model.provider];
    const platform = steps.providers.platformKey(model.provider) ?? null;
    const price = maxCostMicros(model, request.maxResults);
    if (own !== undefined) plan.push({ index: plan.length, model, source: 'byok', apiKey: own, priceMicros: byokFeeMicros(price, feePercent) });
    if (platform !== null || own === undefined) plan.push({ index: plan.length, model, source: 'platform', apiKey: platform, priceMicros: price });
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
 *   blocked it): it would meet the same block, or wait again. Not shown among the attempts;
 * - `deadline`: SEARCH_MAX_DURATION_MS has passed (skipped, shown);
 * - `not_configured`: no key for its provider and source (skipped, shown);
 * - `run`: admit it.
 */
export type AttemptGate = 'run' | 'after_byok' | 'deadline' | 'not_configured';

/** `previous`: the last attempt recorded so far; `leftMs`: what is left of the search's time. */
export function gateAttempt(planned: PlannedAttempt, previous: AttemptResult | undefined, leftMs: number): AttemptGate {
  if (planned.source === 'platform' && previous !== undefined && previous.source === 'byok' && previous.model.id === planned.model.id
    && (previous.status === 'skipped' || (previous.status === 'error' && (previous.kind === 'timeout' || previous.kind === 'deadline')))) {
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

/** Whether `previous` already records `planned`'s model as unable to honour the filters (its BYOK and platform attempts are one skip). */
function sameModelRefused(previous: AttemptResult | undefined, planned: PlannedAttempt): boolean {
  return previous !== undefined && previous.status === 'skipped' && previous.reason === 'unsupported_filter' && previous.model.id === planned.model.id;
}

/**
 * The next attempt to admit, from plan index `from`: the attempts passed over are recorded
 * in `attempts` (a filter it cannot honour, the deadline, not configured) or left out (after_byok). Null when no attempt
 * is left. A model outside the key's `allowedModels` is skipped (`model not allowed for this key`). `claim`: the Idempotency-Key claim (the search's first admission only).
 */
export function nextAttempt(steps: Pick<SearchSteps, 'settings' | 'health'>, ctx: SearchContext, attempts: AttemptResult[], from: number, claim: Claim | undefined): ProviderCall | null {
  const { plan, call } = ctx;
  const { settings } = steps;
  const modelFence = call.record.allowedModels;
  for (let i = from; i < plan.length; i++) {
    const planned = plan[i] as PlannedAttempt;
    if (modelFence !== undefined && !modelAllowed(modelFence, planned.model)) {
      // The key may not use this model: skipped once per model, nothing reserved or charged.
      const previous = attempts[attempts.length - 1];
      if (!(previous !== undefined && previous.status === 'skipped' && previous.reason === 'model_not_allowed' && previous.model.id === planned.model.id)) {
        attempts.push({ status: 'skipped', model: planned.model, source: null, reason: 'model_not_allowed', priceMicros: planned.priceMicros });
      }
      continue;
    }
    const unsupported = filterGate(planned, call.request.filters);
    if (unsupported !== null) {
      if (!sameModelRefused(attempts[attempts.length - 1], planned)) {
        attempts.push({ status: 'skipped', model: planned.model, source: null, reason: 'unsupported_filter', priceMicros: planned.priceMicros, filters: unsupported });
      }
      continue;
    }
    const leftMs = (settings.maxDurationMs ?? Number.POSITIVE_INFINITY) - call.elapsedMs();
    const gate = gateAttempt(planned, attempts[attempts.length - 1], leftMs);
    if (gate === 'run') {
      if (breakerGate(steps, planned, attempts)) continue;
      return new ProviderCall(planned, settings, call.requestId, claim, leftMs);
    }
    if (gate !== 'after_byok') attempts.push({ status: 'skipped', model: planned.model, source: null, reason: gate, priceMicros: planned.priceMicros });
  }
  return null;
}

/**
 * The breaker's gate (docs/decisions/0027): a platform attempt at a provider whose breaker is
 * open is skipped (`failing`: charged nothing, not waited for, the fallback moves on), with
 * the cool-down left for Retry-After. An attempt with an account's own key is judged apart
 * and never skipped here. True when it skipped the attempt. An in-process read, no Redis.
 */
export function breakerGate(steps: Pick<SearchSteps, 'health'>, planned: PlannedAttempt, attempts: AttemptResult[]): boolean {
  const health = steps.health;
  if (health === undefined || planned.source !== 'platform') return false;
  const provider = planned.model.provider;
  const blockedMs = health.blockedMs(provider);
  if (blockedMs < 0) return false;
  health.skipped(provider);
  attempts.push({ status: 'skipped', model: planned.model, source: 'platform', reason: 'failing', priceMicros: planned.priceMicros, retryAfterMs: blockedMs });
  return true;
}
