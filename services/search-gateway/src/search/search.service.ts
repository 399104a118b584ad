import { byokFeeMicros, costMicros, maxCostMicros, RESERVATION_TTL_GRACE_MS } from '@svc/contracts';
import type { KeyRecord, ModelSpec, Provider, SettledAttempt, SettlementRecord } from '@svc/contracts';
import { AppError, errorBody } from '@svc/errors';
import type { Micros } from '@svc/money';
import { microsToUsd } from '@svc/money';
import { currentTraceparent } from '@svc/tracing';
import type { Logger } from 'pino';
import { moneyScope } from '../money/money.repository';
import type { AdmissionRequest, MoneyRepository, MoneyScope, PendingOp, ReserveVerdict } from '../money/money.repository';
import type { ProviderOutcome, ProviderRegistry } from '../providers';
import { NO_PROVIDER_KEYS } from '../byok/provider-key-cache';
import type { ProviderKeyCache, ProviderKeySet } from '../byok/provider-key-cache';
import { claimValue, outcomeValue, parseStored } from './idempotency';
import type { SearchMetrics } from './search.metrics';
import { attemptView, decideOutcome, SKIP_MESSAGES } from './search.outcome';
import type { AttemptResult, AttemptSource } from './search.outcome';
import type { SearchRequest } from './search.schema';

export interface SearchSettings {
  readonly providerTimeoutMs: number;
  readonly maxInFlight: Readonly<Record<Provider, number>>;
  /** A provider lease lives the timeout plus this, so a crashed gateway frees it on its own. */
  readonly leaseMarginMs: number;
  /** How often a repeat polls for the first request's outcome. */
  readonly idempotencyPollMs: number;
  /** The key's rate and the account's in-flight cap and lease lifetime (spec section 8). */
  readonly admission: AdmissionRequest;
  /**
   * The clock that picks a key's credit-limit period (default Date.now). The period uses the
   * gateway's clock, not Redis's: a skew between gateways matters only for searches within
   * that skew of a UTC day, week or month boundary.
   */
  readonly now?: () => number;
  /** How long a search on a cold account waits for its hydration before answering 503 (default 1,500 ms). */
  readonly hydrationWaitMs?: number;
  /** SEARCH_MAX_DURATION_MS: no attempt starts after it, and an attempt's timeout is cut to what is left (default: none). */
  readonly maxDurationMs?: number;
  /** BYOK_FEE_PERCENT: a BYOK attempt is charged this percentage of the model's price (default 5). */
  readonly byokFeePercent?: number;
}

/** The key's rate-limit state after this request, for x-ratelimit-limit and x-ratelimit-remaining. */
export interface RateLimitState {
  readonly limit: number;
  readonly remaining: number;
}

/** A reply ready to send: status and JSON body (the same bytes are kept for idempotent repeats). */
export interface SearchReply {
  readonly status: number;
  readonly body: string;
  /** The request id in the body (the first request's on an idempotent repeat). */
  readonly requestId: string;
  /** Set when the request passed the rate limit (every search that reached admission). */
  readonly rateLimit?: RateLimitState;
  /** This search's attempts (unset on an idempotent repeat): read by SearchMetrics after the reply. */
  readonly attempts?: readonly AttemptResult[];
  /** The code of a refusal thrown before any attempt and made a reply (for SearchMetrics). */
  readonly refused?: string;
  /** Seconds for Retry-After (an error reply made from a thrown 429 or 503). */
  readonly retryAfterSeconds?: number;
}

export interface SearchCall {
  readonly record: KeyRecord;
  readonly requestId: string;
  readonly request: SearchRequest;
  /** Digest of the Idempotency-Key header and of the body, or null without the header. */
  readonly idempotency: { readonly keyDigest: string; readonly bodyDigest: string } | null;
  /** Milliseconds since the request arrived. */
  readonly elapsedMs: () => number;
}

interface PlannedAttempt {
  readonly model: ModelSpec;
  readonly source: AttemptSource;
  /** Null: the provider is not configured for this source. */
  readonly apiKey: string | null;
}

/** What a search holds while it runs, for the exits that must give it back. */
interface SearchState {
  /** The account in-flight lease is (or may be) held and has not been given back. */
  accountLease: boolean;
  rateLimit: RateLimitState | undefined;
}

