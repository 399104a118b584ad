import { modelAllowed, RESERVATION_TTL_GRACE_MS } from '@svc/contracts';
import type { Logger } from 'pino';
import { NO_PROVIDER_KEYS } from '../byok/provider-key-cache';
import type { ProviderKeyCache } from '../byok/provider-key-cache';
import type { ResultCache } from '../cache/result-cache';
import type { MoneyOp } from '../money/money.ops';
import { moneyScope } from '../money/money.scope';
import type { MoneyRepository } from '../money/money.repository';
import { claimValue } from './idempotency';
import type { SearchMetrics } from './search.metrics';
import type { AttemptResult } from './search.outcome';
import { refuse } from './search.result';
import type { SearchCall, SearchReply, SearchResult } from './search.result';
import { admitFirst, admitHit, admitNext, releaseAccountLease } from './steps/admit';
import type { Admission, LaterAdmission } from './steps/admit';
import { attempt } from './steps/attempt';
import { abandonTicket, prepareAttempt } from './steps/cache';
import { nextAttempt, planAttempts, runningBoundMs } from './steps/plan';
import type { AttemptRequest } from './steps/plan';
import { buildReply, replay } from './steps/reply';
import { settle } from './steps/settle';
import type { Settled } from './steps/settle';
import type { SearchContext, SearchHealth, SearchMoney, SearchProviders, SearchSettings, SearchSteps } from './steps/search-steps';

export type { SearchSettings } from './steps/search-steps';

