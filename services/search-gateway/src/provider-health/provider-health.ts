import { CATALOG, HEALTH_LATENCY_BUCKETS_MS, HEALTH_MINUTE_TTL_MS, MODELS, PROVIDERS, providerHealthKeys } from '@svc/contracts';
import type { HealthSource, ModelSpec, Provider } from '@svc/contracts';
import type { RedisClient } from '@svc/redis-client';
import type { Logger } from 'pino';
import type { ProviderFailureKind, ProviderOutcome, ProviderSearchRequest } from '../providers';
import { HEALTH_CLOSE_LUA, HEALTH_FLUSH_LUA, HEALTH_REOPEN_LUA } from './health.scripts';

/** The settings of provider health and of the breaker (PROVIDER_BREAKER_*, PROVIDER_HEALTH_*). */
export interface ProviderHealthSettings {
  /** PROVIDER_BREAKER_ENABLED: false keeps counting (status page, metrics) but never skips a provider. */
  readonly breakerEnabled: boolean;
  /** The rolling window the failure rate is judged over. */
  readonly windowMs: number;
  /** Fewer calls than this in the window never open the breaker by rate. */
  readonly minCalls: number;
  /** The breaker opens when at least this percentage of the window's calls failed. */
  readonly failurePercent: number;
  /** ...or after this many timeouts in a row (0: never by streak). */
  readonly timeoutStreak: number;
  /** How long an open breaker skips the provider before the probe. */
  readonly cooldownMs: number;
  /** How often a gateway adds its outcomes to the shared window (and learns the breaker's state from the answer). */
  readonly flushMs: number;
  /** How often a gateway reads every breaker's state (and sends a probe when one is due). */
  readonly refreshMs: number;
  /** The probe's query (the platform's own search, sent with its key). */
  readonly probeQuery: string;
  /** The probe's timeout (PROVIDER_TIMEOUT_MS). */
  readonly probeTimeoutMs: number;
  /** A model whose calls failed at least this percentage over the last 5 minutes is `degraded`. */
  readonly degradedFailurePercent: number;
  /** ...counted only from this many calls on. */
  readonly degradedMinCalls: number;
}

/** What provider health uses of the provider registry: the adapters and the platform's keys. */
export interface HealthProviders {
  adapter(provider: Provider): { search(request: ProviderSearchRequest): Promise<ProviderOutcome> };
  platformKey(provider: Provider): string | undefined;
}

/** The breaker of one provider as this gateway last saw it. */
export interface BreakerView {
  readonly state: 'closed' | 'open';
  /** Gateway-clock ms when the cool-down ends (open only). */
  readonly openUntilMs: number;
  readonly openedAtMs: number;
  readonly forced: 'open' | 'closed' | null;
  readonly reason: string | null;
}

const CLOSED: BreakerView = Object.freeze({ state: 'closed', openUntilMs: 0, openedAtMs: 0, forced: null, reason: null });

/** How an outcome is counted: its minute field, and whether it is a failure of the provider. */
type OutcomeClass = 'ok' | 'timeout' | 'server_error' | 'rate_limited' | 'other';
/** The counters of one model in a flush: one per outcome class (OUTCOME_FIELDS), then one per latency bucket. */
const OUTCOME_FIELDS: readonly OutcomeClass[] = ['ok', 'timeout', 'server_error', 'rate_limited', 'other'];
const OUTCOME_INDEX: Readonly<Record<OutcomeClass, number>> = { ok: 0, timeout: 1, server_error: 2, rate_limited: 3, other: 4 };
const OUTCOME_CLASS: Readonly<Record<ProviderFailureKind, OutcomeClass>> = {
  timeout: 'timeout',
  server_error: 'server_error',
  connection: 'server_error',
  malformed: 'server_error',
  rate_limited: 'rate_limited',
  quota: 'rate_limited',
  // The platform key rejected: the provider cannot be used until it is replaced.
  bad_key: 'server_error',
  // The provider turned down our parameters: a fault of the request, not of the provider.
  bad_request: 'other',
};

/** One gateway's outcomes of one provider and source since its last flush. */
interface Pending {
  calls: number;
  failures: number;
  /** Timeouts before the first call that did not time out (they extend the shared streak). */
  leading: number;
  /** Timeouts after the last call that did not time out (they start the next streak). */
  trailing: number;
  allTimeouts: boolean;
  /** Per model id: counts by OUTCOME_FIELDS, then by latency bucket. */
  models: Map<string, number[]>;
}

