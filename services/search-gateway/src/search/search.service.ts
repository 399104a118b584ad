import { modelAllowed, RESERVATION_TTL_GRACE_MS } from '@svc/contracts';
import type { Logger } from 'pino';
import { NO_PROVIDER_KEYS } from '../byok/provider-key-cache';
import type { ProviderKeyCache } from '../byok/provider-key-cache';
import type { ResultCache } from '../cache/result-cache';
import type { MoneyOp } from '../money/money.ops';
import { moneyScope } from '../money/money.scope';
import type { MoneyRepository } from '../money/money.repository';
import type { ProviderKeySet } from '../byok/provider-key-cache';
import { CacheAnswers } from './cache-answers';
import { ExtractCacheAnswers } from './extract-cache-answers';
import type { ExtractRequest } from './extract.schema';
import { claimValue } from './idempotency';
import type { SearchMetrics } from './search.metrics';
import type { AttemptResult } from './search.outcome';
import { refuse } from './search.result';
import type { AttemptedRequest, RateLimitState, SearchCall, SearchReply, SearchResult } from './search.result';
import type { SearchRequest } from './search.schema';
import { admitFirst, admitNext, releaseAccountLease } from './steps/admit';
import type { Admission } from './steps/admit';
import { extractCall, extractDone, extractGate, extractPlanPrice } from './steps/extract';
import { buildExtractReply } from './steps/extract-reply';
import { nextAttempt, nextOf, planAttempts, planOf, runningBoundMs } from './steps/plan';
import { buildReply, replay } from './steps/reply';
import { settle } from './steps/settle';
import type { Settled } from './steps/settle';
import type { Callable, ModelOf, PlannedAttempt, SearchContext, SearchHealth, SearchMoney, SearchProviders, SearchSettings, SearchSteps } from './steps/search-steps';

export type { SearchSettings } from './steps/search-steps';

/** MoneyRepository as the service uses it: the steps' port, and the batch's state and shutdown. */
export type ServiceMoney = SearchMoney & Pick<MoneyRepository, 'batchStatus' | 'drainSettlements' | 'close'>;
export type { RateLimitState, SearchCall, SearchRefusal, SearchReply, SearchResult } from './search.result';

/**
 * What differs between the kinds of request on the attempt seam (docs/decisions/0042, 0058):
 * a search and an extract share the admission, the money, the settlement, idempotency and the
 * refusals; each has its own plan, its own attempt (a ProviderCall, an ExtractCall), its own end
 * (a search ends at its first answer, an extract once no URL is missing) and its own reply.
 * One object per kind, made once: nothing here is allocated per request.
 */
interface Flow<R extends AttemptedRequest> {
  readonly steps: SearchSteps<R>;
  plan(request: R, accountKeys: ProviderKeySet): PlannedAttempt<ModelOf<R>>[];
  next(ctx: SearchContext<R>, attempts: AttemptResult[], from: number, claim: SearchContext<R>['claim']): Callable<R> | null;
  done(result: AttemptResult, ctx: SearchContext<R>, attempts: readonly AttemptResult[]): boolean;
  reply(ctx: SearchContext<R>, attempts: readonly AttemptResult[], elapsedMs: number, rateLimit: RateLimitState | undefined): SearchReply;
}

class SearchFlow implements Flow<SearchRequest> {
  constructor(readonly steps: SearchSteps) {}

  plan(request: SearchRequest, accountKeys: ProviderKeySet): PlannedAttempt[] {
    return planAttempts(this.steps, request, accountKeys);
  }

  next(ctx: SearchContext, attempts: AttemptResult[], from: number, claim: SearchContext['claim']): Callable | null {
    return nextAttempt(this.steps, ctx, attempts, from, claim);
  }

  /** A search ends at its first answer. */
  done(result: AttemptResult): boolean {
    return result.status === 'success';
  }

