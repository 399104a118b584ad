import { cachePriceMicros, resultCap } from '@svc/contracts';
import type { Micros } from '@svc/money';
import { cacheDigest, cacheKeys, canonicalFilters, SHARED_SCOPE } from '../../cache/cache.key';
import { CACHE_MISS, CACHE_OFF } from '../../cache/cache.ticket';
import type { AttemptCache, CacheTicket } from '../../cache/cache.ticket';
import type { CachedAnswer } from '../../cache/result-cache';
import type { MoneyOp } from '../../money/money.ops';
import type { NormalizedResult } from '../../providers';
import { ResultsJson } from '../search.outcome';
import type { AttemptResult, AttemptResults } from '../search.outcome';
import type { SearchRequest } from '../search.schema';
import { chargeOf } from './plan';
import type { AttemptRequest } from './plan';
import type { SearchContext, SearchSteps } from './search-steps';

/**
 * The result cache's part in a search (docs/decisions/0023): before each attempt's
 * admission, in its provider call, and after it. The cache itself (src/cache) knows nothing
 * of the search; this step is where the two meet.
 */

/** The filters of a search that change its answer, as the cache key takes them (every one of them). */
export function cacheFilters(request: SearchRequest): object {
  // The filters in the contracts' canonical form (canonicalFilters of @svc/contracts); none: {}.
  return request.filters ?? NO_FILTERS;
}

const NO_FILTERS: object = Object.freeze({});

/**
 * Before an attempt's admission: looks up its model's entry (unless the search asked for
 * `refresh` or `off`, or the deployment has no cache) and returns the request the admission
 * takes: unchanged, or carrying its ticket; a hit's reserves the cache price instead.
 */
export function prepareAttempt(steps: SearchSteps, ctx: SearchContext, request: AttemptRequest): AttemptRequest | Promise<AttemptRequest> {
  const cache = steps.cache;
  const search = ctx.call.request;
  if (cache === undefined || search.cache === 'off') return request;
  const { planned } = request;
  const asked = resultCap(planned.model, search.maxResults);
  const digest = cacheDigest(planned.model.id, search.query, canonicalFilters(cacheFilters(search)));
  const keys = cacheKeys(digest, planned.source === 'byok' ? { kind: 'account', accountId: ctx.scope.accountId } : SHARED_SCOPE);
  const entry = keys.account ?? keys.shared;
  const maxAgeMs = search.cacheMaxAgeS === null ? null : search.cacheMaxAgeS * 1000;
  const token = request.leaseId;
  if (search.cache === 'refresh') return withTicket(request, { kind: 'miss', entry, asked, maxAgeMs, token }, request.amountMicros);
  // The search's own entry first: a lead is taken there.
  const entries = keys.account === null ? [keys.shared] : [keys.account, keys.shared];
  // This gateway's own copy of an entry its lookup found in Redis in the last CACHE_LOCAL_TTL_MS: no lookup
  // goes to Redis, and the admission takes the cache price and no provider lease at once.
  const local = cache.lookupLocal(entries, asked, maxAgeMs);
  if (local !== null) return withHit(request, cache.settings.pricePercent, { kind: 'hit', entry, asked, answer: local });
  return cache.lookup(entries, asked, maxAgeMs, token, true, planned.model.id).then((found) => {
    if (found.kind !== 'hit') return withTicket(request, { kind: found.kind, entry, asked, maxAgeMs, token }, request.amountMicros);
    return withHit(request, cache.settings.pricePercent, { kind: 'hit', entry, asked, answer: found.answer });
  });
}

/** The request with a hit's ticket, reserving the cache price. */
function withHit(request: AttemptRequest, pricePercent: number, hit: Omit<Extract<CacheTicket, { kind: 'hit' }>, 'priceMicros'>): AttemptRequest {
  const price = cachePriceOf(request, pricePercent);
  return withTicket(request, { ...hit, priceMicros: price }, price);
}

/** A hit's or joined search's price: the model's cache price, never more than the attempt would cost from the provider (a BYOK attempt's fee can be lower). */
function cachePriceOf(request: AttemptRequest, pricePercent: number): Micros {
  return Math.min(cachePriceMicros(request.planned.model, pricePercent), request.planned.priceMicros);
}

