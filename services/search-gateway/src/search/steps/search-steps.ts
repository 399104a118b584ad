import type { ModelSpec, Provider } from '@svc/contracts';
import type { Micros } from '@svc/money';
import type { Logger } from 'pino';
import type { ResultCache } from '../../cache/result-cache';
import type {
  AdmissionRequest, AdmissionVerdict, Claim, LeaseRequest, MoneyOp, ReserveRequest, ReserveVerdict, Settlement,
} from '../../money/money.ops';
import type { MoneyScope } from '../../money/money.scope';
import type { ProviderFailureKind, ProviderOutcome, ProviderSearchRequest } from '../../providers';
import type { AttemptSource } from '../search.outcome';
import type { SearchCall } from '../search.result';

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

/** What the steps need, made once per SearchService. */
export interface SearchSteps {
  readonly money: SearchMoney;
  /** Provider health; absent: no breaker and no health counting. */
  readonly health?: SearchHealth;
  readonly providers: SearchProviders;
  readonly settings: SearchSettings;
  readonly metrics: { countFailure(provider: Provider, kind: ProviderFailureKind): void };
  readonly log: Logger;
  /** The shared result cache (docs/decisions/0023); absent: no cache (every search answers `off`). */
  readonly cache?: ResultCache | undefined;
}

/** One attempt of a search's plan. */
export interface PlannedAttempt {
  /** Its place in the plan: the attempt index of its reservation and of its lease id. */
  readonly index: number;
  readonly model: ModelSpec;
  readonly source: AttemptSource;
  /** Null: the provider is not configured for this source. */
  readonly apiKey: string | null;
  /** The most it can cost (what it reserves): the model's price for max_results, or the BYOK fee of it. */
  readonly priceMicros: Micros;
}

/** One search as every step sees it: made once when it starts, never changed. */
export interface SearchContext {
  readonly call: SearchCall;
  /** Its Redis keys and key limit (the period is fixed when the search starts). */
  readonly scope: MoneyScope;
  /** Its attempts in order (planAttempts). */
  readonly plan: readonly PlannedAttempt[];
  /** Longer than the search can run: how long a repeat may wait for it, and its claim's lifetime. */
  readonly boundMs: number;
  /** The Idempotency-Key claim its first admission writes; undefined without the header. */
  readonly claim: Claim | undefined;
}