  reply(ctx: SearchContext, attempts: readonly AttemptResult[], elapsedMs: number, rateLimit: RateLimitState | undefined): SearchReply {
    return buildReply(ctx.call.requestId, attempts, elapsedMs, rateLimit, ctx.call.request.maxTotalChars);
  }
}

class ExtractFlow implements Flow<ExtractRequest> {
  constructor(readonly steps: SearchSteps<ExtractRequest>) {}

  /** Each attempt reserves for the URLs still missing when its turn comes; the plan holds the most: every URL. */
  plan(request: ExtractRequest, accountKeys: ProviderKeySet): PlannedAttempt<ModelOf<ExtractRequest>>[] {
    return planOf(this.steps, request.models, accountKeys, request, extractPlanPrice);
  }

  next(ctx: SearchContext<ExtractRequest>, attempts: AttemptResult[], from: number, claim: SearchContext<ExtractRequest>['claim']): Callable<ExtractRequest> | null {
    return nextOf(this.steps, ctx, attempts, from, claim, extractGate, extractCall);
  }

  /** An extract ends once every URL came back (a model answering some of them hands the rest to the next). */
  done(_result: AttemptResult, ctx: SearchContext<ExtractRequest>, attempts: readonly AttemptResult[]): boolean {
    return extractDone(ctx, attempts);
  }

  reply(ctx: SearchContext<ExtractRequest>, attempts: readonly AttemptResult[], elapsedMs: number, rateLimit: RateLimitState | undefined): SearchReply {
    return buildExtractReply(ctx, attempts, elapsedMs, rateLimit);
  }
}

/**
 * The search path as a chain of steps (docs/decisions/0018): plan the attempts, admit the
 * first (the one awaited Redis round trip of a cached key), then per attempt call the
 * provider or pass over it and admit the next, then settle (the last round trip) and reply.
 * Each step returns a typed outcome; this class only routes between them. What the steps
 * share is explicit: the search's context (made once, never changed), its attempts so far
 * and the money ops left for its next round trip. Expected refusals are returned as data
 * (SearchRefusal) to the route and the MCP tool, which make them error replies; only faults
 * throw.
 */
export class SearchService {
  private readonly settings: SearchSettings;
  private readonly searches: SearchFlow;
  private readonly extracts: ExtractFlow;

  /**
   * Requests carrying an Idempotency-Key that are running in this process, by account, key
   * and Idempotency-Key digest. A copy that arrives while the first runs waits for the first's
   * answer and gets it as is (status, body, request id; a refusal too) without a round trip
   * to Redis: it takes no rate token, no account in-flight slot and no provider lease of its own.
   */
  private readonly runningByIdempotencyKey = new Map<string, { readonly bodyDigest: string; readonly result: Promise<SearchResult> }>();

  constructor(
    providers: SearchProviders,
    private readonly money: ServiceMoney,
    settings: SearchSettings,
    metrics: Pick<SearchMetrics, 'countFailure'>,
    log: Logger,
    /** The accounts' own provider keys; absent: BYOK off. */
    private readonly providerKeys: Pick<ProviderKeyCache, 'keysFor'> | null = null,
    /** Provider health and the breaker (docs/decisions/0027); absent: neither. */
    health?: SearchHealth,
    /** The shared result cache, the answer source in front of every provider call; absent: none (every answer is `off`). */
    cache?: ResultCache,
  ) {
    this.settings = settings;
    const answers = cache === undefined ? undefined : new CacheAnswers(cache);
    const pages = cache === undefined ? undefined : new ExtractCacheAnswers(cache);
    this.searches = new SearchFlow(health === undefined ? { money, providers, settings, metrics, log, answers } : { money, providers, settings, metrics, log, answers, health });
    this.extracts = new ExtractFlow(health === undefined ? { money, providers, settings, metrics, log, answers: pages } : { money, providers, settings, metrics, log, answers: pages, health });
  }

  search(call: SearchCall): Promise<SearchResult> {
    return this.run(this.searches, call);
  }