/**
 * The search rules: the attempt loop in fallback order, money and capacity through
 * MoneyRepository, and the outcome rules. Expected outcomes are replies; only faults throw.
 */
export class SearchService {
  constructor(
    private readonly providers: ProviderRegistry,
    private readonly money: MoneyRepository,
    private readonly settings: SearchSettings,
    private readonly metrics: SearchMetrics,
    private readonly log: Logger,
    /** The accounts' own provider keys; absent: BYOK off. */
    private readonly providerKeys: ProviderKeyCache | null = null,
  ) {
    money.useLogger(log.child({ component: 'money' }));
  }

  /**
   * Attempts in order (docs/api.md 10.4): per model, the account's own key (`byok`) first
   * when it has one, then the deployment's (`platform`) when there is one; a model with
   * neither is one `skipped` attempt (not configured). Whether a platform attempt after a
   * BYOK one runs is decided in the loop (not after a timeout, a money block or capacity).
   */
  plan(models: readonly ModelSpec[], accountKeys: ProviderKeySet = NO_PROVIDER_KEYS): PlannedAttempt[] {
    const plan: PlannedAttempt[] = [];
    for (const model of models) {
      const own = accountKeys[model.provider];
      const platform = this.providers.platformKey(model.provider) ?? null;
      if (own !== undefined) plan.push({ model, source: 'byok', apiKey: own });
      if (platform !== null || own === undefined) plan.push({ model, source: 'platform', apiKey: platform });
    }
    return plan;
  }

  /** The most an attempt can cost (what it reserves): the model's price, or the BYOK fee of it. */
  private priceOf(planned: PlannedAttempt, maxResults: number): Micros {
    const price = maxCostMicros(planned.model, maxResults);
    return planned.source === 'byok' ? byokFeeMicros(price, this.settings.byokFeePercent ?? 5) : price;
  }

  /** What an answered attempt is charged for `results` results. */
  private chargeOf(planned: PlannedAttempt, results: number): Micros {
    const cost = costMicros(planned.model, results);
    return planned.source === 'byok' ? byokFeeMicros(cost, this.settings.byokFeePercent ?? 5) : cost;
  }

  /** What a timed-out attempt keeps: the model's base price, or the BYOK fee of it. */
  private keptOnTimeout(planned: PlannedAttempt): Micros {
    const base = planned.model.baseMicros;
    return planned.source === 'byok' ? byokFeeMicros(base, this.settings.byokFeePercent ?? 5) : base;
  }

  /** How long a repeat may wait for the first request: longer than any search can run. */
  private runningBoundMs(attempts: number): number {
    return attempts * (this.settings.providerTimeoutMs + this.settings.leaseMarginMs) + 30_000;
  }

  /**
   * Searches carrying an Idempotency-Key that are running in this process, by account, key
   * and Idempotency-Key digest. A copy that arrives while the first runs waits for the first's
   * reply and gets it as is (status, body, request id) without a round trip to Redis: it takes
   * no rate token, no account in-flight slot and no provider lease of its own.
   */
  private readonly runningByIdempotencyKey = new Map<string, { readonly bodyDigest: string; readonly reply: Promise<SearchReply> }>();