/** MoneyRepository as the service uses it: the steps' port, and the batch's state and shutdown. */
export type ServiceMoney = SearchMoney & Pick<MoneyRepository, 'batchStatus' | 'drainSettlements' | 'close'>;
export type { RateLimitState, SearchCall, SearchRefusal, SearchReply, SearchResult } from './search.result';

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
  private readonly steps: SearchSteps;
  private readonly settings: SearchSettings;

  /**
   * Searches carrying an Idempotency-Key that are running in this process, by account, key
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
    /** The shared result cache; absent: none (every answer is `off`). */
    cache?: ResultCache,
  ) {
    this.settings = settings;
    this.steps = health === undefined ? { money, providers, settings, metrics, log, cache } : { money, providers, settings, metrics, log, cache, health };
  }

  search(call: SearchCall): Promise<SearchResult> {
    const idempotency = call.idempotency;
    if (idempotency === null) return this.searchOnce(call);
    const key = `${call.record.accountId}/${call.record.id}/${idempotency.keyDigest}`;
    const first = this.runningByIdempotencyKey.get(key);
    if (first !== undefined) {
      return first.bodyDigest === idempotency.bodyDigest ? first.result : Promise.resolve(refuse.bodyMismatch(call.requestId));
    }
    const result = this.searchOnce(call);
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

  /** Plan, then the first admission; from there the account lease is held (holdingLease). */
  private async searchOnce(call: SearchCall): Promise<SearchResult> {
    const { record, requestId } = call;
    // The key's model fence: none of the requested models allowed is a refusal before anything is held.
    const modelFence = record.allowedModels;
    if (modelFence !== undefined && !call.request.models.some((model) => modelAllowed(modelFence, model))) return refuse.modelNotAllowed(requestId);
    const steps = this.steps;
    let accountKeys = NO_PROVIDER_KEYS;
    if (this.providerKeys !== null) {
      const found = this.providerKeys.keysFor(record.accountId);
      accountKeys = found instanceof Promise ? await found : found;
    }
    const plan = planAttempts(steps, call.request, accountKeys);
    const boundMs = runningBoundMs(this.settings, plan.length);
    const idempotency = call.idempotency;
    const scope = moneyScope(record, requestId, idempotency?.keyDigest ?? null, (this.settings.now ?? Date.now)(), boundMs + RESERVATION_TTL_GRACE_MS);
    // Fail closed: a record this gateway could not re-send after a Redis loss would be a lost charge.
    if (this.money.saturated) return refuse.saturated(requestId);
    const ctx: SearchContext = {
      call, scope, plan, boundMs,
      claim: idempotency === null ? undefined : { value: claimValue(requestId, idempotency.bodyDigest), ttlMs: boundMs },
    };
    const attempts: AttemptResult[] = [];
    const ops: MoneyOp[] = [];
    const planned = nextAttempt(steps, ctx, attempts, 0, ctx.claim);
    if (planned === null) {
      // No attempt reached an admission (the deadline, providers not configured): nothing is held.
      const reply = buildReply(requestId, attempts, call.elapsedMs(), undefined);
      const settled = await settle(steps, ctx, ops, attempts, reply, false);
      return settled.kind === 'foreign' ? replay(steps, ctx, settled.stored, undefined) : reply;
    }
    // The result cache's lookup of the attempt's model (src/cache) goes out with the first
    // admission, in the same flush (one round trip, as without a cache): the admission is a
    // miss's (the model's price, a provider lease), and admitHit fits it to a hit.
    const looked = prepareAttempt(steps, ctx, planned);
    let request: AttemptRequest;
    let first: Admission;
    if (looked instanceof Promise) {
      const [found, admission] = await Promise.all([looked, admitFirst(steps, ctx, ops, planned)]);
      ({ request, first } = found.cache?.kind === 'hit' ? await admitHit(steps, ctx, ops, planned, found, admission) : { request: found, first: admission });
    } else {
      request = looked;
      first = await admitFirst(steps, ctx, ops, request);
    }
    // An attempt that led identical searches but runs no call gives its lead back (blocked: in holdingLease).
    if (first.kind !== 'reserved' && first.kind !== 'blocked' && request.cache !== undefined) abandonTicket(steps, request);
    switch (first.kind) {
      case 'refused':
        return first.refusal;
      case 'unavailable':
        await releaseAccountLease(steps, ctx);
        return refuse.unavailable(requestId);
      case 'duplicate':
        await this.money.finish(scope, ops, null);
        return replay(steps, ctx, first.stored, first.rateLimit);
      default:
        return this.holdingLease(ctx, attempts, ops, request, first);
    }
  }

  /**
   * The attempts from the first admitted one, the settlement and the reply, while the
   * account in-flight lease is held: every exit that does not give it back in its last round
   * trip gives it back alone (a fault too, before it is thrown on).
   */
  private async holdingLease(ctx: SearchContext, attempts: AttemptResult[], ops: MoneyOp[], firstRequest: AttemptRequest, first: Extract<Admission, { kind: 'reserved' | 'blocked' }>): Promise<SearchResult> {
    const steps = this.steps;
    const { call } = ctx;
    let reply: SearchReply;
    let settled: Settled;
    let request = firstRequest;
    try {
      let admission: LaterAdmission = first;
      for (;;) {
        if (admission.kind !== 'reserved' && request.cache !== undefined) abandonTicket(steps, request);
        if (admission.kind === 'unavailable') {
          await releaseAccountLease(steps, ctx);
          return refuse.unavailable(call.requestId);
        }
        if (admission.kind === 'blocked') {
          attempts.push({ status: 'skipped', model: request.planned.model, source: request.planned.source, reason: admission.reason, priceMicros: request.amountMicros });
        } else {
          const result = await attempt(steps, ctx, ops, request);
          attempts.push(result);
          if (result.status === 'success') break;
        }
        const next = nextAttempt(steps, ctx, attempts, request.index + 1, undefined);
        if (next === null) break;
        const looked = prepareAttempt(steps, ctx, next);
        request = looked instanceof Promise ? await looked : looked;
        admission = await admitNext(steps, ctx, ops, attempts, request);
      }
      reply = buildReply(call.requestId, attempts, call.elapsedMs(), first.rateLimit);
      settled = await settle(steps, ctx, ops, attempts, reply, true);
    } catch (error) {
      if (request.cache !== undefined) abandonTicket(steps, request);
      await releaseAccountLease(steps, ctx);
      throw error;
    }
    switch (settled.kind) {
      case 'failed':
        await releaseAccountLease(steps, ctx);
        return refuse.settlementFailed(call.requestId);
      case 'foreign':
        return replay(steps, ctx, settled.stored, first.rateLimit);
      default:
        return reply;
    }
  }
}
