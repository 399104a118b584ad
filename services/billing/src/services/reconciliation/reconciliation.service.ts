import { AppError } from '@svc/errors';
import type { Micros } from '@svc/money';
import type { Logger } from 'pino';
import type { OpenReservation, ReconciliationRedisAdapter } from './reconciliation-redis.adapter';
import type { ReconciliationRepository } from '../../stores/reconciliation.repository';

/** One consistent reading of an account (all micro-USD). drift = (durable - unapplied) - (spendable + reserved + pending). */
export interface AccountFigures {
  durableMicros: Micros;
  /** null when Redis has no balance key for the account (lost, not rebuilt yet). */
  spendableMicros: Micros | null;
  reservedMicros: Micros;
  pendingMicros: Micros;
  pendingRecords: number;
  unappliedMicros: Micros;
  driftMicros: Micros;
}

export type Repair =
  | { kind: 'stale_reservation_released'; requestId: string; amountMicros: Micros }
  | { kind: 'drift_corrected'; amountMicros: Micros; balanceAfterMicros: Micros };

export interface AccountReport extends AccountFigures {
  accountId: string;
  staleReservations: { requestId: string; heldMicros: Micros; overdueMs: number | null }[];
  repairs: Repair[];
  /** Why a non-zero drift was not corrected (null when none was seen, or it was corrected). */
  driftNote: string | null;
}

export interface RepairOptions {
  /** Release reservations whose search is past its bound by more than staleAfterMs. */
  releaseStale: boolean;
  /** Correct a drift seen equal on two consecutive locked reads (INCRBY on bal). */
  correctDrift: boolean;
}

export const REPORT_ONLY: RepairOptions = { releaseStale: false, correctDrift: false };

interface Reading {
  figures: AccountFigures;
  correction: Micros | null;
}

/**
 * Reconciles the durable ledger with the spendable side in Redis, per account, under the
 * account's lock (the balance row, which the drain also locks: see ReconciliationRepository).
 * Repairs move only Redis, never the durable ledger: no money moved in the ledger.
 */
export class ReconciliationService {
  constructor(
    private readonly repository: ReconciliationRepository,
    private readonly redis: ReconciliationRedisAdapter,
    private readonly logger: Logger,
    private readonly staleAfterMs: number,
  ) {}

  /**
   * One page of accounts reconciled. `reservations`: the reservation hash keys a
   * ReservationWalk found (the periodic job); without it, one SCAN finds the page's (decision 0036).
   */
  async reconcilePage(limit: number, afterId: string | null, options: RepairOptions, reservations?: Iterable<string>): Promise<{ reports: AccountReport[]; nextAfterId: string | null }> {
    const page = await this.repository.listAccounts(limit, afterId);
    const reports = await this.reconcileAccounts(page.accountIds, options, false, reservations);
    const last = page.accountIds[page.accountIds.length - 1];
    return { reports, nextAfterId: page.hasMore && last !== undefined ? last : null };
  }

  async reconcileAccount(accountId: string, options: RepairOptions): Promise<AccountReport> {
    const [report] = await this.reconcileAccounts([accountId], options, true);
    if (report === undefined) throw new AppError('not_found', `account ${accountId} has no balance`);
    return report;
  }

  private async reconcileAccounts(accountIds: readonly string[], options: RepairOptions, strict = false, reservations?: Iterable<string>): Promise<AccountReport[]> {
    if (accountIds.length === 0) return [];
    const open = await this.redis.openReservations(accountIds, reservations);
    const reports: AccountReport[] = [];
    for (const accountId of accountIds) {
      const report = await this.reconcileOne(accountId, open.filter((r) => r.accountId === accountId), options);
      if (report === null) {
        if (strict) return [];
        continue;
      }
      reports.push(report);
    }
    return reports;
  }

