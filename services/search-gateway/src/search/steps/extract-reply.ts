import { microsToUsd } from '@svc/money';
import { cutText } from '../../providers';
import { decideOutcome, skipMessage } from '../search.outcome';
import type { AttemptResult, ExtractedPage } from '../search.outcome';
import type { RateLimitState, SearchReply } from '../search.result';
import type { ExtractContext } from './extract';
import { outcomeReply } from './reply';

/** An extract attempt as the answer shows it (docs/api.md, "Extract"). */
interface ExtractAttemptView {
  model: string;
  source?: 'platform' | 'byok';
  status: 'success' | 'error' | 'skipped';
  urls: number;
  succeeded: number;
  failed: number;
  cost_usd: number;
  error?: string;
}

/** One page of the answer. */
interface ExtractResultView {
  url: string;
  model: string;
  provider: string;
  source: 'platform' | 'byok';
  title: string | null;
  text: string;
  published_at: string | null;
  chars: number;
  truncated: boolean;
  cache: { status: string; age_s: number };
}

/** What a URL that was never tried fails with (every model after the one that fetched the others was skipped). */
const NOT_TRIED = 'no model could fetch it';

/**
 * The extract's answer from its attempts (docs/api.md, "Extract"): 200 with a result per URL
 * that came back (from whichever model fetched it), the URLs no model could fetch, every
 * attempt, and what the request cost; when no URL came back, the search's refusals (402, 400,
 * 503) or 502 all_providers_failed, in the platform's error body.
 */
export function buildExtractReply(ctx: ExtractContext, attempts: readonly AttemptResult[], elapsedMs: number, rateLimit: RateLimitState | undefined): SearchReply {
  const { call } = ctx;
  const { requestId } = call;
  if (!attempts.some((a) => a.status === 'success')) {
    const outcome = decideOutcome(attempts);
    if (outcome.kind === 'success') throw new Error('an extract without a page answered success');
    return outcomeReply(outcome, 'extract', requestId, attempts, rateLimit);
  }
  const request = call.request;
  const byUrl = new Map<string, { page: ExtractedPage; attempt: Extract<AttemptResult, { status: 'success' }> }>();
  const lastError = new Map<string, string>();
  let charged = 0;
  for (const attempt of attempts) {
    if (attempt.status === 'skipped') continue;
    charged += attempt.chargedMicros;
    for (const failure of attempt.extract?.failed ?? []) lastError.set(failure.url, failure.error);
    if (attempt.status !== 'success') continue;
    for (const page of attempt.results as readonly ExtractedPage[]) if (!byUrl.has(page.url)) byUrl.set(page.url, { page, attempt });
  }
  const results: ExtractResultView[] = [];
  const failed: { url: string; error: string }[] = [];
  let left = request.maxTotalChars ?? Number.POSITIVE_INFINITY;
  let truncated = false;
  let allHits = true;
  let anyMiss = false;
  let oldest = 0;
  for (const url of request.urls) {
    const found = byUrl.get(url);
    if (found === undefined) {
      failed.push({ url, error: lastError.get(url) ?? NOT_TRIED });
      continue;
    }
    const { page, attempt } = found;
    if (page.cache.status === 'hit') oldest = Math.max(oldest, page.cache.ageS);
    else allHits = false;
    if (page.cache.status === 'miss') anyMiss = true;
    // The answer's budget: a page that fits goes in whole, the one that crosses it is cut, none after it.
    const room = left - (page.title?.length ?? 0);
    if (room <= 0) {
      truncated = true;
      left = 0;
      continue;
    }
    const text = page.text.length > room ? cutText(page.text, room) : page.text;
    left -= (page.title?.length ?? 0) + text.length;
    const cut = text.length < page.text.length;
    if (page.truncated || cut) truncated = true;
    results.push({
      url, model: attempt.model.id, provider: attempt.model.provider, source: attempt.source, title: page.title, text, published_at: page.published_at,
      chars: text.length, truncated: page.truncated || cut, cache: { status: page.cache.status, age_s: page.cache.ageS },
    });
  }
  const cache = allHits ? { status: 'hit' as const, age_s: oldest } : { status: anyMiss ? 'miss' as const : 'off' as const, age_s: 0 };
  const body = JSON.stringify({
    request_id: requestId, results, failed, attempts: attempts.map(extractAttemptView), cost_usd: microsToUsd(charged),
    latency_ms: Math.round(elapsedMs), cache, truncated,
  });
  return { kind: 'reply', status: 200, body, requestId, rateLimit, attempts, cache: cache.status };
}

/** One attempt as the answer's `attempts` show it. */
export function extractAttemptView(attempt: AttemptResult): ExtractAttemptView {
  switch (attempt.status) {
    case 'skipped': {
      const view: ExtractAttemptView = { model: attempt.model.id, status: 'skipped', urls: 0, succeeded: 0, failed: 0, cost_usd: 0, error: skipMessage(attempt) };
      return attempt.source === null ? view : { ...view, source: attempt.source };
    }
    case 'error': {
      const urls = attempt.extract?.urls ?? 0;
      return { model: attempt.model.id, source: attempt.source, status: 'error', urls, succeeded: 0, failed: urls, cost_usd: microsToUsd(attempt.chargedMicros), error: attempt.error };
    }
    case 'success': {
      const urls = attempt.extract?.urls ?? 0;
      const failedCount = attempt.extract?.failed.length ?? 0;
      const view: ExtractAttemptView = { model: attempt.model.id, source: attempt.source, status: 'success', urls, succeeded: attempt.results.length, failed: failedCount, cost_usd: microsToUsd(attempt.chargedMicros) };
      if (failedCount > 0) view.error = `${failedCount} of ${urls} URLs could not be fetched`;
      return view;
    }
  }
}