/** The request with its ticket (one literal of AttemptRequest's shape). */
function withTicket(request: AttemptRequest, cache: CacheTicket, amountMicros: Micros): AttemptRequest {
  return {
    planned: request.planned, provider: request.provider, leaseId: request.leaseId, cap: request.cap, lifetimeMs: request.lifetimeMs,
    index: request.index, amountMicros, claim: request.claim, apiKey: request.apiKey, timeoutMs: request.timeoutMs, cache,
  };
}

/** A hit takes no provider lease; every other attempt does. */
export function takesProviderLease(request: AttemptRequest): boolean {
  return request.cache?.kind !== 'hit';
}

/**
 * The attempt's answer from the cache, when it has one: a hit's stored answer, or (a
 * follower) the leader's answer once stored. Null: call the provider (a follower whose
 * leader failed, went away or ran past the provider timeout goes on alone).
 */
export async function answerFromCache(steps: SearchSteps, ops: MoneyOp[], request: AttemptRequest): Promise<AttemptResult | null> {
  const ticket = request.cache;
  const cache = steps.cache;
  if (ticket === undefined || cache === undefined) return null;
  if (ticket.kind === 'hit') return served(steps, request, ticket.asked, ticket.answer, 'hit', ticket.priceMicros);
  if (ticket.kind !== 'follow') return null;
  const joined = await cache.join(ticket.entry, ticket.asked, ticket.maxAgeMs, request.timeoutMs);
  if (joined.kind !== 'joined') return null;
  // It held a provider lease to be able to go on alone: give it back with the next round trip.
  ops.push({ kind: 'unlease', provider: request.provider, leaseId: request.leaseId });
  return served(steps, request, ticket.asked, joined.answer, 'joined', cachePriceOf(request, cache.settings.pricePercent));
}

function served(steps: SearchSteps, request: AttemptRequest, asked: number, answer: CachedAnswer, status: 'hit' | 'joined', priceMicros: Micros): AttemptResult {
  const { planned } = request;
  const results = answer.count > asked ? firstResults(answer, asked) : new ResultsJson(answer.count, answer.json);
  steps.cache?.metrics?.counted(planned.model.id, status);
  const full = chargeOf(planned, results.length, steps.settings);
  return {
    status: 'success', model: planned.model, source: planned.source, results, reservedMicros: request.amountMicros, chargedMicros: priceMicros,
    cache: { status, ageS: answer.ageS, savedMicros: Math.max(0, full - priceMicros) },
  };
}

/** An entry holding more results than asked: its first `asked` (the one case a stored text is parsed). */
function firstResults(answer: CachedAnswer, asked: number): AttemptResults {
  const all = JSON.parse(answer.json) as NormalizedResult[];
  return all.slice(0, asked);
}

/**
 * After the provider answered: a complete answer is stored (replacing the lead, if any),
 * then counted as a miss. The results' JSON is made once, for the store and the reply.
 */
export function afterSuccess(steps: SearchSteps, request: AttemptRequest, results: readonly NormalizedResult[]): { cache: AttemptCache; results: AttemptResults } {
  const ticket = request.cache;
  const cache = steps.cache;
  if (cache === undefined) return { cache: CACHE_OFF, results };
  if (ticket === undefined) {
    cache.metrics?.counted(request.planned.model.id, 'off');
    return { cache: CACHE_OFF, results };
  }
  cache.metrics?.counted(request.planned.model.id, 'miss');
  const json = JSON.stringify(results);
  cache.store(ticket.entry, request.planned.model.id, ticket.asked, results.length, json, ticket.kind === 'lead' ? ticket.token : '');
  return { cache: CACHE_MISS, results: new ResultsJson(results.length, json) };
}

/** After the provider failed: nothing is stored; a leader gives back its lead so the searches waiting go on alone. */
export function afterFailure(steps: SearchSteps, request: AttemptRequest): void {
  abandonTicket(steps, request);
}

/** An attempt that led but will not call the provider (blocked, refused, a fault): its lead goes back at once. */
export function abandonTicket(steps: SearchSteps, request: AttemptRequest): void {
  const ticket = request.cache;
  if (ticket?.kind === 'lead') steps.cache?.release(ticket.entry, ticket.token);
}
