import { DEFAULT_RESEARCH_RUN_TIMEOUT_MS, KEY_PERIOD_COUNTER_GRACE_MS, LIMIT_RESETS, periodOf, RESERVATION_TTL_GRACE_MS, redisKeys } from '@svc/contracts';
import type { Micros } from '@svc/money';
import type { Logger } from 'pino';
import { APPLIED_MARKER_TTL_SECONDS } from '../spendable/spendable-balance.adapter';
import type { CounterWrite, HydrationRedisAdapter, StreamRecordView } from './hydration-redis.adapter';
import type { HydrationRepository, KeyUsage } from '../../stores/hydration.repository';

/** Attempts when a settlement lands in the stream between the read and the write. */
const WRITE_TRIES = 5;

export type HydrationOutcome =
  | { kind: 'hydrated'; balanceMicros: Micros; pendingRecords: number; appliedEntries: number }
  /** The balance key exists: nothing to rebuild. */
  | { kind: 'already' }
  /** Too soon after the flush was seen: gateways may still be re-sending records. */
  | { kind: 'wait'; retryAfterMs: number }
  /** The stream kept changing; the next round tries again. */
  | { kind: 'busy' };

export interface HydrationSettings {
  /** How long after the epoch was (re)created hydration waits for gateways to re-send their records. */
  graceMs: number;
}

/**
 * Rebuilds a cold account's spendable side from the ledger (docs/architecture.md,
 * "When Redis fails"). Under the account's lock:
 *   bal = durable - pending, pending = records in the stream whose request id is not in
 *   settlements (each request id once); reservations count nothing (they were lost with
 *   Redis; their searches settle against the rebuilt balance);
 * every unapplied ledger entry is counted (its amount is in durable): its applied marker is
 * set by the same script that writes bal, and its column marked before the lock is
 * released, so the outbox can never add it again; the keys' usage counters (current day,
 * week and month, and all time) are rebuilt from the settled spend (each key's days,
 * key_spend_days, kept with the settlements: decision 35) plus pending records. The
 * write is one script that does nothing when bal exists or the stream changed since it
 * was read.
 */
export class HydrationService {
  constructor(
    private readonly repository: HydrationRepository,
    private readonly redis: HydrationRedisAdapter,
    private readonly logger: Logger,
    private readonly settings: HydrationSettings,
  ) {}

  async hydrate(accountId: string): Promise<HydrationOutcome> {
    for (let attempt = 1; attempt <= WRITE_TRIES; attempt += 1) {
      const epoch = await this.redis.ensureEpoch();
      const sinceFlushMs = epoch.createdMs === null ? Number.POSITIVE_INFINITY : epoch.nowMs - epoch.createdMs;
      const outcome = await this.repository.underAccountLock(accountId, async (view): Promise<HydrationOutcome | { kind: 'changed' }> => {
        const cold = await this.redis.readCold(accountId);
        if (cold.warm) return { kind: 'already' };
        if (view.hasHistory && sinceFlushMs < this.settings.graceMs) {
          return { kind: 'wait', retryAfterMs: this.settings.graceMs - sinceFlushMs };
        }
        const settled = await view.settledAmong(cold.records.map((r) => r.requestId));
        const pending = uniquePending(cold.records, settled);
        const pendingMicros = pending.reduce((sum, r) => sum + r.chargedMicros, 0);
        const balance = view.durableMicros - pendingMicros;
        const counters = [
          ...countersOf(accountId, await view.usageSince(periodStarts(epoch.nowMs)), pending, epoch.nowMs),
          ...researchHolds(accountId, await view.openResearchHolds(), epoch.nowMs),
        ];
        const written = await this.redis.writeHydrated(accountId, cold.lastId, balance, counters, view.unappliedEntryIds, APPLIED_MARKER_TTL_SECONDS);
        if (written === 'already') return { kind: 'already' };
        if (written === 'changed') return { kind: 'changed' };
        await view.markApplied(view.unappliedEntryIds);
        return { kind: 'hydrated', balanceMicros: balance, pendingRecords: pending.length, appliedEntries: view.unappliedEntryIds.length };
      });
      if (outcome === null) {
        // No balance row: no ledger entry and no settlement ever. A balance of 0 (a grant
        // committed meanwhile is applied by the outbox on top of it).
        const cold = await this.redis.readCold(accountId);
        if (cold.warm) return { kind: 'already' };
        const written = await this.redis.writeHydrated(accountId, cold.lastId, 0, [], [], APPLIED_MARKER_TTL_SECONDS);
        if (written === 'changed') continue;
        if (written === 'hydrated') this.logger.info({ account_id: accountId }, 'account without history hydrated with balance 0');
        return written === 'hydrated' ? { kind: 'hydrated', balanceMicros: 0, pendingRecords: 0, appliedEntries: 0 } : { kind: 'already' };
      }
      if (outcome.kind === 'changed') continue;
      if (outcome.kind === 'hydrated') {
        this.logger.warn(
          { account_id: accountId, balance_micros: outcome.balanceMicros, pending_records: outcome.pendingRecords, applied_entries: outcome.appliedEntries },
          'spendable balance rebuilt from the ledger after redis lost its data',
        );
      }
      return outcome;
    }
    return { kind: 'busy' };
  }
}