  private async reconcileOne(accountId: string, open: readonly OpenReservation[], options: RepairOptions): Promise<AccountReport | null> {
    const stale = open.filter((r) => r.overdueMs === null || r.overdueMs > this.staleAfterMs);
    const repairs: Repair[] = [];
    if (options.releaseStale) {
      for (const reservation of stale) {
        const released = await this.redis.releaseReservation(accountId, reservation.key);
        this.logger.warn(
          { account_id: accountId, request_id: reservation.requestId, released_micros: released, overdue_ms: reservation.overdueMs },
          'reconciliation released a stale reservation',
        );
        repairs.push({ kind: 'stale_reservation_released', requestId: reservation.requestId, amountMicros: released });
      }
    }
    const first = await this.read(accountId, null);
    if (first === null) return null;
    let figures = first.figures;
    let driftNote: string | null = null;
    if (figures.driftMicros !== 0) {
      if (figures.spendableMicros === null) {
        driftNote = 'spendable balance missing in Redis: it is rebuilt from the ledger, not corrected here';
      } else if (!options.correctDrift) {
        driftNote = 'reported only (repair not requested)';
      } else {
        // Second read, under the lock again; the correction is applied inside it only when
        // the drift is exactly the one seen before, so a transient state is never "repaired".
        const second = await this.read(accountId, figures.driftMicros);
        if (second === null) return null;
        figures = second.figures;
        if (second.correction === null) {
          driftNote = 'drift changed between two reads; not corrected';
        } else {
          this.logger.warn(
            { account_id: accountId, drift_micros: figures.driftMicros, balance_after_micros: second.correction, durable_micros: figures.durableMicros },
            'reconciliation corrected the spendable balance',
          );
          repairs.push({ kind: 'drift_corrected', amountMicros: figures.driftMicros, balanceAfterMicros: second.correction });
        }
      }
    }
    if (figures.driftMicros !== 0) {
      this.logger.warn({ account_id: accountId, drift_micros: figures.driftMicros, corrected: repairs.some((r) => r.kind === 'drift_corrected') }, 'reconciliation found drift');
    }
    return {
      accountId,
      ...figures,
      staleReservations: stale.map((r) => ({ requestId: r.requestId, heldMicros: r.heldMicros, overdueMs: r.overdueMs })),
      repairs,
      driftNote,
    };
  }

  /**
   * One locked reading. With `correctIfDrift`, a drift equal to it is corrected (INCRBY on
   * bal) before the lock is released; `correction` is then the balance after it.
   */
  private async read(accountId: string, correctIfDrift: Micros | null): Promise<Reading | null> {
    return this.repository.underAccountLock(accountId, async (view) => {
      const snapshot = await this.redis.readSpendable(accountId, view.unapplied.map((e) => e.id));
      const settled = await view.settledAmong(snapshot.pending.map((p) => p.requestId));
      const pending = snapshot.pending.filter((p) => p.requestId === '' || !settled.has(p.requestId));
      const pendingMicros = pending.reduce((sum, p) => sum + p.chargedMicros, 0);
      const unappliedMicros = view.unapplied.filter((e) => !snapshot.appliedEntryIds.has(e.id)).reduce((sum, e) => sum + e.amountMicros, 0);
      const left = (snapshot.balanceMicros ?? 0) + snapshot.reservedMicros + pendingMicros;
      const driftMicros = view.durableMicros - unappliedMicros - left;
      const figures: AccountFigures = {
        durableMicros: view.durableMicros,
        spendableMicros: snapshot.balanceMicros,
        reservedMicros: snapshot.reservedMicros,
        pendingMicros,
        pendingRecords: pending.length,
        unappliedMicros,
        driftMicros,
      };
      let correction: Micros | null = null;
      if (correctIfDrift !== null && driftMicros !== 0 && driftMicros === correctIfDrift) {
        correction = await this.redis.adjustBalance(accountId, driftMicros);
      }
      return { figures, correction };
    });
  }
}
