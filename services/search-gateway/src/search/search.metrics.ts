import type { KeyRecord, Provider, RequestKind } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { Counter, HotCounter, HotHistogram, LATENCY_BUCKETS_S, Registry } from '@svc/metrics';
import { microsToUsd } from '@svc/money';
import type { ProviderCallObserver, ProviderFailureKind, ProviderOutcome } from '../providers';
import { redisBatchCounters } from '../redis/redis-batch';
import { decideOutcome } from './search.outcome';
import type { AttemptResult } from './search.outcome';
import type { SearchReply } from './search.result';

/** What the search route leaves for the metrics and the log line of a search, read after the reply. */
interface Pending {
  readonly record: KeyRecord;
  /** The reply sent (attempts undefined: an idempotent repeat answered with the first request's reply); null when refused or thrown. */
  readonly reply: SearchReply | null;
  /** The error code when the search was refused, or ended in a thrown error (a fault). */
  readonly errorCode: string | null;
  /** The reply is another request's (an idempotent repeat or a copy that waited for the first): nothing of its own ran. */
  readonly copy: boolean;
  /** Milliseconds the search waited on providers (UpstreamTimer); the rest is the platform's own. */
  readonly upstreamMs: number;
  /** What the request was: a search (POST /v1/search) or an extract (POST /v1/extract). */
  readonly kind: RequestKind;
}

/** The fields a search adds to its access log line (one line per search, written after the reply). */
export interface SearchLogFields {
  account_id: string;
  key_id: string;
  /** The model that answered, or null. */
  model: string | null;
  /** Every model tried or skipped, in order. */
  models: string[];
  /** `ok`, or the error code the search answered with. */
  outcome: string;
  /** What the search cost in all (decimal USD string, as in the API). */
  cost_usd: number;
}

