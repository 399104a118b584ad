/**
 * What the key-limit threshold check (key.limit.threshold, run by the ledger worker's webhook
 * tick every WEBHOOK_DISPATCH_INTERVAL_MS) costs PostgreSQL while searches settle at a steady
 * rate: billing's KeyLimitThresholds.evaluate (the code the worker runs) on a fresh billing
 * database holding a month of settlements so far, with every key under a monthly limit. Each
 * tick first writes one second of settlements through LedgerRepository.writeSettlements (the
 * drain's write, not measured), then evaluates once, measured: the CPU of the PostgreSQL
 * backend that ran it (from /proc/<pid>/stat) and the wall time.
 *
 * Env: RATE (searches a second, 2000), KEYS (keys of the one account, 10), HISTORY (settlements
 * earlier this month, 500000), LIMITS (`monthly`: every key under a monthly limit; `none`: no
 * key has a limit, so only finding the keys that settled is left), TICKS (10, after 2 warm-up
 * ticks; the filled table is vacuumed first), BILLING_ROOT (the checkout
 * whose built billing and migrations run it, default this one: another build's, e.g. a
 * worktree of the previous commit, to compare).
 * Prints Markdown and writes bench/results/key-limit-tick.json.
 */
import { newRequestId } from '@svc/ids';
import { billingModule, billingRoot, reportOneRow, withFreshBillingDatabase } from './lib-billing';
import { processTicks, TICKS_PER_SECOND } from './lib-cpu';
import { median } from './lib-results';

interface KeyLimit {
  keyId: string;
  accountId: string;
  limitMicros: number;
  limitReset: 'daily' | 'weekly' | 'monthly' | null;
}

const { LedgerAppendRepository } = billingModule<{
  LedgerAppendRepository: new (pool: unknown) => { writeSettlements(accountId: string, records: readonly unknown[]): Promise<unknown> };
}>('services/billing/dist/stores/ledger-append.repository.js');
const { KeyLimitThresholds } = billingModule<{
  KeyLimitThresholds: new (stores: object, limits: { limitsOf(keyIds: readonly string[]): Promise<KeyLimit[]>; close(): void }) => { evaluate(nowMs?: number): Promise<number> };
}>('services/billing/dist/services/outbound-webhooks/key-limit-thresholds.js');
const { Transactions } = billingModule<{ Transactions: new (prisma: unknown) => object }>('services/billing/dist/db/transactions.js');
const { ThresholdsRepository } = billingModule<{ ThresholdsRepository: new (prisma: unknown) => object }>('services/billing/dist/stores/thresholds.repository.js');
const { EventsRepository } = billingModule<{ EventsRepository: new (prisma: unknown) => object }>('services/billing/dist/stores/events.repository.js');

const RATE = Number(process.env.RATE ?? 2_000);
const KEYS = Number(process.env.KEYS ?? 10);
const HISTORY = Number(process.env.HISTORY ?? 500_000);
const TICKS = Number(process.env.TICKS ?? 10);
const LIMITS = process.env.LIMITS ?? 'monthly';
if (!['monthly', 'none'].includes(LIMITS)) throw new Error(`LIMITS must be monthly or none, not ${LIMITS}`);
const ACCOUNT = 'acct_benchkeylimittick0000000';
const keyIds = Array.from({ length: KEYS }, (_, i) => `key_benchkeylimittick${String(i).padStart(8, '0')}`);
/** Every key under a monthly limit it never reaches (each tick sums the month, and sends nothing), or none with a limit. */
const limits = { limitsOf: (ids: readonly string[]) => Promise.resolve(ids.filter((id) => LIMITS === 'monthly' && keyIds.includes(id)).map((keyId) => ({ keyId, accountId: ACCOUNT, limitMicros: Number.MAX_SAFE_INTEGER, limitReset: 'monthly' as const }))), close: () => undefined };