  /** POST /v1/extract and MCP's web_fetch (docs/decisions/0058): the search's path, with an extract's attempts. */
  extract(call: SearchCall<ExtractRequest>): Promise<SearchResult> {
    return this.run(this.extracts, call);
  }

  /** A request of either kind, once per Idempotency-Key in this process. */
  private run<R extends AttemptedRequest>(flow: Flow<R>, call: SearchCall<R>): Promise<SearchResult> {
    const idempotency = call.idempotency;
    if (idempotency === null) return this.searchOnce(flow, call);
    const key = `${call.record.accountId}/${call.record.id}/${idempotency.keyDigest}`;
    const first = this.runningByIdempotencyKey.get(key);
    if (first !== undefined) {
      return first.bodyDigest === idempotency.bodyDigest ? first.result : Promise.resolve(refuse.bodyMismatch(call.requestId));
    }
    const result = this.searchOnce(flow, call);
    this.runningByIdempotencyKey.set(key, { bodyDigest: idempotency.bodyDigest, result });
    return this.forget(key, result);
  }

  /** The batch connection to Redis that every search's admission and settlement go through is up. */
  get batchReady(): boolean {
    return this.money.batchStatus === 'ready';
  }

  /** Waits for the background settlements (shutdown); false when some were still unanswered after `timeoutMs`. */
  drainSettlements(timeoutMs: number): Promise<boolean> {
    return this.money.drainSettlements(timeoutMs);
  }

  /** Stops re-sending settlements and the retention loops (shutdown, after the drain). */
  closeSettlements(): void {
    this.money.close();
  }

  /** The first's answer, once this process no longer holds it for copies. */
  private async forget(key: string, result: Promise<SearchResult>): Promise<SearchResult> {
    try {
      return await result;
    } finally {
      if (this.runningByIdempotencyKey.get(key)?.result === result) this.runningByIdempotencyKey.delete(key);
    }
  }

  /** The plan and the request's context, then its attempts. */
  private async searchOnce<R extends AttemptedRequest>(flow: Flow<R>, call: SearchCall<R>): Promise<SearchResult> {
    const { record, requestId } = call;
    // The key's model fence: none of the requested models allowed is a refusal before anything is held.
    const modelFence = record.allowedModels;
    if (modelFence !== undefined && !call.request.models.some((model) => modelAllowed(modelFence, model))) return refuse.modelNotAllowed(requestId);
    const steps = flow.steps;
    let accountKeys = NO_PROVIDER_KEYS;
    if (this.providerKeys !== null) {
      const found = this.providerKeys.keysFor(record.accountId);
      accountKeys = found instanceof Promise ? await found : found;
    }
    const plan = flow.plan(call.request, accountKeys);
    const boundMs = runningBoundMs(this.settings, plan.length);
    const idempotency = call.idempotency;
    const scope = moneyScope(record, requestId, idempotency?.keyDigest ?? null, (this.settings.now ?? Date.now)(), boundMs + RESERVATION_TTL_GRACE_MS);
    // Fail closed: a record this gateway could not re-send after a Redis loss would be a lost charge.
    if (this.money.saturated) return refuse.saturated(requestId);
    const ctx: SearchContext<R> = {
      call, scope, plan, boundMs,
      claim: idempotency === null ? undefined : { value: claimValue(requestId, idempotency.bodyDigest), ttlMs: boundMs },
    };
    const attempts: AttemptResult[] = [];
    const ops: MoneyOp[] = [];
    const planned = flow.next(ctx, attempts, 0, ctx.claim);
    if (planned === null) {
      // No attempt reached an admission (the deadline, providers not configured): nothing is held.
      const reply = flow.reply(ctx, attempts, call.elapsedMs(), undefined);
      const settled = await settle(steps, ctx, ops, attempts, reply, false);
      return settled.kind === 'foreign' ? replay(steps, ctx, settled.stored, undefined) : reply;
    }
    return this.attempts(flow, ctx, attempts, ops, planned);
  }

