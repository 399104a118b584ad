import type { Provider } from '@svc/contracts';
import { describeError } from '@svc/errors';
import type { Micros } from '@svc/money';
import { CACHE_OFF } from '../../cache/cache.ticket';
import type { Claim, LeaseRequest, MoneyOp, ReserveRequest } from '../../money/money.ops';
import type { ProviderOutcome } from '../../providers';
import type { AttemptResult } from '../search.outcome';
import { chargeOf, keptOnTimeout } from './price';
import type {
  AnswerKeeper, AttemptRequest, Callable, PlannedAttempt, Readiness, SearchContext, SearchSettings, SearchSteps,
} from './search-steps';

/**
 * An attempt answered by a call to its provider (docs/decisions/0042): the attempt request
 * the plan makes (the lease and reserve request of its admission, the provider call's key
 * and timeout) and the Answering the steps run when nothing answers in front of it. One
 * object per attempt; only a provider call takes a provider-capacity lease.
 */
export class ProviderCall implements Callable {
  readonly provider: Provider;
  readonly leaseId: string;
  readonly cap: number;
  readonly lifetimeMs: number;
  readonly index: number;
  readonly amountMicros: Micros;
  readonly apiKey: string;
  /** The provider call's timeout: PROVIDER_TIMEOUT_MS, cut to what is left of the search's time. */
  readonly timeoutMs: number;

  constructor(readonly planned: PlannedAttempt, settings: SearchSettings, requestId: string, readonly claim: Claim | undefined, leftMs: number) {
    const provider = planned.model.provider;
    this.provider = provider;
    this.leaseId = `${requestId}:${planned.index}`;
    this.cap = settings.maxInFlight[provider];
    this.lifetimeMs = settings.providerTimeoutMs + settings.leaseMarginMs;
    this.index = planned.index;
    this.amountMicros = planned.priceMicros;
    this.apiKey = planned.apiKey ?? '';
    this.timeoutMs = Math.min(settings.providerTimeoutMs, Math.floor(leftMs));
  }

  get request(): AttemptRequest {
    return this;
  }

  /** Its admission reserves the most it can cost. */
  get reserve(): ReserveRequest {
    return this;
  }

  /** Its admission takes the provider's capacity lease. */
  get lease(): LeaseRequest {
    return this;
  }

  get cheaper(): null {
    return null;
  }

  ready(): Readiness {
    return 'calls';
  }

  answer(steps: SearchSteps, ctx: SearchContext, ops: MoneyOp[], leased: boolean): Promise<AttemptResult> {
    return attempt(steps, ctx, ops, this, leased, null);
  }

  call(steps: SearchSteps, ctx: SearchContext, ops: MoneyOp[], leased: boolean, keeper: AnswerKeeper | null): Promise<AttemptResult> {
    return attempt(steps, ctx, ops, this, leased, keeper);
  }

  /** A provider call holds nothing outside its money ops. */
  close(): void {}
}

/**
 * A reserved attempt's provider call (undici, with a timer that aborts it): its result is
 * `success` (charged for the results it returned) or `error` (a provider timeout keeps the
 * model's base price, any other failure keeps nothing; a call cut short by the search's own
 * time limit that ran out of it is `deadline`: no provider timeout, refunded). It queues in `ops` what it gives back with
 * the search's next round trip: the provider lease, and on an error what its reservation
 * holds above what it keeps. An adapter that throws is a connection failure.
 *
 * `leased` false (admitted without a provider lease: a follower whose leader failed): the
 * lease is taken first, in one round trip of its own; with none free the attempt is skipped
 * for capacity like any other. `keeper`: what becomes of a successful answer (the result
 * cache stores it); null: the answer is shown as `off`.
 */