async function main(): Promise<void> {
  await withFreshBillingDatabase('svc_bench_key_limit_tick', ACCOUNT, async (db, backend) => {
    const nowS = Date.now() / 1000;
    const monthStartS = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1) / 1000;
    // The month so far (up to 31 s ago), spread evenly; then the last 31 s at RATE.
    const fill = (rows: number, fromS: number, toS: number, tag: string): Promise<unknown> => db.pool.query(
      `INSERT INTO settlements (request_id, account_id, key_id, charged_micros, attempt_count, settled_at, created_at)
       SELECT 'req_${tag}' || g, $1, ($2::text[])[1 + g % $3], 9000, 1, t, t
       FROM generate_series(1, $4::int) AS g, LATERAL (SELECT to_timestamp($5::float8 + ($6::float8 - $5::float8) * g::float8 / $4) AS t) AS at`,
      [ACCOUNT, `{${keyIds.join(',')}}`, KEYS, rows, fromS, toS]);
    await fill(HISTORY, monthStartS, nowS - 31, 'history');
    await fill(RATE * 31, nowS - 31, nowS, 'recent');
    // As autovacuum leaves an insert-only table: visibility known, statistics fresh.
    await db.pool.query('VACUUM ANALYZE');
    const ledger = new LedgerAppendRepository(db.pool);
    const thresholds = new KeyLimitThresholds(
      { transactions: new Transactions(db.prisma), thresholds: new ThresholdsRepository(db.prisma), events: new EventsRepository(db.prisma) }, limits);
    let key = 0;
    const oneSecond = async (): Promise<void> => {
      for (let written = 0; written < RATE; written += 350) {
        await ledger.writeSettlements(ACCOUNT, Array.from({ length: Math.min(350, RATE - written) }, () => ({
          v: 1, requestId: newRequestId(), accountId: ACCOUNT, keyId: keyIds[key++ % KEYS], settledAtMs: Date.now(), chargedMicros: 9_000,
          attempts: [{ index: 0, model: 'exa/fast', provider: 'exa', source: 'platform', status: 'success', error: null, reservedMicros: 9_000, chargedMicros: 9_000, timedOut: false, results: 10 }],
        })));
      }
    };
    // The first evaluation of a process looks further back (the previous build: 10 minutes).
    await thresholds.evaluate();
    const cpuUs: number[] = [];
    const wallMs: number[] = [];
    for (let tick = 0; tick < TICKS + 2; tick++) {
      await oneSecond();
      const before = processTicks(backend) ?? Number.NaN;
      const started = process.hrtime.bigint();
      await thresholds.evaluate();
      const wall = Number(process.hrtime.bigint() - started) / 1e6;
      const cpu = (((processTicks(backend) ?? Number.NaN) - before) / TICKS_PER_SECOND) * 1e6;
      if (tick < 2) continue;
      cpuUs.push(cpu);
      wallMs.push(wall);
    }
    const perTickUs = median(cpuUs);
    const result = {
      rate: RATE, keys: KEYS, history: HISTORY, limits: LIMITS, ticks: TICKS,
      backend_us_per_tick: Math.round(perTickUs),
      backend_us_per_search: Math.round((perTickUs / RATE) * 100) / 100,
      wall_ms_per_tick: Math.round(median(wallMs) * 10) / 10,
    };
    reportOneRow('key-limit-tick',
      `KeyLimitThresholds.evaluate (${billingRoot}), ${RATE} searches/s over ${KEYS} keys ${LIMITS === 'monthly' ? 'under monthly limits' : 'without limits'}, ${HISTORY} settlements earlier this month; medians of ${TICKS} ticks`,
      [['PostgreSQL backend µs per tick', result.backend_us_per_tick], ['per search settled', result.backend_us_per_search], ['wall ms per tick', result.wall_ms_per_tick]],
      { result, ticks_cpu_us: cpuUs.map(Math.round), ticks_wall_ms: wallMs.map((w) => Math.round(w * 10) / 10) });
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