  /**
   * The attempts in fallback order, each opened (its answer source: the result cache in front
   * of its provider call, or the call alone), admitted, answered or skipped, and closed in the
   * one `finally` below, where an answer source gives back what it holds (the cache's lead).
   * A search stops at its first answer, an extract once no URL is missing (the flow's `done`).
   * Then the settlement and the reply.
   *
   * The first admission (the one awaited round trip of a cached key, the answer source's
   * lookup in its flush) decides whether the search goes on: refused, a duplicate of an earlier
   * Idempotency-Key and Redis unavailable end it. Reserved or blocked, it took the account's
   * in-flight lease, held from there to the last round trip: every exit that does not give it
   * back there gives it back alone, a fault too.
   */
  private async attempts<R extends AttemptedRequest>(flow: Flow<R>, ctx: SearchContext<R>, attempts: AttemptResult[], ops: MoneyOp[], planned: Callable<R>): Promise<SearchResult> {
    const steps = flow.steps;
    const { call } = ctx;
    let first: Admission | undefined;
    let ended: Extract<Admission, { kind: 'refused' | 'duplicate' | 'unavailable' }> | undefined;
    let reply: SearchReply | undefined;
    let settled: Settled | undefined;
    try {
      for (let next: Callable<R> | null = planned; next !== null; next = flow.next(ctx, attempts, next.index + 1, undefined)) {
        const answering = steps.answers?.open(steps, ctx, next) ?? next;
        try {
          const admission = first === undefined ? (first = await admitFirst(steps, ctx, ops, answering)) : await admitNext(steps, ctx, ops, attempts, answering);
          if (admission.kind === 'reserved') {
            const result = await answering.answer(steps, ctx, ops, admission.leased, admission.reservedMicros);
            attempts.push(result);
            if (flow.done(result, ctx, attempts)) break;
          } else if (admission.kind === 'blocked') {
            const { planned: skipped } = answering.request;
            attempts.push({ status: 'skipped', model: skipped.model, source: skipped.source, reason: admission.reason, priceMicros: (answering.cheaper ?? answering.reserve).amountMicros });
          } else {
            ended = admission;
            break;
          }
        } finally {
          answering.close();
        }
      }
      if (ended === undefined) {
        reply = flow.reply(ctx, attempts, call.elapsedMs(), holdsLease(first) ? first.rateLimit : undefined);
        settled = await settle(steps, ctx, ops, attempts, reply, true);
      }
    } catch (error) {
      if (holdsLease(first)) await releaseAccountLease(steps, ctx);
      throw error;
    }
    if (ended !== undefined) return this.ended(steps, ctx, ops, ended);
    if (reply === undefined || settled === undefined) throw new Error('a search ended without a reply');
    switch (settled.kind) {
      case 'failed':
        await releaseAccountLease(steps, ctx);
        return refuse.settlementFailed(call.requestId);
      case 'foreign':
        return replay(steps, ctx, settled.stored, reply.rateLimit);
      case 'settled':
      case 'finished':
        return reply;
    }
  }

  /** A search its admission ended: refused (nothing held), Redis unavailable (the account lease given back alone), or the repeat of an earlier Idempotency-Key. */
  private async ended<R extends AttemptedRequest>(steps: SearchSteps<R>, ctx: SearchContext<R>, ops: MoneyOp[], ended: Extract<Admission, { kind: 'refused' | 'duplicate' | 'unavailable' }>): Promise<SearchResult> {
    switch (ended.kind) {
      case 'refused':
        return ended.refusal;
      case 'unavailable':
        await releaseAccountLease(steps, ctx);
        return refuse.unavailable(ctx.call.requestId);
      case 'duplicate':
        await this.money.finish(ctx.scope, ops, null);
        return replay(steps, ctx, ended.stored, ended.rateLimit);
    }
  }
}

/** Whether the search's first admission took the account's in-flight lease: it reserved or blocked. */
function holdsLease(first: Admission | undefined): first is Extract<Admission, { kind: 'reserved' | 'blocked' }> {
  return first !== undefined && (first.kind === 'reserved' || first.kind === 'blocked');
}
