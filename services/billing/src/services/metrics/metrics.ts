import type { SettlementRecord } from '@svc/contracts';
import { Counter, createRegistry, Gauge, Histogram, HttpMetrics, LATENCY_BUCKETS_S } from '@svc/metrics';
import type { Registry } from '@svc/metrics';
import type { Backlog } from '../backlog/backlog.service';
import type { ReconciliationCounters } from '../reconciliation/reconciliation-job';

/** Stripe webhook outcomes and the money they moved (billing's API process). */
export interface WebhookMetrics {
  /** One webhook answered: its outcome (granted, duplicate_event, ...) or the error code it answered with. */
  webhook(outcome: string): void;
  /** Purchased credit granted, in micro-USD. */
  credited(micros: number): void;
  /** Purchased credit taken back (kind: stripe_refund or dispute), in micro-USD. */
  refunded(kind: string, micros: number): void;
}

/** billing's API process: its two HTTP listeners and the Stripe webhook. */
export class BillingMetrics implements WebhookMetrics {
  readonly http: HttpMetrics;
  private readonly webhooks: Counter<'outcome'>;
  private readonly credit: Counter;
  private readonly refund: Counter<'kind'>;

  constructor(readonly registry: Registry = createRegistry('billing')) {
    const registers = [registry];
    this.http = new HttpMetrics(registry);
    this.webhooks = new Counter({ name: 'billing_stripe_webhooks_total', help: 'Stripe webhook deliveries answered, by outcome (granted, already_granted, duplicate_event, debited, ... or the error code answered)', labelNames: ['outcome'], registers });
    this.credit = new Counter({ name: 'billing_credited_micros_total', help: 'Purchased credit granted, in micro-USD', registers });
    this.refund = new Counter({ name: 'billing_refunded_micros_total', help: 'Purchased credit taken back by Stripe refunds and disputes, in micro-USD, by kind', labelNames: ['kind'], registers });
    for (const kind of ['stripe_refund', 'dispute']) this.refund.labels(kind).inc(0);
  }

  webhook(outcome: string): void {
    this.webhooks.labels(outcome).inc();
  }

  credited(micros: number): void {
    this.credit.inc(micros);
  }

  refunded(kind: string, micros: number): void {
    this.refund.labels(kind).inc(micros);
  }
}

/** What the ledger worker's metrics read at scrape. */
export interface WorkerSources {
  backlog(): Promise<Backlog>;
  reconciliation(): ReconciliationCounters;
}

/**
 * The ledger worker: settlements written (and their money), the drain's lag, the backlog
 * (read from Redis at scrape) and reconciliation's last run.
 */
export class LedgerWorkerMetrics {
  readonly http: HttpMetrics;
  private readonly written: Counter<'result'>;
  private readonly charged: Counter;
  private readonly lag: Histogram;
  private readonly deadLettered: Counter;