/** Counts of one model or provider over a window of the status page. */
export interface WindowFigures {
  calls: number;
  ok: number;
  timeout: number;
  server_error: number;
  rate_limited: number;
  /** Per latency bucket (HEALTH_LATENCY_BUCKETS_MS). */
  histogram: number[];
}

const emptyFigures = (): WindowFigures => ({ calls: 0, ok: 0, timeout: 0, server_error: 0, rate_limited: 0, histogram: HEALTH_LATENCY_BUCKETS_MS.map(() => 0) });

/** Minute figures of the platform key: per model id, the last 5 minutes and the last hour. */
export interface HealthFigures {
  readonly atMs: number;
  readonly models: ReadonlyMap<string, { readonly last5m: WindowFigures; readonly last1h: WindowFigures }>;
}

const MINUTE_MS = 60_000;
/** The status page's figures are read again at most this often (per gateway). */
const FIGURES_MAX_AGE_MS = 5_000;

/** The cheapest model of each provider: what a probe asks for. */
const PROBE_MODEL: Readonly<Record<Provider, ModelSpec>> = Object.fromEntries(PROVIDERS.map((provider) => [
  provider,
  CATALOG.filter((model) => model.provider === provider).reduce((a, b) => (b.baseMicros < a.baseMicros ? b : a)),
])) as Record<Provider, ModelSpec>;

/**
 * Provider health shared by every gateway (docs/decisions/0027). The search path only reads
 * this process's snapshot (`blockedMs`, a property read) and adds its outcomes to in-process
 * counters (`record`): it never waits for Redis. In the background each gateway adds its
 * counters to the shared rolling window every `flushMs` (one script per provider and source
 * that also judges the window and opens the breaker), reads every breaker's state every
 * `refreshMs`, and, when a cool-down has ended, takes the cluster-wide probe lock and sends
 * one probe with the platform's key: the breaker closes when it answers.
 */
export class ProviderHealth {
  private readonly breakers: Record<Provider, BreakerView> = { brave: CLOSED, exa: CLOSED, tavily: CLOSED };
  /** By provider, then source (`${provider}|${source}` only when flushed). */
  private readonly pending = new Map<Provider, Partial<Record<HealthSource, Pending>>>();
  private readonly probing = new Set<Provider>();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly windowBucketMs: number;
  private figures: HealthFigures = { atMs: 0, models: new Map() };
  private figuresLoading: Promise<HealthFigures> | null = null;
  private busy = { flush: false, refresh: false };
  /** Probes sent by this gateway, by provider and result (metrics). */
  readonly probes: Record<Provider, { ok: number; failed: number }> = { brave: { ok: 0, failed: 0 }, exa: { ok: 0, failed: 0 }, tavily: { ok: 0, failed: 0 } };
  /** Attempts this gateway skipped because the provider's breaker was open (metrics). */
  readonly skips: Record<Provider, number> = { brave: 0, exa: 0, tavily: 0 };

  constructor(
    private readonly redis: RedisClient,
    private readonly providers: HealthProviders,
    readonly settings: ProviderHealthSettings,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.windowBucketMs = Math.max(1_000, Math.ceil(settings.windowMs / 6));
    redis.defineCommand('svcHealthFlush', { lua: HEALTH_FLUSH_LUA });
    redis.defineCommand('svcHealthClose', { lua: HEALTH_CLOSE_LUA });
    redis.defineCommand('svcHealthReopen', { numberOfKeys: 1, lua: HEALTH_REOPEN_LUA });
  }

  /** Starts the background flush and refresh (unref'd timers). */
  start(): void {
    if (this.timers.length > 0) return;
    this.timers.push(setInterval(() => void this.flush(), this.settings.flushMs).unref());
    this.timers.push(setInterval(() => void this.refresh(), this.settings.refreshMs).unref());
    void this.refresh();
  }

  /** Nest's shutdown hook: the loops stop (what is not yet flushed is not counted). */
  onApplicationShutdown(): void {
    for (const timer of this.timers.splice(0)) clearInterval(timer);
  }

  /** Stops the loops and adds what is left to the shared window. */
  async stop(): Promise<void> {
    for (const timer of this.timers.splice(0)) clearInterval(timer);
    await this.flush();
  }

