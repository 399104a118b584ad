/**
 * Billing's built code for the benchmarks that run it in-process (ledger-write, key-limit-tick,
 * recovery-read, keyspace-walks), loaded by path as the services load it: from BILLING_ROOT (a
 * checkout, default this one), so another build, e.g. a worktree of the previous commit, is
 * measured by the same script.
 */
import { join, relative } from 'node:path';
import { recreateDatabase, repoRoot } from '@svc/test-kit';
import { writeResult } from './lib-results';

export interface BillingDatabase {
  readonly pool: { query(sql: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }> };
  readonly prisma: unknown;
  close(): Promise<void>;
}

/** The checkout whose billing runs. */
export const billingRoot = process.env.BILLING_ROOT ?? repoRoot();

/** billingRoot as the results record it: relative to this checkout ('.' for itself), never a machine path. */
export function billingRootSetting(): string {
  return relative(repoRoot(), billingRoot) || '.';
}

/** A built module of billingRoot (billing's `services/billing/dist/...`, or the migrator it uses). */
export function billingModule<T>(path: string): T {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- built code of a checkout, by path
  return require(join(billingRoot, path)) as T;
}

const { createBillingDatabase } = billingModule<{ createBillingDatabase(url: string, onIdleError: (error: Error) => void, max?: number): BillingDatabase }>(
  'services/billing/dist/db/prisma.repository.js');
const { applyMigrations } = billingModule<{ applyMigrations(url: string, dir: string): Promise<unknown> }>('packages/pg-migrate/dist/index.js');

/**
 * The database `name` created again and migrated by billingRoot's migrations, opened on ONE
 * connection (so one backend runs every statement: `backend` is its pid), with `accountId`'s
 * balance row funded.
 */
async function freshBillingDatabase(name: string, accountId: string): Promise<{ db: BillingDatabase; backend: number }> {
  const url = await recreateDatabase(name);
  await applyMigrations(url, join(billingRoot, 'services/billing/prisma/migrations'));
  const db = createBillingDatabase(url, () => undefined, 1);
  try {
    const backend = Number((await db.pool.query('SELECT pg_backend_pid() AS pid')).rows[0]?.pid);
    await db.pool.query('INSERT INTO account_balances (account_id, balance_micros) VALUES ($1, 1000000000000)', [accountId]);
    return { db, backend };
  } catch (error) {
    await db.close();
    throw error;
  }
}

/** Runs `bench` on freshBillingDatabase(name, accountId) and closes the database after it, whatever happens. */
export async function withFreshBillingDatabase<T>(name: string, accountId: string, bench: (db: BillingDatabase, backend: number) => Promise<T>): Promise<T> {
  const { db, backend } = await freshBillingDatabase(name, accountId);
  try {
    return await bench(db, backend);
  } finally {
    await db.close();
  }
}

/**
 * Prints `title` and a one-row Markdown table of `columns`, and writes
 * bench/results/<name>.json: the command, the billing root, and `result`'s fields.
 */
export function reportOneRow(name: string, title: string, columns: readonly (readonly [string, number])[], result: Record<string, unknown>): void {
  console.log(title);
  console.log(`| ${columns.map(([label]) => label).join(' | ')} |`);
  console.log(`|${columns.map(() => '---|').join('')}`);
  console.log(`| ${columns.map(([, value]) => value).join(' | ')} |`);
  const file = writeResult(name, { command: `npm run bench -- ${name}`, settings: { billing_root: billingRootSetting() }, ...result });
  console.log(`\nwrote ${file}`);
}