  async search(call: SearchCall): Promise<SearchReply> {
    const idempotency = call.idempotency;
    if (idempotency === null) return this.searchOnce(call);
    const key = `${call.record.accountId}/${call.record.id}/${idempotency.keyDigest}`;
    const first = this.runningByIdempotencyKey.get(key);
    if (first !== undefined) {
      if (first.bodyDigest !== idempotency.bodyDigest) throw new AppError('invalid_request', 'this Idempotency-Key was used with a different request body');
      return first.reply;
    }
    // A refusal thrown before any attempt (429, 503) becomes a reply too, so copies get it as
    // the first got it: the same status, body and request id.
    const reply = this.searchOnce(call).catch((error: unknown) => {
      if (!(error instanceof AppError)) throw error;
      const { retryAfterSeconds } = error.extra;
      return { ...errorReply(error, call.requestId), refused: error.code, ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }) };
    });
    this.runningByIdempotencyKey.set(key, { bodyDigest: idempotency.bodyDigest, reply });
    try {
      return await reply;
    } finally {
      if (this.runningByIdempotencyKey.get(key)?.reply === reply) this.runningByIdempotencyKey.delete(key);
    }
  }

  private async searchOnce(call: SearchCall): Promise<SearchReply> {
    const { record, requestId } = call;
    let accountKeys = NO_PROVIDER_KEYS;
    if (this.providerKeys !== null) {
      const found = this.providerKeys.keysFor(record.accountId);
      accountKeys = found instanceof Promise ? await found : found;
    }
    const plan = this.plan(call.request.models, accountKeys);
    const boundMs = this.runningBoundMs(plan.length);
    const scope = moneyScope(record, requestId, call.idempotency?.keyDigest ?? null, (this.settings.now ?? Date.now)(), boundMs + RESERVATION_TTL_GRACE_MS);
    const state: SearchState = { accountLease: false, rateLimit: undefined };
    if (this.money.saturated) {
      // Fail closed: a record this gateway could not re-send after a Redis loss would be a lost charge.
      throw new AppError('overloaded', 'the service is temporarily unable to admit searches; retry shortly', { retryAfterSeconds: 1 });
    }
    try {
      const reply = await this.run(call, plan, scope, boundMs, state);
      return state.rateLimit === undefined ? reply : { ...reply, rateLimit: state.rateLimit };
    } catch (error) {
      // Every exit that did not give the account lease back in its last round trip does it here.
      if (state.accountLease) {
        await this.money.releaseAccount(scope).catch((cause: unknown) => {
          this.log.error({ request_id: requestId, account_id: scope.accountId, err: describe(cause) }, 'account lease release failed; it expires on its own');
        });
      }
      throw error;
    }
  }

  /** The first admission: rate limit, account lease and first reservation in one script. */
  private async admitFirst(scope: MoneyScope, pending: PendingOp[], provider: Provider, leaseId: string, index: number, amountMicros: Micros, claim: { value: string; ttlMs: number } | undefined, state: SearchState, retryCold = true): Promise<{ leased: boolean; verdict: ReserveVerdict }> {
    const admission = this.settings.admission;
    // Set before the call: when the reply is lost the lease may exist, and releasing a missing one is harmless.
    state.accountLease = true;
    const { leased, admission: verdict } = await this.money.admitFirst(
      scope,
      pending.splice(0),
      { provider, leaseId, cap: this.settings.maxInFlight[provider], lifetimeMs: this.settings.providerTimeoutMs + this.settings.leaseMarginMs },
      { index, amountMicros, ...(claim === undefined ? {} : { claim }) },
      admission,
    );
    if (verdict.kind === 'admitted') {
      state.rateLimit = { limit: admission.ratePerSecond, remaining: verdict.remaining };
      if (verdict.verdict.kind === 'dup') state.accountLease = false;
      return { leased, verdict: verdict.verdict };
    }
    state.accountLease = false;
    if (leased) {
      await this.money.finish(scope, [{ kind: 'unlease', provider, leaseId }], null).catch((cause: unknown) => {
        this.log.warn({ request_id: scope.requestId, provider, err: describe(cause) }, 'provider lease release failed; it expires on its own');
      });
    }
    if (verdict.kind === 'cold') {
      // Redis lost this account's spendable side (or it never had one): nothing was written.
      // The ledger worker rebuilds it from the ledger; an account without history at once,
      // one with history after the grace period. Wait a little, retry once, else 503.
      await this.money.requestHydration(scope.accountId).catch((cause: unknown) => {
        this.log.warn({ request_id: scope.requestId, account_id: scope.accountId, err: describe(cause) }, 'hydration request failed');
      });
      if (retryCold && (await this.waitWarm(scope.accountId))) {
        return this.admitFirst(scope, pending, provider, leaseId, index, amountMicros, claim, state, false);
      }
      throw new AppError('overloaded', 'this account\'s balance is being restored; retry shortly', { retryAfterSeconds: 1 });
    }
    if (verdict.kind === 'rate_limited') {
      throw new AppError('rate_limited', `this API key is limited to ${admission.ratePerSecond} requests per second (bursts up to ${admission.burst}); retry after the Retry-After delay`, {
        retryAfterSeconds: Math.max(1, Math.ceil(verdict.retryAfterMs / 1000)),
      });
    }
    throw new AppError('too_many_concurrent_requests', `the account already has ${admission.accountCap} searches in flight; retry shortly`, { retryAfterSeconds: 1 });
  }

  /** Polls until the account's balance exists again, for at most `hydrationWaitMs`; false when it did not. */
  private async waitWarm(accountId: string): Promise<boolean> {
    const deadline = Date.now() + (this.settings.hydrationWaitMs ?? 1_500);
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      if (await this.money.isWarm(accountId).catch(() => false)) return true;
    }
    return false;
  }

  private async run(call: SearchCall, plan: readonly PlannedAttempt[], scope: MoneyScope, boundMs: number, state: SearchState): Promise<SearchReply> {
    const { requestId, request } = call;
    const pending: PendingOp[] = [];
    const attempts: AttemptResult[] = [];
    let claimNeeded = call.idempotency !== null;
    let called = false;
    let admittedOnce = false;
    let lastLease: { provider: Provider; leaseId: string } | null = null;
    // The platform attempt of a model whose BYOK attempt did not fail outright (timed out,
    // blocked by money, at capacity) is not run: it would meet the same block, or wait again.
    let skipPlatformOf: string | null = null;

    for (const [index, planned] of plan.entries()) {
      const { model, source, apiKey } = planned;
      if (source === 'platform' && skipPlatformOf === model.id) continue;
      skipPlatformOf = null;
      const price = this.priceOf(planned, request.maxResults);
      const leftMs = (this.settings.maxDurationMs ?? Number.POSITIVE_INFINITY) - call.elapsedMs();
      if (leftMs < 1) {
        attempts.push({ status: 'skipped', model, source: null, reason: 'deadline', priceMicros: price });
        continue;
      }
      if (apiKey === null) {
        attempts.push({ status: 'skipped', model, source: null, reason: 'not_configured', priceMicros: price });
        continue;
      }
      const leaseId = `${requestId}:${index}`;
      const claim = claimNeeded && call.idempotency !== null ? { value: claimValue(requestId, call.idempotency.bodyDigest), ttlMs: boundMs } : undefined;
      let admitted: { leased: boolean; verdict: ReserveVerdict };
      try {
        if (!admittedOnce) {
          admittedOnce = true;
          admitted = await this.admitFirst(scope, pending, model.provider, leaseId, index, price, claim, state);
        } else {
          admitted = await this.money.admit(
            scope,
            pending.splice(0),
            { provider: model.provider, leaseId, cap: this.settings.maxInFlight[model.provider], lifetimeMs: this.settings.providerTimeoutMs + this.settings.leaseMarginMs },
            { index, amountMicros: price, ...(claim === undefined ? {} : { claim }) },
            this.settings.admission.leaseTtlMs,
          );
        }
      } catch (error) {
        if (error instanceof AppError || called) throw error;
        // Before any provider call nothing is charged: fail closed, retryable.
        this.log.error({ request_id: requestId, err: describe(error) }, 'redis admission failed');
        throw new AppError('overloaded', 'the service is temporarily unable to admit searches; retry shortly', { retryAfterSeconds: 1 });
      }
      const { leased, verdict } = admitted;
      if (verdict.kind === 'dup') {
        if (leased) pending.push({ kind: 'unlease', provider: model.provider, leaseId });
        await this.money.finish(scope, pending.splice(0), null);
        if (call.idempotency === null) throw new Error('duplicate without an idempotency key');
        return this.replay(verdict.stored, call.idempotency.bodyDigest, scope, boundMs);
      }
      claimNeeded = false;
      if (source === 'byok') skipPlatformOf = model.id;
      if (verdict.kind === 'limit' || verdict.kind === 'balance') {
        if (leased) pending.push({ kind: 'unlease', provider: model.provider, leaseId });
        attempts.push({ status: 'skipped', model, source, reason: verdict.kind, priceMicros: price });
        continue;
      }
      if (verdict.kind === 'cold') {
        // Redis lost its data during this search: nothing was reserved; earlier charges still settle.
        if (leased) pending.push({ kind: 'unlease', provider: model.provider, leaseId });
        attempts.push({ status: 'skipped', model, source, reason: 'capacity', priceMicros: price });
        continue;
      }
      if (!leased) {
        pending.push({ kind: 'release', index, keepMicros: 0 });
        attempts.push({ status: 'skipped', model, source, reason: 'capacity', priceMicros: price });
        continue;
      }
      called = true;
      const outcome = await this.callProvider(planned, apiKey, request, requestId, Math.min(this.settings.providerTimeoutMs, Math.floor(leftMs)));
      if (outcome.ok) {
        attempts.push({ status: 'success', model, source, results: outcome.results, reservedMicros: price, chargedMicros: this.chargeOf(planned, outcome.results.length) });
        lastLease = { provider: model.provider, leaseId };
        break;
      }
      const timedOut = outcome.kind === 'timeout';
      const kept = timedOut ? Math.min(this.keptOnTimeout(planned), price) : 0;
      // A BYOK attempt that failed outright (not a timeout) is followed by the platform's.
      if (source === 'byok' && !timedOut) skipPlatformOf = null;
      pending.push({ kind: 'release', index, keepMicros: kept }, { kind: 'unlease', provider: model.provider, leaseId });
      attempts.push({ status: 'error', model, source, kind: outcome.kind, error: outcome.error, reservedMicros: price, chargedMicros: kept });
    }
    if (lastLease !== null) pending.push({ kind: 'unlease', ...lastLease });
    // The account lease goes back in the search's last round trip (with the settlement, when there is one).
    if (state.accountLease) pending.push({ kind: 'unleaseAccount' });

    const reply = this.buildReply(requestId, attempts, call.elapsedMs());
    // A 503 (every model at capacity, or Redis being rebuilt) is not kept under the
    // Idempotency-Key: nothing ran, and the SDK retries it with the same key.
    const keep = call.idempotency !== null && !(reply.status === 503 && !called);
    const stored = keep && call.idempotency !== null ? outcomeValue(requestId, call.idempotency.bodyDigest, reply.status, reply.body) : null;
    if (call.idempotency !== null && !keep) pending.push({ kind: 'releaseClaim' });
    if (!called) {
      const { foreignOutcome } = await this.money.finish(scope, pending, stored);
      state.accountLease = false;
      if (foreignOutcome !== null && call.idempotency !== null) return this.replay(foreignOutcome, call.idempotency.bodyDigest, scope, boundMs);
      return reply;
    }
    // On the socket to Redis before the reply leaves; Redis's answer is awaited in the background.
    try {
      await this.money.settle(scope, pending, { record: this.settlementRecord(scope, attempts), outcome: stored });
    } catch (error) {
      this.log.error({ request_id: scope.requestId, account_id: scope.accountId, err: describe(error) }, 'settlement failed; the reservation is released by reconciliation');
      throw new AppError('internal', 'internal error');
    }
    state.accountLease = false;
    return reply;
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

  private async callProvider(planned: PlannedAttempt, apiKey: string, request: SearchRequest, requestId: string, timeoutMs: number): Promise<ProviderOutcome> {
    const { model, source } = planned;
    let outcome: ProviderOutcome;
    try {
      outcome = await this.providers.adapter(model.provider).search({ query: request.query, model, maxResults: request.maxResults, apiKey, timeoutMs });
    } catch (error) {
      this.log.error({ request_id: requestId, provider: model.provider, err: describe(error) }, 'provider adapter threw');
      outcome = { ok: false, kind: 'connection', error: 'provider call failed', status: null };
    }
    if (!outcome.ok) {
      this.metrics.countFailure(model.provider, outcome.kind);
      if (outcome.kind === 'bad_key' && source === 'platform') {
        this.log.warn({ request_id: requestId, provider: model.provider, status: outcome.status }, 'the platform key was rejected by the provider: replace it');
      }
    }
    return outcome;
  }

  private buildReply(requestId: string, attempts: readonly AttemptResult[], elapsedMs: number): SearchReply {
    const outcome = decideOutcome(attempts);
    switch (outcome.kind) {
      case 'success': {
        const answered = attempts[outcome.index];
        if (answered === undefined || answered.status !== 'success') throw new Error('success index without a success');
        const charged = attempts.reduce((sum, a) => sum + (a.status === 'skipped' ? 0 : a.chargedMicros), 0);
        const body = {
          request_id: requestId,
          model: answered.model.id,
          provider: answered.model.provider,
          source: answered.source,
          results: answered.results,
          // What this request cost in all: the answer plus any timed-out attempt's base price.
          cost_usd: microsToUsd(charged),
          attempts: attempts.slice(0, outcome.index).map(attemptView),
          latency_ms: Math.round(elapsedMs),
        };
        return { status: 200, body: JSON.stringify(body), requestId, attempts };
      }
      case 'payment': {
        const message = outcome.code === 'key_limit_exceeded'
          ? 'this search would take the key past its credit limit'
          : 'the credit balance cannot cover any of the requested models';
        return errorReply(new AppError(outcome.code, message, { needed_usd: microsToUsd(outcome.neededMicros) }), requestId, attempts);
      }
      case 'overloaded':
        return errorReply(new AppError('overloaded', 'every allowed model is at capacity; retry shortly'), requestId, attempts);
      case 'failed':
        return errorReply(new AppError('all_providers_failed', 'every attempted model failed or was unavailable', { attempts: attempts.map(attemptView) }), requestId, attempts);
    }
  }

  private settlementRecord(scope: MoneyScope, attempts: readonly AttemptResult[]): SettlementRecord {
    // Object literals of one shape (no spread): this runs once per search on the hot path.
    const settled: SettledAttempt[] = [];
    let chargedMicros: Micros = 0;
    for (let index = 0; index < attempts.length; index++) {
      const attempt = attempts[index] as AttemptResult;
      const { id: model, provider } = attempt.model;
      const source = attempt.source ?? 'platform';
      switch (attempt.status) {
        case 'success':
          settled.push({ index, model, provider, source, status: 'success', error: null, reservedMicros: attempt.reservedMicros, chargedMicros: attempt.chargedMicros, timedOut: false, results: attempt.results.length });
          chargedMicros += attempt.chargedMicros;
          break;
        case 'error':
          settled.push({ index, model, provider, source, status: 'error', error: attempt.error, reservedMicros: attempt.reservedMicros, chargedMicros: attempt.chargedMicros, timedOut: attempt.kind === 'timeout', results: 0 });
          chargedMicros += attempt.chargedMicros;
          break;
        case 'skipped':
          settled.push({ index, model, provider, source, status: 'skipped', error: SKIP_MESSAGES[attempt.reason], reservedMicros: 0, chargedMicros: 0, timedOut: false, results: 0 });
          break;
      }
    }
    return { v: 1, requestId: scope.requestId, accountId: scope.accountId, keyId: scope.keyId, settledAtMs: Date.now(), attempts: settled, chargedMicros, traceparent: currentTraceparent() };
  }

  /** The first request's outcome for a repeat: at once when done, else after polling for it (bounded). */
  private async replay(stored: string, digest: string, scope: MoneyScope, boundMs: number): Promise<SearchReply> {
    const key = scope.idempotencyKey;
    if (key === null) throw new Error('replay without an idempotency key');
    const deadline = Date.now() + boundMs;
    let text: string | null = stored;
    for (;;) {
      const value = text === null ? undefined : parseStored(text);
      if (value === undefined) break;
      if (value.digest !== digest) throw new AppError('invalid_request', 'this Idempotency-Key was used with a different request body');
      if (value.state === 'done') return { status: value.status, body: value.body, requestId: value.rid };
      if (Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, this.settings.idempotencyPollMs));
      text = await this.money.readIdempotency(key);
    }
    throw new AppError('overloaded', 'the first request with this Idempotency-Key has not finished; retry shortly', { retryAfterSeconds: 1 });
  }
}

function errorReply(error: AppError, requestId: string, attempts?: readonly AttemptResult[]): SearchReply {
  return attempts === undefined
    ? { status: error.status, body: JSON.stringify(errorBody(error, requestId)), requestId }
    : { status: error.status, body: JSON.stringify(errorBody(error, requestId)), requestId, attempts };
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
