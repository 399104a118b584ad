/**
 * What the ledger worker's periodic Redis work costs when the keyspace is large: the result
 * cache stores an entry per distinct search (a 1-hour TTL by default), so a Redis shared with
 * the cache holds millions of keys that none of the worker's jobs is looking for. One
 * "minute" of the worker at its defaults is run in-process with billing's own code: the
 * backlog measured 12 times (BACKLOG_LOG_INTERVAL_MS, 5 s), the sweep twice
 * (LEDGER_SWEEP_INTERVAL_MS, 30 s) and one reconciliation run (RECONCILE_INTERVAL_MS, 60 s;
 * one page), against ENTRIES plain keys standing in for cache entries, one account's stream
 * and one open reservation. Reported: Redis's own time for those commands (INFO commandstats,
 * summed over every command) per minute of the worker, and its share of one core; medians
 * of MINUTES.
 *
 * Env: ENTRIES (1000000), MINUTES (3), BENCH_REDIS_DB (15), BILLING_ROOT (the checkout whose
 * built billing runs it, default this one: another build's, e.g. a worktree of the previous
 * commit, to compare).
 * Prints Markdown and writes bench/results/keyspace-walks.json.
 */
import { Redis } from 'ioredis';
import pino from 'pino';
import { redisKeys, SETTLEMENT_DIRTY_SET, SETTLEMENT_FIELD } from '@svc/contracts';
import { redisUrl } from '@svc/test-kit';
import { billingModule, billingRoot, reportOneRow, withFreshBillingDatabase } from './lib-billing';
import { median } from './lib-results';

type Ctor<T> = new (...args: never[]) => T;
const { BacklogService } = billingModule<{ BacklogService: Ctor<{ measure(): Promise<{ pendingRecords: number }> }> }>('services/billing/dist/services/backlog/backlog.service.js');
const { LedgerDrainService } = billingModule<{ LedgerDrainService: Ctor<{ sweep(): Promise<number> }> }>('services/billing/dist/services/settlement/ledger-drain.service.js');
const { SettlementStreamAdapter } = billingModule<{ SettlementStreamAdapter: Ctor<object> }>('services/billing/dist/services/settlement/settlement-stream.adapter.js');
const { LedgerAppendRepository } = billingModule<{ LedgerAppendRepository: Ctor<object> }>('services/billing/dist/stores/ledger-append.repository.js');
const { ReconciliationJob } = billingModule<{ ReconciliationJob: Ctor<{ run(): Promise<{ stale_released_total: number }> }> }>('services/billing/dist/services/reconciliation/reconciliation-job.js');
const { ReconciliationService, REPORT_ONLY } = billingModule<{ ReconciliationService: Ctor<object>; REPORT_ONLY: object }>('services/billing/dist/services/reconciliation/reconciliation.service.js');
const { ReconciliationRepository } = billingModule<{ ReconciliationRepository: Ctor<object> }>('services/billing/dist/stores/reconciliation.repository.js');
const { ReconciliationRedisAdapter } = billingModule<{ ReconciliationRedisAdapter: Ctor<object> }>('services/billing/dist/services/reconciliation/reconciliation-redis.adapter.js');
/** The walk the periodic reconciliation keeps (decision 0036); absent from a build before it. */
function reservationWalk(adapter: object): object | null {
  try {
    const { ReservationWalk } = billingModule<{ ReservationWalk: Ctor<object> }>('services/billing/dist/services/reconciliation/reservation-walk.js');
    return new ReservationWalk(adapter as never, 100_000 as never, 60_000 as never);
  } catch {
    return null;
  }
}

const ENTRIES = Number(process.env.ENTRIES ?? 1_000_000);
const MINUTES = Number(process.env.MINUTES ?? 3);
const DB = Number(process.env.BENCH_REDIS_DB ?? 15);
const ACCOUNT = 'acct_benchkeyspacewalks0000000';

/** Redis's own time for every command since the last reset (µs). */
async function commandMicros(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats');
  let sum = 0;
  for (const match of info.matchAll(/usec=(\d+)/g)) sum += Number(match[1]);
  return sum;
}

async function main(): Promise<void> {
  const redis = new Redis(redisUrl(DB));
  try {
    await redis.flushdb();
    for (let start = 0; start < ENTRIES; start += 10_000) {
      const args: string[] = [];
      for (let i = start; i < Math.min(ENTRIES, start + 10_000); i += 1) args.push(`svc:cache:{bench${i}}:e`, '10|0|0|[]');
      await redis.mset(...args);
    }
    await withFreshBillingDatabase('svc_bench_keyspace_walks', ACCOUNT, async (db) => {
      const logger = pino({ level: 'silent' });
      const backlog = new BacklogService(redis as never);
      const drain = new LedgerDrainService(new SettlementStreamAdapter(redis as never) as never, new LedgerAppendRepository(db.pool as never) as never, logger as never, { batchSize: 2_000 } as never);
      const adapter = new ReconciliationRedisAdapter(redis as never);
      const service = new ReconciliationService(new ReconciliationRepository(db.prisma as never) as never, adapter as never, logger as never, 60_000 as never);
      const job = new ReconciliationJob(service as never, logger as never, REPORT_ONLY as never, 100 as never, reservationWalk(adapter) as never);
      // One account with records pending (its dirty mark set) and one search in flight.
      for (let i = 0; i < 5; i += 1) await redis.xadd(redisKeys.settlementStream(ACCOUNT), '*', SETTLEMENT_FIELD, '{}');
      await redis.sadd(SETTLEMENT_DIRTY_SET, ACCOUNT);
      await redis.hset(`${redisKeys.accountTag(ACCOUNT)}:rsv:req_benchkeyspacewalks`, '0', '9000');

      const perMinuteMs: number[] = [];
      for (let minute = 0; minute < MINUTES; minute += 1) {
        await redis.config('RESETSTAT');
        for (let i = 0; i < 12; i += 1) {
          const measured = await backlog.measure();
          if (measured.pendingRecords !== 5) throw new Error(`the backlog read ${measured.pendingRecords} records, expected 5`);
        }
        for (let i = 0; i < 2; i += 1) await drain.sweep();
        await job.run();
        perMinuteMs.push((await commandMicros(redis)) / 1_000);
      }
      const ms = Math.round(median(perMinuteMs) * 10) / 10;
      const result = { entries: ENTRIES, minutes: MINUTES, redis_ms_per_minute: ms, core_percent: Math.round((ms / 60_000) * 1e4) / 100, per_minute_ms: perMinuteMs };
      reportOneRow('keyspace-walks', `the ledger worker's periodic Redis work (${billingRoot}), ${ENTRIES} other keys; medians of ${MINUTES} minutes`,
        [['Redis ms per minute of the worker', result.redis_ms_per_minute], ['% of one core', result.core_percent]], { result });
    });
  } finally {
    await redis.flushdb();
    await redis.quit();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
