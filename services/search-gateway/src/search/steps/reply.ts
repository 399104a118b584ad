import { CACHE_STATUSES } from '@svc/contracts';
import type { CacheStatus } from '@svc/contracts';
import { AppError, errorBody } from '@svc/errors';
import { microsToUsd } from '@svc/money';
import { cutPassages, cutText } from '../../providers';
import type { NormalizedResult } from '../../providers';
import { parseStored } from '../idempotency';
import { attemptView, decideOutcome, resultsJsonText, skipMessage } from '../search.outcome';
import { ResultsJson } from '../search.outcome';
import type { AttemptResult, AttemptResults, SearchOutcome } from '../search.outcome';
import { refuse } from '../search.result';
import type { AttemptedRequest, RateLimitState, SearchReply, SearchResult } from '../search.result';
import type { SearchContext, SearchSteps } from './search-steps';

/**
 * The search's answer from its attempts (docs/api.md 10.5): 200 with the answering model's
 * results and what the search cost in all; else 402 (money blocked every model), 503 (every
 * other model at capacity) or 502 (anything else), each in the platform's error body.
 */
export function buildReply(requestId: string, attempts: readonly AttemptResult[], elapsedMs: number, rateLimit: RateLimitState | undefined, maxTotalChars: number | null = null): SearchReply {
  const outcome = decideOutcome(attempts);
  if (outcome.kind !== 'success') return outcomeReply(outcome, 'search', requestId, attempts, rateLimit);
  const answered = attempts[outcome.index];
  if (answered === undefined || answered.status !== 'success') throw new Error('success index without a success');
  const charged = attempts.reduce((sum, a) => sum + (a.status === 'skipped' ? 0 : a.chargedMicros), 0);
  const head = { request_id: requestId, model: answered.model.id, provider: answered.model.provider, source: answered.source };
  const cache = { status: answered.cache?.status ?? 'off', age_s: answered.cache?.ageS ?? 0 };
  const tail = {
    // What this request cost in all: the answer plus any timed-out attempt's base price.
    cost_usd: microsToUsd(charged),
    attempts: attempts.slice(0, outcome.index).map(attemptView),
    latency_ms: Math.round(elapsedMs),
    cache,
  };
  // The results go in as JSON text (a cache hit's stored text is never parsed): the body is
  // {...head, results, ...tail}, in that order, as one JSON object. A budget on the answer's
  // text (max_total_chars) is the one case they are read here.
  const headText = JSON.stringify(head);
  let resultsText: string;
  let truncated = false;
  if (maxTotalChars === null) {
    resultsText = resultsJsonText(answered.results);
  } else {
    const budgeted = withinBudget(resultsOf(answered.results), maxTotalChars);
    resultsText = JSON.stringify(budgeted.results);
    truncated = budgeted.truncated;
  }
  const tailText = JSON.stringify(tail).slice(1);
  const body = `${headText.slice(0, -1)},"results":${resultsText},${truncated ? `${tailText.slice(0, -1)},"truncated":true}` : tailText}`;
  return { kind: 'reply', status: 200, body, requestId, rateLimit, attempts, cache: cache.status };
}

/**
 * The reply of a request no model answered (docs/api.md 10.5): 402 (money blocked every model),
 * 400 (every model skipped for what it cannot honour), 503 (every other model at capacity) or
 * 502 (anything else), each in the platform's error body. `what` names the request in messages.
 */
export function outcomeReply(outcome: Exclude<SearchOutcome, { kind: 'success' }>, what: 'search' | 'extract', requestId: string, attempts: readonly AttemptResult[], rateLimit: RateLimitState | undefined): SearchReply {
  switch (outcome.kind) {
    case 'payment': {
      const message = outcome.code === 'key_limit_exceeded'
        ? `this ${what} would take the key past its credit limit`
        : 'the credit balance cannot cover any of the requested models';
      return errorReply(new AppError(outcome.code, message, { needed_usd: microsToUsd(outcome.neededMicros) }), requestId, attempts, rateLimit);
    }
    case 'unsupported_filter': {
      const models = attempts.map((a) => `${a.model.id} (${a.status === 'skipped' ? (a.filters ?? []).join(', ') : ''})`).join(', ');
      return errorReply(new AppError('unsupported_filter', `no requested model can honour every filter sent: ${models}`, { attempts: attempts.map(attemptView) }), requestId, attempts, rateLimit);
    }
    case 'unsupported_option': {
      const models = attempts.map((a) => `${a.model.id} (${a.status === 'skipped' ? skipMessage(a) : a.status})`).join(', ');
      return errorReply(new AppError('unsupported_option', `no requested model can honour what was sent: ${models}`, { attempts: attempts.map(attemptView) }), requestId, attempts, rateLimit);
    }
    case 'overloaded': {
      const reply = errorReply(new AppError('overloaded', 'every allowed model is at capacity; retry shortly'), requestId, attempts, rateLimit);
      const retryAfterSeconds = breakerRetryAfterSeconds(attempts);
      return retryAfterSeconds === undefined ? reply : { ...reply, retryAfterSeconds };
    }
    case 'failed':
      return errorReply(new AppError('all_providers_failed', 'every attempted model failed or was unavailable', { attempts: attempts.map(attemptView) }), requestId, attempts, rateLimit);
  }
}