  /**
   * The hot path's check: -1 when the provider's platform key may be called, else how many
   * ms are left of its cool-down (0 while the probe is due). A property read, no Redis.
   */
  blockedMs(provider: Provider): number {
    const breaker = this.breakers[provider];
    if (breaker.forced === 'closed') return -1;
    if (breaker.forced === 'open') return this.settings.cooldownMs;
    if (breaker.state === 'closed' || !this.settings.breakerEnabled) return -1;
    return Math.max(0, breaker.openUntilMs - this.now());
  }

  /** Counts one skipped attempt (metrics). */
  skipped(provider: Provider): void {
    this.skips[provider] += 1;
  }

  /** The breaker of `provider` as this gateway last saw it. */
  breaker(provider: Provider): BreakerView {
    return this.breakers[provider];
  }

  /** Adds one provider call's outcome to this gateway's counters (sent with the next flush). */
  record(provider: Provider, source: HealthSource, model: string, outcome: 'ok' | ProviderFailureKind, latencyMs: number): void {
    let bySource = this.pending.get(provider);
    if (bySource === undefined) {
      bySource = {};
      this.pending.set(provider, bySource);
    }
    let pending = bySource[source];
    if (pending === undefined) {
      pending = { calls: 0, failures: 0, leading: 0, trailing: 0, allTimeouts: true, models: new Map() };
      bySource[source] = pending;
    }
    const kind: OutcomeClass = outcome === 'ok' ? 'ok' : OUTCOME_CLASS[outcome];
    pending.calls += 1;
    if (kind !== 'ok' && kind !== 'other') pending.failures += 1;
    if (kind === 'timeout') {
      if (pending.allTimeouts) pending.leading += 1;
      pending.trailing += 1;
    } else {
      pending.allTimeouts = false;
      pending.trailing = 0;
    }
    let counts = pending.models.get(model);
    if (counts === undefined) {
      counts = new Array<number>(OUTCOME_FIELDS.length + HEALTH_LATENCY_BUCKETS_MS.length).fill(0);
      pending.models.set(model, counts);
    }
    counts[OUTCOME_INDEX[kind]] = (counts[OUTCOME_INDEX[kind]] as number) + 1;
    const bucket = OUTCOME_FIELDS.length + latencyBucket(latencyMs);
    counts[bucket] = (counts[bucket] as number) + 1;
  }

  /** Adds every pending count to the shared window; the platform's answers update the snapshot. */
  async flush(): Promise<void> {
    if (this.busy.flush || this.pending.size === 0) return;
    this.busy.flush = true;
    const batch: [Provider, HealthSource, Pending][] = [];
    for (const [provider, bySource] of this.pending) {
      for (const source of ['platform', 'byok'] as const) {
        const pending = bySource[source];
        if (pending !== undefined) batch.push([provider, source, pending]);
      }
    }
    this.pending.clear();
    try {
      await Promise.all(batch.map(async ([provider, source, pending]) => {
        try {
          await this.flushOne(provider, source, pending);
        } catch (error) {
          this.log.warn({ provider, source, err: error instanceof Error ? error.message : String(error) }, 'provider health flush failed; these outcomes are not counted');
        }
      }));
    } finally {
      this.busy.flush = false;
    }
  }

  private async flushOne(provider: Provider, source: HealthSource, pending: Pending): Promise<void> {
    const now = this.now();
    const settings = this.settings;
    const judge = source === 'platform' && settings.breakerEnabled;
    const bucket = Math.floor(now / this.windowBucketMs) * this.windowBucketMs;
    const minute = Math.floor(now / MINUTE_MS) * MINUTE_MS;
    const fieldArgs: (string | number)[] = [];
    for (const [model, counts] of pending.models) {
      counts.forEach((count, i) => {
        if (count > 0) fieldArgs.push(i < OUTCOME_FIELDS.length ? `${model}|${OUTCOME_FIELDS[i] as string}` : `${model}|h${i - OUTCOME_FIELDS.length}`, count);
      });
    }
    const keys = [
      providerHealthKeys.breaker(provider),
      providerHealthKeys.windowBucket(provider, source, bucket),
      providerHealthKeys.minuteBucket(provider, source, minute),
      ...this.windowKeys(provider, source, now),
    ];
    const reply = await (this.redis as unknown as { svcHealthFlush(...args: (string | number)[]): Promise<(string | null)[]> }).svcHealthFlush(
      keys.length, ...keys,
      now, this.windowBucketMs * 8, HEALTH_MINUTE_TTL_MS, pending.calls, pending.failures,
      pending.allTimeouts ? 1 : 0, pending.leading, pending.trailing, judge ? 1 : 0,
      settings.minCalls, settings.failurePercent, settings.timeoutStreak, settings.cooldownMs,
      fieldArgs.length / 2, ...fieldArgs,
    );
    this.update(provider, reply);
  }

