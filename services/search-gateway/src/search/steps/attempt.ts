import { describeError } from '@svc/errors';
import type { MoneyOp } from '../../money/money.ops';
import type { ProviderOutcome } from '../../providers';
import type { AttemptResult } from '../search.outcome';
import { afterFailure, afterSuccess, answerFromCache } from './cache';
import { chargeOf, keptOnTimeout } from './plan';
import type { AttemptRequest } from './plan';
import type { SearchContext, SearchSteps } from './search-steps';

/**
 * A reserved attempt's provider call (undici, with a timer that aborts it): its result is
 * `success` (charged for the results it returned) or `error` (a timeout keeps the model's
 * base price, any other failure keeps nothing). It queues in `ops` what it gives back with
 * the search's next round trip: the provider lease, and on an error what its reservation
 * holds above what it keeps. An adapter that throws is a connection failure.
 */
export async function attempt(steps: SearchSteps, ctx: SearchContext, ops: MoneyOp[], request: AttemptRequest): Promise<AttemptResult> {
  const { planned, provider } = request;
  const { model, source } = planned;
  const { call } = ctx;
  if (request.cache !== undefined) {
    const cached = await answerFromCache(steps, ops, request);
    if (cached !== null) return cached;
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
    outcome = await steps.providers.adapter(provider).search({ query: call.request.query, model, maxResults: call.request.maxResults, apiKey: request.apiKey, timeoutMs: request.timeoutMs, filters: call.request.filters });
  } catch (error) {
    steps.log.error({ request_id: call.requestId, provider, err: describeError(error) }, 'provider adapter threw');
    outcome = { ok: false, kind: 'connection', error: 'provider call failed', status: null };
  }
  const endedAt = timed ? performance.now() : 0;
  upstream?.end(endedAt);
  // Provider health (docs/decisions/0027): in-process counters, flushed to Redis in the background.
  health?.record(provider, source, model.id, outcome.ok ? 'ok' : outcome.kind, endedAt - startedAt);
  if (outcome.ok) {
    ops.push({ kind: 'unlease', provider, leaseId: request.leaseId });
    const { cache, results } = afterSuccess(steps, request, outcome.results);
    return { status: 'success', model, source, results, reservedMicros: planned.priceMicros, chargedMicros: chargeOf(planned, outcome.results.length, steps.settings), cache };
  }
  if (request.cache !== undefined) afterFailure(steps, request);
  steps.metrics.countFailure(provider, outcome.kind);
  if (outcome.kind === 'bad_key' && source === 'platform') {
    steps.log.warn({ request_id: call.requestId, provider, status: outcome.status }, 'the platform key was rejected by the provider: replace it');
  }
  const kept = outcome.kind === 'timeout' ? keptOnTimeout(planned, steps.settings) : 0;
  ops.push({ kind: 'release', index: request.index, keepMicros: kept }, { kind: 'unlease', provider, leaseId: request.leaseId });
  return { status: 'error', model, source, kind: outcome.kind, error: outcome.error, reservedMicros: planned.priceMicros, chargedMicros: kept };
}