export async function attempt(steps: SearchSteps, ctx: SearchContext, ops: MoneyOp[], request: AttemptRequest, leased = true, keeper: AnswerKeeper | null = null): Promise<AttemptResult> {
  const { planned, provider } = request;
  const { model, source } = planned;
  const { call } = ctx;
  if (!leased && !(await takeLease(steps, ctx, ops, request))) {
    ops.push({ kind: 'release', index: request.index, keepMicros: 0 });
    return { status: 'skipped', model, source, reason: 'capacity', priceMicros: request.amountMicros };
  }
  let outcome: ProviderOutcome;
  // One clock read before the call and one after: the same interval is the search's upstream
  // time (Server-Timing) and the provider's latency for its health.
  const { upstream } = call;
  const { health } = steps;
  const timed = upstream !== undefined || health !== undefined;
  const startedAt = timed ? performance.now() : 0;
  upstream?.begin(startedAt);
  try {
    const search = call.request;
    outcome = await steps.providers.adapter(provider).search({
      query: search.query, model, maxResults: search.maxResults, apiKey: request.apiKey, timeoutMs: request.timeoutMs, filters: search.filters,
      contents: search.contents, maxCharsPerResult: search.maxCharsPerResult,
    });
  } catch (error) {
    steps.log.error({ request_id: call.requestId, provider, err: describeError(error) }, 'provider adapter threw');
    outcome = { ok: false, kind: 'connection', error: 'provider call failed', status: null };
  }
  const endedAt = timed ? performance.now() : 0;
  upstream?.end(endedAt);
  // A call whose timeout the search's own time limit cut short (SEARCH_MAX_DURATION_MS) and that
  // ran out of it is no provider timeout: it says nothing of the provider's health, and keeps
  // no base price (the spec's rule is for a provider timeout). Decision 0044.
  const cut = !outcome.ok && outcome.kind === 'timeout' && request.timeoutMs < steps.settings.providerTimeoutMs;
  // Provider health (docs/decisions/0027): in-process counters, flushed to Redis in the background.
  if (!cut) health?.record(provider, source, model.id, outcome.ok ? 'ok' : outcome.kind, endedAt - startedAt);
  if (outcome.ok) {
    ops.push({ kind: 'unlease', provider, leaseId: request.leaseId });
    const chargedMicros = chargeOf(planned, outcome.results.length, steps.settings);
    if (keeper === null) return { status: 'success', model, source, results: outcome.results, reservedMicros: planned.priceMicros, chargedMicros, cache: CACHE_OFF };
    const kept = keeper.kept(request, outcome.results);
    return { status: 'success', model, source, results: kept.results, reservedMicros: planned.priceMicros, chargedMicros, cache: kept.cache };
  }
  if (cut) {
    ops.push({ kind: 'release', index: request.index, keepMicros: 0 }, { kind: 'unlease', provider, leaseId: request.leaseId });
    return { status: 'error', model, source, kind: 'deadline', error: outcome.error, reservedMicros: planned.priceMicros, chargedMicros: 0 };
  }
  steps.metrics.countFailure(provider, outcome.kind);
  if (outcome.kind === 'bad_key' && source === 'platform') {
    steps.log.warn({ request_id: call.requestId, provider, status: outcome.status }, 'the platform key was rejected by the provider: replace it');
  }
  const kept = outcome.kind === 'timeout' ? keptOnTimeout(planned, steps.settings) : 0;
  ops.push({ kind: 'release', index: request.index, keepMicros: kept }, { kind: 'unlease', provider, leaseId: request.leaseId });
  return { status: 'error', model, source, kind: outcome.kind, error: outcome.error, reservedMicros: planned.priceMicros, chargedMicros: kept };
}

/**
 * The provider lease of an attempt admitted without one, in one round trip with the search's
 * leftover ops (the account lease extended too: the attempt may have waited). False when the
 * provider is at capacity, or when Redis did not answer (logged; the leftover ops stay queued).
 */
async function takeLease(steps: SearchSteps, ctx: SearchContext, ops: MoneyOp[], request: AttemptRequest): Promise<boolean> {
  const leftover = ops.splice(0);
  try {
    return await steps.money.lease(ctx.scope, leftover, request, steps.settings.admission.leaseTtlMs);
  } catch (error) {
    ops.unshift(...leftover);
    steps.log.error({ request_id: ctx.call.requestId, provider: request.provider, err: describeError(error) }, 'provider lease failed; the attempt is skipped as at capacity');
    return false;
  }
}
