import type { CacheStatus } from '@svc/contracts';
import { microsToUsd } from '@svc/money';
import { decideOutcome, skipMessage } from '../search.outcome';
import type { AttemptResult } from '../search.outcome';
import type { RateLimitState, SearchReply } from '../search.result';
import { mergeRanked } from './merge';
import type { MergedResult, RankedList } from './merge';
import { outcomeReply, resultsOf, withinBudget } from './reply';
import type { SearchContext } from './search-steps';

/** FANOUT_RRF_K's default: the constant of the method's paper. */
export const DEFAULT_RRF_K = 60;

/** One model of a fan-out as the answer shows it (FanoutAttempt in @svc/contracts). */
interface FanoutAttemptView {
  model: string;
  source?: 'platform' | 'byok';
  status: 'success' | 'error' | 'skipped';
  results?: number;
  cost_usd: number;
  error?: string;
  cache?: { status: CacheStatus; age_s: number };
}

/** What a fan-out's reply tells the metrics: the models called, the merged results, the duplicates removed. */
export interface FanoutFigures {
  readonly width: number;
  readonly merged: number;
  readonly duplicates: number;
}

/**
 * A fan-out's answer from its attempts (docs/api.md, "Fan-out"): with at least one model
 * answering, 200 with their results merged (steps/merge.ts), every model's attempt with its own
 * cost, and the total; with none, the replies of a search no model answered (402, 400, 503,
 * 502), decided from the same attempts.
 */
export function buildFanoutReply(ctx: SearchContext, attempts: readonly AttemptResult[], elapsedMs: number, rateLimit: RateLimitState | undefined, k: number): SearchReply {
  const { request, requestId } = ctx.call;
  let width = 0;
  let charged = 0;
  const lists: RankedList[] = [];
  const models: string[] = [];
  let allHits = true;
  let anyMiss = false;
  let oldest = 0;
  for (const attempt of attempts) {
    if (attempt.status === 'skipped') continue;
    width += 1;
    charged += attempt.chargedMicros;
    if (attempt.status !== 'success') continue;
    models.push(attempt.model.id);
    lists.push({ model: attempt.model.id, results: resultsOf(attempt.results) });
    const cache = attempt.cache?.status ?? 'off';
    if (cache === 'hit' || cache === 'joined') oldest = Math.max(oldest, attempt.cache?.ageS ?? 0);
    else allHits = false;
    if (cache === 'miss') anyMiss = true;
  }
  if (models.length === 0) {
    const outcome = decideOutcome(attempts);
    if (outcome.kind === 'success') throw new Error('a fan-out without an answer decided success');
    return { ...outcomeReply(outcome, 'search', requestId, attempts, rateLimit), fanout: { width, merged: 0, duplicates: 0 } };
  }
  const merged = mergeRanked(lists, { k, maxResults: request.maxResults, filters: request.filters });
  let results: readonly MergedResult[] = merged.results;
  let truncated = false;
  if (request.maxTotalChars !== null) {
    const budgeted = withinBudget(merged.results, request.maxTotalChars);
    results = budgeted.results;
    truncated = budgeted.truncated;
  }
  const cache: { status: CacheStatus; age_s: number } = allHits ? { status: 'hit', age_s: oldest } : { status: anyMiss ? 'miss' : 'off', age_s: 0 };
  const body: Record<string, unknown> = {
    request_id: requestId,
    strategy: 'fanout',
    models,
    results,
    // The sum of the attempts' cost_usd: every answer's price for its results, every timeout's base price.
    cost_usd: microsToUsd(charged),
    attempts: attempts.map(fanoutAttemptView),
    duplicates_removed: merged.duplicates,
    latency_ms: Math.round(elapsedMs),
    cache,
  };
  if (truncated) body.truncated = true;
  return {
    kind: 'reply', status: 200, body: JSON.stringify(body), requestId, rateLimit, attempts, cache: cache.status,
    fanout: { width, merged: results.length, duplicates: merged.duplicates },
  };
}

/** A fan-out's attempt as the answer shows it: every model, with what it cost. */
function fanoutAttemptView(attempt: AttemptResult): FanoutAttemptView {
  switch (attempt.status) {
    case 'success': {
      const cache = attempt.cache;
      return {
        model: attempt.model.id, source: attempt.source, status: 'success', results: attempt.results.length, cost_usd: microsToUsd(attempt.chargedMicros),
        cache: { status: cache?.status ?? 'off', age_s: cache?.ageS ?? 0 },
      };
    }
    case 'error':
      return { model: attempt.model.id, source: attempt.source, status: 'error', cost_usd: microsToUsd(attempt.chargedMicros), error: attempt.error };
    case 'skipped': {
      const view: FanoutAttemptView = { model: attempt.model.id, status: 'skipped', cost_usd: 0, error: skipMessage(attempt) };
      return attempt.source === null ? view : { model: view.model, source: attempt.source, status: 'skipped', cost_usd: 0, error: view.error };
    }
  }
}