/** The platform's own time is milliseconds: finer buckets at the low end than LATENCY_BUCKETS_S. */
const OVERHEAD_BUCKETS_S = [0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

const REFUSAL_OF: Readonly<Record<string, string>> = {
  rate_limited: 'rate_limit',
  too_many_concurrent_requests: 'in_flight',
  overloaded: 'overloaded',
};

/**
 * The gateway's search metrics. Nothing here runs before a reply is written except the
 * provider timing (a few additions per provider call); the search's counters, its
 * histogram and its log fields are made in the edge's onResponse hook from what the route
 * left (`answered`). The counters and histograms are hot metrics (@svc/metrics, decision
 * 0019): an observation adds to plain fields of a kept child, with no label hashing.
 * Labels are bounded: outcome codes, catalog models, providers, sources, statuses; never an
 * account or key id.
 */
export class SearchMetrics implements ProviderCallObserver {
  readonly registry: Registry;
  private readonly failures = new Map<string, number>();
  private readonly pending = new WeakMap<object, Pending>();
  private readonly searches: HotCounter<'outcome' | 'model'>;
  private readonly duration: HotHistogram<'outcome'>;
  private readonly overhead: HotHistogram<'outcome'>;
  private readonly attempts: HotCounter<'provider' | 'source' | 'status' | 'reason'>;
  private readonly providerLatency: HotHistogram<'provider' | 'outcome'>;
  private readonly charged: HotCounter<'provider' | 'source'>;
  private readonly released: HotCounter<'provider' | 'source'>;
  private readonly refusals: HotCounter<'reason'>;
  private readonly extracts: HotCounter<'outcome'>;
  private readonly extractDuration: HotHistogram<'outcome'>;

  constructor(registry: Registry = new Registry()) {
    this.registry = registry;
    const registers = [registry];
    this.searches = new HotCounter({ name: 'gateway_searches_total', help: 'Searches answered, by outcome (ok or the error code) and answering model (none when no model answered)', labelNames: ['outcome', 'model'], registers });
    this.duration = new HotHistogram({ name: 'gateway_search_duration_seconds', help: 'Time from a search\'s arrival to its reply, by outcome', labelNames: ['outcome'], buckets: LATENCY_BUCKETS_S, registers });
    this.overhead = new HotHistogram({
      name: 'gateway_search_overhead_seconds',
      help: 'The platform\'s own time per search: from arrival to reply, minus the time at least one provider call was in flight, by outcome (Server-Timing\'s gateway)',
      labelNames: ['outcome'],
      buckets: OVERHEAD_BUCKETS_S,
      registers,
    });
    this.attempts = new HotCounter({ name: 'gateway_search_attempts_total', help: 'Attempts of searches, by provider, key source, status (success, error, skipped) and reason (the failure kind or skip reason; none on success)', labelNames: ['provider', 'source', 'status', 'reason'], registers });
    this.charged = new HotCounter({ name: 'gateway_charged_micros_total', help: 'Money charged for searches in micro-USD (answers and timed-out attempts\' base price), by provider and key source', labelNames: ['provider', 'source'], registers });
    this.released = new HotCounter({ name: 'gateway_released_micros_total', help: 'Money reserved for attempts and given back uncharged (failed attempts) in micro-USD, by provider and key source', labelNames: ['provider', 'source'], registers });
    this.refusals = new HotCounter({ name: 'gateway_search_refusals_total', help: 'Searches refused before or without any provider call: rate_limit (429), in_flight (the account\'s cap, 429), capacity (every model at its in-flight cap, 503), overloaded (Redis unavailable or being rebuilt, 503)', labelNames: ['reason'], registers });
    for (const reason of ['rate_limit', 'in_flight', 'capacity', 'overloaded']) this.refusals.child(reason);
    this.extracts = new HotCounter({ name: 'gateway_extracts_total', help: 'Extracts answered (POST /v1/extract), by outcome (ok: at least one URL came back, or the error code)', labelNames: ['outcome'], registers });
    this.extractDuration = new HotHistogram({ name: 'gateway_extract_duration_seconds', help: 'Time from an extract\'s arrival to its reply, by outcome', labelNames: ['outcome'], buckets: LATENCY_BUCKETS_S, registers });
    // Read from the batch's plain counters at scrape: nothing is added to the search path.
    let seen = { awaited: redisBatchCounters.awaited, sent: redisBatchCounters.sent };
    const roundTrips: Counter<'kind'> = new Counter({
      name: 'gateway_redis_round_trips_total',
      help: 'Pipelines sent to Redis by the search path, by kind (awaited: a search waited for the answer; sent: not waited for). Round trips per search: rate of awaited over rate of gateway_searches_total',
      labelNames: ['kind'],
      registers,
      collect: () => {
        roundTrips.labels('awaited').inc(Math.max(0, redisBatchCounters.awaited - seen.awaited));
        roundTrips.labels('sent').inc(Math.max(0, redisBatchCounters.sent - seen.sent));
        seen = { awaited: redisBatchCounters.awaited, sent: redisBatchCounters.sent };
      },
    });
    this.providerLatency = new HotHistogram({
      name: 'gateway_provider_request_duration_seconds',
      help: 'Provider calls, by provider and outcome (ok or the failure kind)',
      labelNames: ['provider', 'outcome'],
      buckets: LATENCY_BUCKETS_S,
      registers,
    });
  }

  countFailure(provider: Provider, kind: ProviderFailureKind): void {
    const name = `${provider}:${kind}`;
    this.failures.set(name, (this.failures.get(name) ?? 0) + 1);
  }

  /** Failures of one kind at one provider since start. */
  failuresOf(provider: Provider, kind: ProviderFailureKind): number {
    return this.failures.get(`${provider}:${kind}`) ?? 0;
  }

  /** The route's handler, once the search has a reply (or threw): kept for `answered`. */
  replied(request: { readonly id: string }, record: KeyRecord, reply: SearchReply, upstreamMs = 0, kind: RequestKind = 'search'): void {
    this.pending.set(request, { record, reply, errorCode: null, copy: reply.requestId !== request.id, upstreamMs, kind });
  }

  /** The route's handler, once the search was refused (SearchRefusal's code): kept for `answered`. */
  refused(request: object, record: KeyRecord, code: string, upstreamMs = 0, kind: RequestKind = 'search'): void {
    this.pending.set(request, { record, reply: null, errorCode: code, copy: false, upstreamMs, kind });
  }

  threw(request: object, record: KeyRecord, error: unknown, upstreamMs = 0, kind: RequestKind = 'search'): void {
    this.pending.set(request, { record, reply: null, errorCode: error instanceof AppError ? error.code : 'internal', copy: false, upstreamMs, kind });
  }

  /**
   * After the reply of POST /v1/search was written (the edge's onResponse): counts the
   * search and returns the fields of its log line; undefined when the request never reached
   * the search (refused by authentication or validation: the HTTP metrics count it).
   */
  answered(request: object, status: number, durationMs: number): SearchLogFields | undefined {
    const pending = this.pending.get(request);
    if (pending === undefined) return undefined;
    this.pending.delete(request);
    const { record, reply } = pending;
    let outcome: string;
    let model: string | null = null;
    const models: string[] = [];
    let costMicros = 0;
    if (reply === null) {
      outcome = pending.errorCode ?? 'internal';
      const refusal = REFUSAL_OF[outcome];
      if (refusal !== undefined) this.refusals.child(refusal).inc();
    } else if (reply.attempts === undefined || pending.copy) {
      // A repeat of an Idempotency-Key answered with the first request's reply: nothing ran.
      outcome = status === 200 ? 'idempotent_replay' : 'idempotent_replay_error';
    } else {
      const attempts = reply.attempts;
      const decided = decideOutcome(attempts);
      switch (decided.kind) {
        case 'success':
          outcome = 'ok';
          model = attempts[decided.index]?.model.id ?? null;
          break;
        case 'payment':
          outcome = decided.code;
          break;
        case 'overloaded':
          outcome = 'overloaded';
          this.refusals.child('capacity').inc();
          break;
        case 'unsupported_filter':
          outcome = 'unsupported_filter';
          break;
        case 'unsupported_option':
          outcome = 'unsupported_option';
          break;
        case 'failed':
          outcome = 'all_providers_failed';
          break;
      }
      for (const attempt of attempts) {
        models.push(attempt.model.id);
        costMicros += this.countAttempt(attempt);
      }
    }
    if (pending.kind === 'extract') {
      this.extracts.child(outcome).inc();
      this.extractDuration.child(outcome).observe(durationMs / 1000);
    } else {
      this.searches.child(outcome, model ?? 'none').inc();
      this.duration.child(outcome).observe(durationMs / 1000);
      this.overhead.child(outcome).observe(Math.max(0, durationMs - pending.upstreamMs) / 1000);
    }
    return { account_id: record.accountId, key_id: record.id, model, models, outcome, cost_usd: microsToUsd(costMicros) };
  }

  private countAttempt(attempt: AttemptResult): number {
    const provider = attempt.model.provider;
    switch (attempt.status) {
      case 'success':
        this.attempts.child(provider, attempt.source, 'success', 'none').inc();
        this.charged.child(provider, attempt.source).inc(attempt.chargedMicros);
        this.released.child(provider, attempt.source).inc(Math.max(0, attempt.reservedMicros - attempt.chargedMicros));
        return attempt.chargedMicros;
      case 'error':
        this.attempts.child(provider, attempt.source, 'error', attempt.kind).inc();
        if (attempt.chargedMicros > 0) this.charged.child(provider, attempt.source).inc(attempt.chargedMicros);
        this.released.child(provider, attempt.source).inc(Math.max(0, attempt.reservedMicros - attempt.chargedMicros));
        return attempt.chargedMicros;
      case 'skipped':
        this.attempts.child(provider, attempt.source ?? 'none', 'skipped', attempt.reason).inc();
        return 0;
    }
  }

  /** One provider call's duration. */
  providerCall(provider: Provider, outcome: ProviderOutcome, durationMs: number): void {
    this.providerLatency.child(provider, outcome.ok ? 'ok' : outcome.kind).observe(durationMs / 1000);
  }
}
