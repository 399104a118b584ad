import type { CatalogModel, ModelSpec, Provider } from '@svc/contracts';
import type { Micros } from '@svc/money';
import type { Logger } from 'pino';
import type { AttemptCache } from '../../cache/cache.ticket';
import type {
  AdmissionRequest, AdmissionVerdict, Claim, LeaseRequest, MoneyOp, ReserveRequest, ReserveVerdict, Settlement,
} from '../../money/money.ops';
import type { MoneyScope } from '../../money/money.scope';
import type { ExtractProvider, NormalizedResult, ProviderFailureKind, ProviderOutcome, ProviderSearchRequest } from '../../providers';
import type { AttemptResult, AttemptResults, AttemptSource } from '../search.outcome';
import type { AttemptedRequest, SearchCall } from '../search.result';
import type { SearchRequest } from '../search.schema';

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

/**
 * What the steps use of MoneyRepository: its round trips, each taking the search's typed
 * MoneyOps. MoneyRepository is one; a unit test of the steps fakes it.
 */
export interface SearchMoney {
  /** Too many unconfirmed settlements: admit nothing (fail closed). */
  readonly saturated: boolean;
  admitFirst(scope: MoneyScope, ops: readonly MoneyOp[], lease: LeaseRequest | null, reserve: ReserveRequest, admission: AdmissionRequest): Promise<{ leased: boolean; admission: AdmissionVerdict }>;
  admit(scope: MoneyScope, ops: readonly MoneyOp[], lease: LeaseRequest | null, reserve: ReserveRequest, extendLeaseMs?: number): Promise<{ leased: boolean; verdict: ReserveVerdict }>;
  /** An attempt admitted without a provider lease takes one before its call: leftover ops, the account lease extended, the lease. */
  lease(scope: MoneyScope, ops: readonly MoneyOp[], lease: LeaseRequest, extendLeaseMs: number): Promise<boolean>;
  /** Sends ops now without waiting for Redis (a provider lease an attempt does not need); a failure is logged, the lease expires on its own. */
  giveBack(scope: MoneyScope, ops: readonly MoneyOp[]): void;
  finish(scope: MoneyScope, ops: readonly MoneyOp[], unsettledOutcome: string | null): Promise<{ foreignOutcome: string | null }>;
  settle(scope: MoneyScope, ops: readonly MoneyOp[], settlement: Settlement): Promise<void>;
  releaseAccount(scope: MoneyScope): Promise<void>;
  requestHydration(accountId: string): Promise<void>;
  isWarm(accountId: string): Promise<boolean>;
  readIdempotency(key: string): Promise<string | null>;
}

/** What the steps use of the provider registry. */
export interface SearchProviders {
  adapter(provider: Provider): { search(request: ProviderSearchRequest): Promise<ProviderOutcome> };
  /** The provider's extract adapter (page content for known URLs); undefined for a provider without one. */
  extractor?(provider: Provider): ExtractProvider | undefined;
  /** The deployment's own key for a provider, if it has one. */
  platformKey(provider: Provider): string | undefined;
}

/**
 * What the steps use of provider health (docs/decisions/0027): the breaker's check and the
 * outcome counters, both in-process (no Redis on the search path).
 */
export interface SearchHealth {
  /** -1: the provider's platform key may be called; else the ms left of its cool-down. */
  blockedMs(provider: Provider): number;
  skipped(provider: Provider): void;
  record(provider: Provider, source: 'platform' | 'byok', model: string, outcome: 'ok' | ProviderFailureKind, latencyMs: number): void;
}

/** What the steps need, made once per SearchService and kind of request (`R`: a search's, an extract's). */
export interface SearchSteps<R extends AttemptedRequest = SearchRequest> {
  readonly money: SearchMoney;
  /** Provider health; absent: no breaker and no health counting. */
  readonly health?: SearchHealth;
  readonly providers: SearchProviders;
  readonly settings: SearchSettings;
  readonly metrics: { countFailure(provider: Provider, kind: ProviderFailureKind): void };
  readonly log: Logger;
  /**
   * What answers an attempt instead of its provider when it can (docs/decisions/0042): the
   * result cache (docs/decisions/0023). Absent: every attempt is answered by its provider call
   * (every search answers `off`).
   */
  readonly answers?: AnswerSource<R> | undefined;
}

/** One attempt of a search's plan (`M`: the kind of model: a search's, an extract's). */
export interface PlannedAttempt<M extends CatalogModel = ModelSpec> {
  /** Its place in the plan: the attempt index of its reservation and of its lease id. */
  readonly index: number;
  readonly model: M;
  readonly source: AttemptSource;
  /** Null: the provider is not configured for this source. */
  readonly apiKey: string | null;
  /**
   * The most it can cost (what it reserves): the model's price for max_results, or the BYOK fee
   * of it; an extract attempt's for every URL of the request (it reserves for those still missing).
   */
  readonly priceMicros: Micros;
}