/** A search answer's results as objects (a cache hit's stored text parsed: only under a budget). */
function resultsOf(results: AttemptResults): readonly NormalizedResult[] {
  if (results instanceof ResultsJson) return JSON.parse(results.json) as NormalizedResult[];
  return results as readonly NormalizedResult[];
}

/**
 * A search's results within `maxChars` characters of text (titles, snippets, text and
 * highlights, in order): the first results whole, then the one that crosses the budget with its
 * text (else highlights, else snippet) cut to what is left, and none after it. `truncated`
 * when anything was cut or dropped.
 */
export function withinBudget(results: readonly NormalizedResult[], maxChars: number): { results: NormalizedResult[]; truncated: boolean } {
  const out: NormalizedResult[] = [];
  let left = maxChars;
  for (const result of results) {
    const highlights = result.highlights ?? [];
    const size = result.title.length + result.snippet.length + (result.text?.length ?? 0) + highlights.reduce((sum, h) => sum + h.length, 0);
    if (size <= left) {
      out.push(result);
      left -= size;
      continue;
    }
    const room = left - result.title.length;
    if (room > 0) out.push(cutResult(result, room));
    return { results: out, truncated: true };
  }
  return { results: out, truncated: false };
}

/** One result cut to `room` characters besides its title: its text first, then its highlights, then its snippet. */
function cutResult(result: NormalizedResult, room: number): NormalizedResult {
  let left = room;
  const snippet = cutText(result.snippet, left);
  left -= snippet.length;
  const cut: { -readonly [K in keyof NormalizedResult]: NormalizedResult[K] } = { ...result, snippet };
  if (result.text !== undefined) {
    cut.text = cutText(result.text, left);
    left -= cut.text.length;
    cut.truncated = true;
  }
  if (result.highlights !== undefined) {
    cut.highlights = cutPassages(result.highlights, Math.max(0, left)).passages;
    cut.truncated = true;
  }
  return cut;
}

/**
 * When every model that money did not block was skipped by an open breaker: the seconds until
 * the first cool-down ends (at least 1); undefined when any was at capacity (Retry-After 1).
 */
export function breakerRetryAfterSeconds(attempts: readonly AttemptResult[]): number | undefined {
  let shortest = Number.POSITIVE_INFINITY;
  for (const attempt of attempts) {
    if (attempt.status !== 'skipped' || attempt.reason === 'balance' || attempt.reason === 'limit') continue;
    if (attempt.reason !== 'failing') return undefined;
    shortest = Math.min(shortest, attempt.retryAfterMs ?? 1_000);
  }
  return shortest === Number.POSITIVE_INFINITY ? undefined : Math.max(1, Math.ceil(shortest / 1000));
}

/** An error outcome of the attempts as a reply (kept under the Idempotency-Key like a 200). */
function errorReply(error: AppError, requestId: string, attempts: readonly AttemptResult[], rateLimit: RateLimitState | undefined): SearchReply {
  return { kind: 'reply', status: error.status, body: JSON.stringify(errorBody(error, requestId)), requestId, rateLimit, attempts };
}

/**
 * The first request's outcome for a repeat of its Idempotency-Key: at once when done, else
 * after polling for it (bounded by how long the first can run). Its reply carries the first
 * request's status, body and request id, and none of its attempts (nothing ran here).
 * Refused when the key was used with another body, or when the first has not finished.
 */
export async function replay<R extends AttemptedRequest>(steps: SearchSteps<R>, ctx: SearchContext<R>, stored: string, rateLimit: RateLimitState | undefined): Promise<SearchResult> {
  const key = ctx.scope.idempotencyKey;
  const idempotency = ctx.call.idempotency;
  if (key === null || idempotency === null) throw new Error('replay without an idempotency key');
  const deadline = Date.now() + ctx.boundMs;
  let text: string | null = stored;
  for (;;) {
    const value = text === null ? undefined : parseStored(text);
    if (value === undefined) break;
    if (value.digest !== idempotency.bodyDigest) return refuse.bodyMismatch(ctx.call.requestId);
    if (value.state === 'done') return { kind: 'reply', status: value.status, body: value.body, requestId: value.rid, rateLimit, attempts: undefined, cache: value.status === 200 ? storedCacheStatus(value.body) : undefined };
    if (Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, steps.settings.idempotencyPollMs));
    text = await steps.money.readIdempotency(key);
  }
  return refuse.firstRunning(ctx.call.requestId);
}

/** The cache status in a stored 200 body (an idempotent repeat answers the first's, header included). */
function storedCacheStatus(body: string): CacheStatus | undefined {
  try {
    const parsed = JSON.parse(body) as { cache?: { status?: unknown } };
    const status = parsed.cache?.status;
    return typeof status === 'string' && (CACHE_STATUSES as readonly string[]).includes(status) ? status as CacheStatus : undefined;
  } catch {
    return undefined;
  }
}
