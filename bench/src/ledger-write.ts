/**
 * The ledger drain's write alone: billing's LedgerRepository.writeSettlements (the same
 * code the worker runs) on a fresh billing database, for batches of one-attempt exa/fast
 * records, with PostgreSQL otherwise idle. Reported per batch size: CPU per search of the
 * PostgreSQL backend that ran the batches (from /proc/<pid>/stat) and of every postgres
 * process (WAL writer, checkpointer, ...), and the wall time per search.
 *
 * Env: BATCHES (50,350,1000: batch sizes, comma-separated; the database is recreated for
 * every batch size), SEARCHES (21000 per batch size, after 5 warm-up batches; the records'
 * request ids are made as the gateway makes them), BILLING_ROOT (the checkout whose built
 * billing and migrations write the batches, default this one: another build's, e.g. a
 * worktree of the previous commit, to compare).
 * Prints Markdown and writes bench/results/ledger-write.json.
 */
import { newRequestId } from '@svc/ids';
import { billingModule, billingRoot, billingRootSetting, withFreshBillingDatabase } from './lib-billing';
import { pidsNamed, processTicks, TICKS_PER_SECOND } from './lib-cpu';
import { writeResult } from './lib-results';

interface LedgerWriter {
  writeSettlements(accountId: string, records: readonly unknown[]): Promise<unknown>;
}

const { LedgerAppendRepository } = billingModule<{ LedgerAppendRepository: new (pool: unknown) => LedgerWriter }>('services/billing/dist/stores/ledger-append.repository.js');

const BATCHES = (process.env.BATCHES ?? '50,350,1000').split(',').map(Number);
const SEARCHES = Number(process.env.SEARCHES ?? 21_000);
const ACCOUNT = 'acc_benchledgerwrite000000';

interface Row {
  batch: number;
  backend_us_per_search: number;
  all_postgres_us_per_search: number;
  wall_us_per_search: number;
}

function allPostgresTicks(): number {
  return pidsNamed('postgres').reduce((sum, pid) => sum + (processTicks(pid) ?? 0), 0);
}

async function measure(batch: number): Promise<Row> {
  return withFreshBillingDatabase('svc_bench_ledger_write', ACCOUNT, async (db, backend) => {
    const repository = new LedgerAppendRepository(db.pool);
    const records = (): unknown[] => Array.from({ length: batch }, () => {
      return {
        v: 1, requestId: newRequestId(), accountId: ACCOUNT, keyId: 'key_benchledgerwrite00000', settledAtMs: Date.now(), chargedMicros: 9_000,
        attempts: [{ index: 0, model: 'exa/fast', provider: 'exa', source: 'platform', status: 'success', error: null, reservedMicros: 9_000, chargedMicros: 9_000, timedOut: false, results: 10 }],
      };
    });
    for (let i = 0; i < 5; i++) await repository.writeSettlements(ACCOUNT, records());
    const rounds = Math.max(1, Math.round(SEARCHES / batch));
    const backendBefore = processTicks(backend) ?? Number.NaN;
    const allBefore = allPostgresTicks();
    const started = process.hrtime.bigint();
    for (let i = 0; i < rounds; i++) await repository.writeSettlements(ACCOUNT, records());
    const wallNs = Number(process.hrtime.bigint() - started);
    const searches = rounds * batch;
    const us = (ticks: number): number => Math.round(((ticks / TICKS_PER_SECOND) * 1e7) / searches) / 10;
    return {
      batch,
      backend_us_per_search: us((processTicks(backend) ?? Number.NaN) - backendBefore),
      all_postgres_us_per_search: us(allPostgresTicks() - allBefore),
      wall_us_per_search: Math.round(wallNs / 100 / searches) / 10,
    };
  });
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  for (const batch of BATCHES) rows.push(await measure(batch));
  console.log(`writeSettlements (${billingRoot}), one-attempt records, ${SEARCHES} searches per batch size`);
  console.log('| batch | PostgreSQL backend µs/search | all postgres µs/search | wall µs/search |');
  console.log('|---|---|---|---|');
  for (const row of rows) console.log(`| ${row.batch} | ${row.backend_us_per_search} | ${row.all_postgres_us_per_search} | ${row.wall_us_per_search} |`);
  const file = writeResult('ledger-write', { command: 'npm run bench -- ledger-write', settings: { searches: SEARCHES, billing_root: billingRootSetting() }, rows });
  console.log(`\nwrote ${file}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