  /** The window's bucket keys of a provider and source at `now` (the current one included). */
  private windowKeys(provider: Provider, source: HealthSource, now: number): string[] {
    const width = this.windowBucketMs;
    const keys: string[] = [];
    for (let start = Math.floor((now - this.settings.windowMs) / width) * width + width; start <= now; start += width) {
      keys.push(providerHealthKeys.windowBucket(provider, source, start));
    }
    return keys;
  }

  /** Reads every breaker's state; sends the probe of each whose cool-down ended. */
  async refresh(): Promise<void> {
    if (this.busy.refresh) return;
    this.busy.refresh = true;
    try {
      await Promise.all(PROVIDERS.map(async (provider) => {
        try {
          const reply = await this.redis.hmget(providerHealthKeys.breaker(provider), 'state', 'open_until_ms', 'force', 'reason', 'opened_at_ms');
          this.update(provider, reply);
        } catch (error) {
          // Keep the last state seen: a Redis outage must not open or close a breaker by itself.
          this.log.debug({ provider, err: error instanceof Error ? error.message : String(error) }, 'provider health refresh failed');
          return;
        }
        if (this.probeDue(provider)) void this.probe(provider);
      }));
    } finally {
      this.busy.refresh = false;
    }
  }

  private update(provider: Provider, reply: readonly (string | null)[]): void {
    const [state, openUntil, force, reason, openedAt] = reply;
    const forced = force === 'open' || force === 'closed' ? force : null;
    const previous = this.breakers[provider];
    const next: BreakerView = state === 'open'
      ? { state: 'open', openUntilMs: Number(openUntil ?? 0), openedAtMs: Number(openedAt ?? 0), forced, reason: reason ?? null }
      : forced === null ? CLOSED : { state: 'closed', openUntilMs: 0, openedAtMs: 0, forced, reason: null };
    if (previous.state !== next.state || previous.forced !== next.forced) {
      this.log.warn({ provider, state: next.state, forced: next.forced, reason: next.reason }, next.state === 'open' ? 'provider breaker open' : 'provider breaker closed');
    }
    this.breakers[provider] = next;
  }

  private probeDue(provider: Provider): boolean {
    const breaker = this.breakers[provider];
    return this.settings.breakerEnabled && breaker.state === 'open' && breaker.forced === null && breaker.openUntilMs <= this.now()
      && !this.probing.has(provider) && this.providers.platformKey(provider) !== undefined;
  }

  /**
   * The platform's own probe search (never a customer's: nothing is reserved, settled or
   * written to a ledger), at most one per provider per cool-down across the cluster.
   * Returns whether this gateway sent it.
   */
  async probe(provider: Provider): Promise<boolean> {
    const apiKey = this.providers.platformKey(provider);
    if (apiKey === undefined || this.probing.has(provider)) return false;
    this.probing.add(provider);
    try {
      const lock = await this.redis.set(providerHealthKeys.probeLock(provider), String(this.now()), 'PX', this.settings.cooldownMs, 'NX');
      if (lock !== 'OK') return false;
      let outcome: ProviderOutcome;
      try {
        outcome = await this.providers.adapter(provider).search({ query: this.settings.probeQuery, model: PROBE_MODEL[provider], maxResults: 1, apiKey, timeoutMs: this.settings.probeTimeoutMs });
      } catch {
        outcome = { ok: false, kind: 'connection', error: 'provider call failed', status: null };
      }
      const now = this.now();
      const breakerKey = providerHealthKeys.breaker(provider);
      if (outcome.ok) {
        this.probes[provider].ok += 1;
        const keys = [breakerKey, ...this.windowKeys(provider, 'platform', now)];
        await (this.redis as unknown as { svcHealthClose(...args: (string | number)[]): Promise<number> }).svcHealthClose(keys.length, ...keys, now);
        this.log.warn({ provider }, 'provider probe answered: breaker closed');
      } else {
        this.probes[provider].failed += 1;
        await (this.redis as unknown as { svcHealthReopen(key: string, now: number, cooldownMs: number): Promise<number> }).svcHealthReopen(breakerKey, now, this.settings.cooldownMs);
        this.log.warn({ provider, kind: outcome.kind }, 'provider probe failed: another cool-down');
      }
      const reply = await this.redis.hmget(breakerKey, 'state', 'open_until_ms', 'force', 'reason', 'opened_at_ms');
      this.update(provider, reply);
      return true;
    } catch (error) {
      this.log.warn({ provider, err: error instanceof Error ? error.message : String(error) }, 'provider probe could not run');
      return false;
    } finally {
      this.probing.delete(provider);
    }
  }