  constructor(sources: WorkerSources, readonly registry: Registry = createRegistry('ledger-worker')) {
    const registers = [registry];
    this.http = new HttpMetrics(registry);
    this.written = new Counter({ name: 'ledger_settlements_total', help: 'Settlement records the drain handled, by result (written; duplicate: already in the ledger)', labelNames: ['result'], registers });
    for (const result of ['written', 'duplicate']) this.written.labels(result).inc(0);
    this.charged = new Counter({ name: 'ledger_charged_micros_total', help: 'Money charged for searches written to the ledger, in micro-USD', registers });
    this.deadLettered = new Counter({ name: 'ledger_dead_lettered_total', help: 'Settlement entries that cannot be billed, moved to the dead-letter stream', registers });
    this.lag = new Histogram({ name: 'ledger_drain_lag_seconds', help: 'Time from a search\'s settlement (gateway clock) to its commit in the ledger', buckets: LATENCY_BUCKETS_S, registers });
    let last: Backlog | null = null;
    const backlogGauge = (name: string, help: string, read: (b: Backlog) => number): void => {
      new Gauge({
        name, help, registers,
        collect: async function collect(this: Gauge) {
          // One measurement per scrape, shared by the backlog gauges (the first one reads it).
          if (name === 'ledger_backlog_records') last = await sources.backlog();
          if (last !== null) this.set(read(last));
        },
      });
    };
    backlogGauge('ledger_backlog_records', 'Settlement records in Redis not yet in the ledger', (b) => b.pendingRecords);
    backlogGauge('ledger_backlog_accounts', 'Accounts with settlement records not yet in the ledger', (b) => b.pendingAccounts);
    backlogGauge('ledger_backlog_oldest_age_seconds', 'Age of the oldest settlement record not yet in the ledger (0 when none)', (b) => b.oldestPendingAgeMs / 1000);
    backlogGauge('ledger_drain_rate_per_second', 'Settlement records written per second over the last 10 s (all worker replicas)', (b) => b.drainRatePerS);
    const reconcile = (name: string, help: string, read: (c: ReconciliationCounters) => number): void => {
      new Gauge({ name, help, registers, collect: function collect(this: Gauge) { this.set(read(sources.reconciliation())); } });
    };
    reconcile('reconciliation_runs', 'Reconciliation passes this worker ran since start', (c) => c.runs);
    reconcile('reconciliation_last_run_timestamp_seconds', 'When this worker\'s last reconciliation pass ended (0: none yet)', (c) => (c.last_run_at === null ? 0 : Date.parse(c.last_run_at) / 1000));
    reconcile('reconciliation_drift_accounts', 'Accounts whose Redis figures disagreed with the ledger in the last pass', (c) => c.last_drift_accounts);
    reconcile('reconciliation_drift_micros', 'Sum of the absolute drift of every account in the last pass, in micro-USD', (c) => c.last_drift_micros);
    reconcile('reconciliation_stale_released', 'Stale reservations released since start', (c) => c.stale_released_total);
    reconcile('reconciliation_drift_corrected', 'Drifts corrected since start (RECONCILE_REPAIR=true)', (c) => c.drift_corrected_total);
  }

  /** After a batch committed: what it wrote, and how long its records waited. */
  batchWritten(records: readonly SettlementRecord[], written: number, skipped: number, chargedMicros: number, nowMs: number): void {
    this.written.labels('written').inc(written);
    this.written.labels('duplicate').inc(skipped);
    this.charged.inc(chargedMicros);
    for (const record of records) this.lag.observe(Math.max(0, nowMs - record.settledAtMs) / 1000);
  }

  deadLetter(): void {
    this.deadLettered.inc();
  }
}

/**
 * The research worker (docs/decisions/0062): steps by provider and outcome, runs settled by
 * status and the money they moved, and the runs still open (read at scrape).
 */
export class ResearchWorkerMetrics {
  readonly http: HttpMetrics;
  private readonly steps: Counter<'provider' | 'outcome'>;
  private readonly settled: Counter<'status'>;
  private readonly charged: Counter;
  private readonly providerCost: Counter;

  constructor(openRuns: () => Promise<number>, readonly registry: Registry = createRegistry('research-worker')) {
    const registers = [registry];
    this.http = new HttpMetrics(registry);
    this.steps = new Counter({ name: 'research_steps_total', help: 'Steps of research runs, by provider and outcome (later: polled or started, the run goes on; done: settled or moved to another queue; error: the step failed and is retried)', labelNames: ['provider', 'outcome'], registers });
    this.settled = new Counter({ name: 'research_runs_settled_total', help: 'Research runs settled by this worker, by status', labelNames: ['status'], registers });
    for (const status of ['completed', 'failed', 'cancelled']) this.settled.labels(status).inc(0);
    this.charged = new Counter({ name: 'research_charged_micros_total', help: 'What settled research runs were charged, in micro-USD', registers });
    this.providerCost = new Counter({ name: 'research_provider_cost_micros_total', help: 'What the providers reported settled research runs cost the platform, in micro-USD', registers });
    new Gauge({ name: 'research_open_runs', help: 'Research runs not settled yet (all workers)', registers, collect: async function collect(this: Gauge) { this.set(await openRuns()); } });
  }

  step(provider: string, outcome: 'later' | 'done' | 'error'): void {
    this.steps.labels(provider, outcome).inc();
  }

  runSettled(status: string, chargedMicros: number, providerCostMicros: number): void {
    this.settled.labels(status).inc();
    this.charged.inc(chargedMicros);
    this.providerCost.inc(providerCostMicros);
  }
}