/** The model of a request's attempts. */
export type ModelOf<R extends AttemptedRequest> = R['models'][number];

/** One search (or extract) as every step sees it: made once when it starts, never changed. */
export interface SearchContext<R extends AttemptedRequest = SearchRequest> {
  readonly call: SearchCall<R>;
  /** Its Redis keys and key limit (the period is fixed when the search starts). */
  readonly scope: MoneyScope;
  /** Its attempts in order (planAttempts). */
  readonly plan: readonly PlannedAttempt<ModelOf<R>>[];
  /** Longer than the search can run: how long a repeat may wait for it, and its claim's lifetime. */
  readonly boundMs: number;
  /** The Idempotency-Key claim its first admission writes; undefined without the header. */
  readonly claim: Claim | undefined;
}

/**
 * An attempt that passed its gate, as its admission and its provider call take it: it is the
 * lease request and the reserve request of the money round trip, and carries the provider
 * call's key and timeout. One object per attempt (a ProviderCall, steps/attempt.ts).
 */
export interface AttemptRequest<M extends CatalogModel = ModelSpec> extends LeaseRequest, ReserveRequest {
  readonly planned: PlannedAttempt<M>;
  readonly apiKey: string;
  /** The provider call's timeout: PROVIDER_TIMEOUT_MS, cut to what is left of the search's time. */
  readonly timeoutMs: number;
}

/**
 * How an attempt will be answered, once its source knows (docs/decisions/0042):
 * - `calls`: by a call to its provider, which needs a provider-capacity lease;
 * - `answers`: without one (a stored answer, or the answer of an identical call in flight).
 */
export type Readiness = 'calls' | 'answers';

/**
 * One attempt from its admission to its answer, as the steps see it (docs/decisions/0042).
 * The steps admit it for `reserve` and `lease`, fit the admission to `ready()`, have it
 * `answer`, and `close` it exactly once, whatever happened; they never look inside. A
 * provider call (ProviderCall, steps/attempt.ts) is one; an answer source in front of it (the
 * result cache) makes others.
 */
export interface Answering<R extends AttemptedRequest = SearchRequest> {
  /** The attempt as planned and gated. */
  readonly request: AttemptRequest<ModelOf<R>>;
  /** What its admission reserves: the most it can cost, as far as is known before the admission. */
  readonly reserve: ReserveRequest;
  /** The provider lease its admission takes, or null when it is known to call no provider now. */
  readonly lease: LeaseRequest | null;
  /**
   * How it will be answered: known at once, or once what it sent beside the admission (in the
   * same flush: the cache's lookup) has answered.
   */
  ready(): Readiness | Promise<Readiness>;
  /**
   * Once ready: a smaller reservation that still covers it (a stored answer's cache price),
   * taken when the admission's reservation was blocked by the key's limit or the balance; else null.
   */
  readonly cheaper: ReserveRequest | null;
  /**
   * Its answer, once admitted: `leased` whether it holds a provider lease (a provider call
   * without one takes one first, and is skipped for capacity when none is free), `reservedMicros`
   * what its admission reserved. Queues in `ops` what it gives back with the next round trip.
   */
  answer(steps: SearchSteps<R>, ctx: SearchContext<R>, ops: MoneyOp[], leased: boolean, reservedMicros: Micros): Promise<AttemptResult>;
  /** Gives back what it holds outside the money (the cache's lead of identical searches). Called once per attempt. */
  close(): void;
}

/** What becomes of a provider's successful answer: kept (the cache stores it) and how the reply shows it. */
export interface AnswerKeeper {
  kept(request: AttemptRequest, results: readonly NormalizedResult[]): { readonly cache: AttemptCache; readonly results: AttemptResults };
}

/** A provider call, as an answer source in front of it calls it (a search's: with a keeper of its answer). */
export interface Callable<R extends AttemptedRequest = SearchRequest> extends Answering<R>, AttemptRequest<ModelOf<R>> {
  call(steps: SearchSteps<R>, ctx: SearchContext<R>, ops: MoneyOp[], leased: boolean, keeper: AnswerKeeper | null): Promise<AttemptResult>;
}

/**
 * What answers attempts instead of their provider when it can (the result cache, decision
 * 0042): it opens, per attempt, the Answering the steps admit and run (the provider call
 * itself when it has nothing to offer).
 */
export interface AnswerSource<R extends AttemptedRequest = SearchRequest> {
  open(steps: SearchSteps<R>, ctx: SearchContext<R>, call: Callable<R>): Answering<R>;
}