  /** The platform key's figures per model over the last 5 minutes and hour (read at most every 5 s). */
  async loadFigures(): Promise<HealthFigures> {
    if (this.now() - this.figures.atMs < FIGURES_MAX_AGE_MS) return this.figures;
    if (this.figuresLoading !== null) return this.figuresLoading;
    this.figuresLoading = this.readFigures().then((figures) => {
      this.figures = figures;
      return figures;
    }).finally(() => {
      this.figuresLoading = null;
    });
    return this.figuresLoading;
  }

  /** The figures last read (perhaps none yet); starts a read in the background when they are old. */
  latestFigures(): HealthFigures {
    if (this.now() - this.figures.atMs >= FIGURES_MAX_AGE_MS) {
      this.loadFigures().catch((error: unknown) => this.log.debug({ err: error instanceof Error ? error.message : String(error) }, 'provider health figures not read'));
    }
    return this.figures;
  }

  private async readFigures(): Promise<HealthFigures> {
    const now = this.now();
    const minute = Math.floor(now / MINUTE_MS) * MINUTE_MS;
    const models = new Map<string, { last5m: WindowFigures; last1h: WindowFigures }>();
    for (const model of MODELS) models.set(model.id, { last5m: emptyFigures(), last1h: emptyFigures() });
    await Promise.all(PROVIDERS.map(async (provider) => {
      // One pipeline per provider: its 60 minute hashes share one slot.
      const pipeline = this.redis.pipeline();
      for (let i = 0; i < 60; i++) pipeline.hgetall(providerHealthKeys.minuteBucket(provider, 'platform', minute - i * MINUTE_MS));
      const replies = (await pipeline.exec()) ?? [];
      replies.forEach(([error, value], i) => {
        if (error !== null || value === null || typeof value !== 'object') return;
        for (const [field, raw] of Object.entries(value as Record<string, string>)) {
          const bar = field.lastIndexOf('|');
          const entry = models.get(field.slice(0, bar));
          if (entry === undefined) continue;
          const count = Number(raw);
          addField(entry.last1h, field.slice(bar + 1), count);
          if (i < 5) addField(entry.last5m, field.slice(bar + 1), count);
        }
      });
    }));
    return { atMs: now, models };
  }
}

function addField(figures: WindowFigures, field: string, count: number): void {
  if (!Number.isFinite(count)) return;
  if (field.startsWith('h')) {
    const index = Number(field.slice(1));
    if (Number.isInteger(index) && index >= 0 && index < figures.histogram.length) figures.histogram[index] = (figures.histogram[index] ?? 0) + count;
    return;
  }
  figures.calls += count;
  if (field === 'ok' || field === 'timeout' || field === 'server_error' || field === 'rate_limited') figures[field] += count;
}

/** The index of the latency bucket of `ms` (the last bucket holds everything above). */
export function latencyBucket(ms: number): number {
  for (let i = 0; i < HEALTH_LATENCY_BUCKETS_MS.length - 1; i++) {
    if (ms <= (HEALTH_LATENCY_BUCKETS_MS[i] as number)) return i;
  }
  return HEALTH_LATENCY_BUCKETS_MS.length - 1;
}

/** A quantile of a bucket histogram: the upper bound of the bucket it falls in (null without calls). */
export function quantileMs(histogram: readonly number[], q: number): number | null {
  const total = histogram.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    seen += histogram[i] as number;
    if (seen >= q * total) return HEALTH_LATENCY_BUCKETS_MS[i] as number;
  }
  return HEALTH_LATENCY_BUCKETS_MS[HEALTH_LATENCY_BUCKETS_MS.length - 1] as number;
}

export { emptyFigures };
