import type { Logger } from 'pino';
import type { RepairOptions, ReconciliationService } from './reconciliation.service';
import type { ReservationWalk } from './reservation-walk';

/** Counters of the periodic reconciliation (shown on the worker's /readyz). */
export interface ReconciliationCounters {
  runs: number;
  last_run_at: string | null;
  last_accounts: number;
  last_drift_accounts: number;
  /** Sum of |drift| over the accounts of the last run, in micro-USD. */
  last_drift_micros: number;
  drift_accounts_total: number;
  stale_released_total: number;
  drift_corrected_total: number;
}

/**
 * One pass over every account: reports drift (a warning per account and the counters),
 * releases stale reservations, and corrects drift only when `correctDrift` is set
 * (RECONCILE_REPAIR=true).
 */
export class ReconciliationJob {
  readonly counters: ReconciliationCounters = {
    runs: 0, last_run_at: null, last_accounts: 0, last_drift_accounts: 0, last_drift_micros: 0, drift_accounts_total: 0, stale_released_total: 0, drift_corrected_total: 0,
  };

  constructor(
    private readonly service: ReconciliationService,
    private readonly logger: Logger,
    private readonly options: RepairOptions,
    private readonly pageSize = 100,
    /** Finds the reservation hashes for every page (decision 0036); null: each page SCANs the keyspace. */
    private readonly reservations: ReservationWalk | null = null,
  ) {}

  async run(): Promise<ReconciliationCounters> {
    let afterId: string | null = null;
    let accounts = 0;
    let drift = 0;
    let driftMicros = 0;
    const reservations = this.reservations === null ? undefined : await this.reservations.advance();
    do {
      const page: Awaited<ReturnType<ReconciliationService['reconcilePage']>> = await this.service.reconcilePage(this.pageSize, afterId, this.options, reservations);
      for (const report of page.reports) {
        accounts += 1;
        if (report.driftMicros !== 0) drift += 1;
        driftMicros += Math.abs(report.driftMicros);
        for (const repair of report.repairs) {
          if (repair.kind === 'stale_reservation_released') this.counters.stale_released_total += 1;
          else this.counters.drift_corrected_total += 1;
        }
      }
      afterId = page.nextAfterId;
    } while (afterId !== null);
    this.counters.runs += 1;
    this.counters.last_run_at = new Date().toISOString();
    this.counters.last_accounts = accounts;
    this.counters.last_drift_accounts = drift;
    this.counters.last_drift_micros = driftMicros;
    this.counters.drift_accounts_total += drift;
    const log = { accounts, drift_accounts: drift, stale_released_total: this.counters.stale_released_total };
    if (drift > 0) this.logger.warn(log, 'reconciliation found accounts with drift');
    else this.logger.info(log, 'reconciliation done: no drift');
    return { ...this.counters };
  }
}