/**
 * The keys' holds of the research runs still open (docs/decisions/0062): their holds are in the
 * ledger, so a rebuilt account's keys count them against their limits again. A search's
 * reservation is lost with Redis and holds nothing after a rebuild; a run's is not. Each lives
 * as long as a run may (the research worker keeps it alive while the run goes on).
 */
function researchHolds(accountId: string, holds: readonly { keyId: string; heldMicros: Micros }[], nowMs: number): CounterWrite[] {
  return holds.filter((h) => h.heldMicros > 0).map((h) => ({
    key: redisKeys.keyHold(accountId, h.keyId), value: h.heldMicros, expireAtMs: nowMs + DEFAULT_RESEARCH_RUN_TIMEOUT_MS + RESERVATION_TTL_GRACE_MS,
  }));
}

function uniquePending(records: readonly StreamRecordView[], settled: ReadonlySet<string>): StreamRecordView[] {
  const seen = new Set<string>();
  const out: StreamRecordView[] = [];
  for (const record of records) {
    // An unparseable entry is dead-lettered by the drain and never billed: it counts nothing.
    if (record.requestId === '' || settled.has(record.requestId) || seen.has(record.requestId)) continue;
    seen.add(record.requestId);
    out.push(record);
  }
  return out;
}

function periodStarts(nowMs: number): number[] {
  return currentPeriods(nowMs).map((period) => period.startMs);
}

/**
 * The current periods of every reset kind, one per start: on a Monday the day and the week
 * start at the same instant (and on the 1st the day and the month), and share one counter
 * key; it must live as long as the longest of them.
 */
function currentPeriods(nowMs: number): { startMs: number; endMs: number }[] {
  const byStart = new Map<number, number>();
  for (const reset of LIMIT_RESETS) {
    const period = periodOf(reset, nowMs);
    byStart.set(period.startMs, Math.max(byStart.get(period.startMs) ?? 0, period.endMs));
  }
  return [...byStart].map(([startMs, endMs]) => ({ startMs, endMs }));
}

/** Every key's current period counters and all-time counter: settled usage plus pending records. */
export function countersOf(accountId: string, usage: readonly KeyUsage[], pending: readonly StreamRecordView[], nowMs: number): CounterWrite[] {
  const byKey = new Map<string, { since: Map<number, Micros>; all: Micros }>();
  for (const u of usage) byKey.set(u.keyId, { since: new Map(u.sinceMicros), all: u.allTimeMicros });
  const periods = currentPeriods(nowMs);
  for (const record of pending) {
    if (record.chargedMicros <= 0 || record.keyId === '') continue;
    let entry = byKey.get(record.keyId);
    if (entry === undefined) {
      entry = { since: new Map(), all: 0 };
      byKey.set(record.keyId, entry);
    }
    entry.all += record.chargedMicros;
    for (const period of periods) {
      if (record.settledAtMs >= period.startMs) entry.since.set(period.startMs, (entry.since.get(period.startMs) ?? 0) + record.chargedMicros);
    }
  }
  const out: CounterWrite[] = [];
  for (const [keyId, entry] of byKey) {
    out.push({ key: redisKeys.keyTotalUsage(accountId, keyId), value: entry.all, expireAtMs: 0 });
    // Every key's day, week and month counters (the gateway moves all three on each settlement).
    for (const reset of LIMIT_RESETS) {
      const period = periodOf(reset, nowMs);
      out.push({ key: redisKeys.keyPeriodUsage(accountId, keyId, reset, period.startMs), value: entry.since.get(period.startMs) ?? 0, expireAtMs: period.endMs + KEY_PERIOD_COUNTER_GRACE_MS });
    }
  }
  return out;
}
