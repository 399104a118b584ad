import { LIMITS } from '@svc/contracts';
import type { Micros } from '@svc/money';
import type { ProviderKeySet } from '../../byok/provider-key-cache';
import type { Claim } from '../../money/money.ops';
import type { AttemptResult } from '../search.outcome';
import type { SearchRequest } from '../search.schema';
import { ProviderCall } from './attempt';
import type { FanoutWait } from './attempt';
import { withinCap } from './cost-cap';
import { capSkip, gateNext, planAttempts, searchGate } from './plan';
import type { PlannedAttempt, SearchContext, SearchSettings, SearchSteps } from './search-steps';

/**
 * A fan-out's plan and gates (docs/api.md, "Fan-out"; docs/decisions/0066). Every model named is
 * called once, at the same time: with the account's own key when it has one for the model's
 * provider (its BYOK attempt), else with the deployment's. (A fallback tries the platform key
 * after a BYOK attempt that failed; a fan-out does not wait for one model to fail before calling
 * another, so each model has one attempt.)
 */
export function planFanout(steps: Pick<SearchSteps, 'providers' | 'settings'>, request: SearchRequest, accountKeys: ProviderKeySet): PlannedAttempt[] {
  const plan: PlannedAttempt[] = [];
  for (const planned of planAttempts(steps, request, accountKeys)) {
    const last = plan[plan.length - 1];
    if (last !== undefined && last.model.id === planned.model.id) continue;
    plan.push(planned.index === plan.length ? planned : { ...planned, index: plan.length });
  }
  return plan;
}

/** A fan-out's models after their gates, in the order asked: the attempts passed over, and the calls to admit. */
export interface FanoutPlan {
  /** Every model in the order asked: its attempt when it was passed over, else its call. */
  readonly slots: readonly (AttemptResult | ProviderCall)[];
  /** The calls to admit together (the slots that are calls). */
  readonly calls: readonly ProviderCall[];
  /** The wait every call shares: it ends `waitMs` after the calls start. */
  readonly wait: FanoutWait;
  readonly waitMs: number;
}

/**
 * The gates of every model, as a fallback's attempt meets them (the key's model fence, filters,
 * contents, the search's time, not configured, the breaker), then the request's cost cap: in the
 * order asked, a model whose reservation would take the reservations of the models before it
 * past max_cost_usd is skipped (`cost_cap`). The admission then decides money (the key's limit,
 * the balance) and capacity per model.
 */
export function gateFanout(steps: Pick<SearchSteps, 'settings' | 'health'>, ctx: SearchContext): FanoutPlan {
  const { settings } = steps;
  const request = ctx.call.request;
  const waitMs = request.fanoutWaitMs ?? settings.fanoutWaitMs ?? LIMITS.fanoutWaitMs.default;
  const wait: FanoutWait = { endsAt: Number.POSITIVE_INFINITY };
  const make = (planned: PlannedAttempt, callSettings: SearchSettings, callCtx: SearchContext, _claim: Claim | undefined, leftMs: number): ProviderCall =>
    new ProviderCall(planned, callSettings, callCtx.call.requestId, undefined, leftMs, wait);
  const cap = request.maxCostMicros;
  const slots: (AttemptResult | ProviderCall)[] = [];
  const calls: ProviderCall[] = [];
  const passed: AttemptResult[] = [];
  let held: Micros = 0;
  for (let from = 0; ;) {
    const call = gateNext(steps, ctx, passed, from, undefined, searchGate, make);
    slots.push(...passed.splice(0));
    if (call === null) break;
    if (withinCap(cap, held, call.amountMicros)) {
      held += call.amountMicros;
      slots.push(call);
      calls.push(call);
    } else {
      slots.push(capSkip(call.planned, call.amountMicros, held, cap ?? 0));
    }
    from = call.index + 1;
  }
  return { slots, calls, wait, waitMs };
}
