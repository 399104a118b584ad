/**
 * What recovery (hydration, after Redis lost an account's data) reads to rebuild the account's
 * key usage counters: billing's HydrationRepository.underAccountLock with usageSince (the code
 * the ledger worker runs) for one account holding SETTLEMENTS settlements over KEYS keys and
 * the last DAYS days, on a fresh billing database and one backend. The account's drain waits
 * for that lock, so this is how long its searches' settlements stop reaching the ledger.
 * Reported: the wall time and the PostgreSQL backend's CPU per rebuild (medians of REPEAT).
 *
 * Env: SETTLEMENTS (1000000), KEYS (20), DAYS (90), REPEAT (5), BILLING_ROOT (the checkout
 * whose built billing and migrations run it, default this one: another build's, e.g. a
 * worktree of the previous commit, to compare).
 * Prints Markdown and writes bench/results/recovery-read.json.
 */
import { LIMIT_RESETS, periodOf } from '@svc/contracts';
import { billingModule, billingRoot, reportOneRow, withFreshBillingDatabase } from './lib-billing';
import { processTicks, TICKS_PER_SECOND } from './lib-cpu';
import { median } from './lib-results';

interface UsageView {
  usageSince(periodStartsMs: readonly number[]): Promise<{ keyId: string; allTimeMicros: number }[]>;
}

const { HydrationRepository } = billingModule<{
  HydrationRepository: new (prisma: unknown) => { underAccountLock<T>(accountId: string, inside: (view: UsageView) => Promise<T>): Promise<T | null> };
}>('services/billing/dist/stores/hydration.repository.js');

const SETTLEMENTS = Number(process.env.SETTLEMENTS ?? 1_000_000);
const KEYS = Number(process.env.KEYS ?? 20);
const DAYS = Number(process.env.DAYS ?? 90);
const REPEAT = Number(process.env.REPEAT ?? 5);
const ACCOUNT = 'acct_benchrecoveryread00000000';

async function main(): Promise<void> {
  await withFreshBillingDatabase('svc_bench_recovery_read', ACCOUNT, async (db, backend) => {
    const nowS = Date.now() / 1000;
    await db.pool.query(
      `INSERT INTO settlements (request_id, account_id, key_id, charged_micros, attempt_count, settled_at, created_at)
       SELECT 'req_recovery' || g, $1, 'key_benchrecoveryread' || (g % $2), 9000, 1, t, t
       FROM generate_series(1, $3::int) AS g, LATERAL (SELECT to_timestamp($4::float8 - $5::float8 * 86400 * (1 - g::float8 / $3)) AS t) AS at`,
      [ACCOUNT, KEYS, SETTLEMENTS, nowS, DAYS]);
    await db.pool.query('VACUUM ANALYZE');
    const repository = new HydrationRepository(db.prisma);
    const nowMs = Date.now();
    const starts = [...new Set(LIMIT_RESETS.map((reset) => periodOf(reset, nowMs).startMs))];
    const wallMs: number[] = [];
    const cpuMs: number[] = [];
    let keys = 0;
    let totalMicros = 0;
    for (let i = 0; i < REPEAT + 1; i++) {
      const before = processTicks(backend) ?? Number.NaN;
      const started = process.hrtime.bigint();
      const usage = await repository.underAccountLock(ACCOUNT, (view) => view.usageSince(starts));
      const wall = Number(process.hrtime.bigint() - started) / 1e6;
      const cpu = (((processTicks(backend) ?? Number.NaN) - before) / TICKS_PER_SECOND) * 1e3;
      keys = usage?.length ?? 0;
      totalMicros = (usage ?? []).reduce((sum, u) => sum + u.allTimeMicros, 0);
      if (i === 0) continue;
      wallMs.push(wall);
      cpuMs.push(cpu);
    }
    // The rebuild must see every settlement, whichever way it reads them.
    if (totalMicros !== SETTLEMENTS * 9000 || keys !== Math.min(KEYS, SETTLEMENTS)) throw new Error(`read ${keys} keys and ${totalMicros} µUSD, expected ${KEYS} and ${SETTLEMENTS * 9000}`);
    const result = { settlements: SETTLEMENTS, keys: KEYS, days: DAYS, repeat: REPEAT, wall_ms: Math.round(median(wallMs) * 10) / 10, backend_cpu_ms: Math.round(median(cpuMs) * 10) / 10 };
    reportOneRow('recovery-read', `HydrationRepository usage read (${billingRoot}), one account: ${SETTLEMENTS} settlements, ${KEYS} keys, ${DAYS} days; medians of ${REPEAT}`,
      [['wall ms per rebuild', result.wall_ms], ['PostgreSQL backend CPU ms', result.backend_cpu_ms]], { result });
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
