import { join } from 'node:path';
import { newId } from '@svc/ids';
import { freePort, repoRoot, startProcess, waitFor } from '@svc/test-kit';
import type { RunningProcess } from '@svc/test-kit';
import type { Redis } from 'ioredis';
import { Client } from 'pg';
import { enqueue, freshLedgerDatabase, LEDGER_REDIS_URL, ledgerTotals, newRedis, settlementRecord, streamLength } from './ledger-fixtures';
import { redisKeys } from '@svc/contracts';
import type { SettlementRecord } from '@svc/contracts';

const WORKER = join(repoRoot(), 'services/billing/dist/worker.js');
let redis: Redis;
let db: Client;
let databaseUrl: string;
const running: RunningProcess[] = [];

async function startWorker(env: Record<string, string> = {}): Promise<{ process: RunningProcess; url: string }> {
  const port = await freePort();
  const process = await startProcess({
    name: 'ledger-worker',
    script: WORKER,
    env: {
      PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: databaseUrl, REDIS_URL: LEDGER_REDIS_URL,
      LOG_LEVEL: 'warn', LEDGER_DRAIN_INTERVAL_MS: '100', LEDGER_SWEEP_INTERVAL_MS: '1000', ...env,
    },
    readyUrl: `http://127.0.0.1:${port}/readyz`,
  });
  running.push(process);
  return { process, url: `http://127.0.0.1:${port}` };
}

async function connectDb(): Promise<Client> {
  const client = new Client({ connectionString: databaseUrl });
  // A test below has Postgres end this connection; the error is expected there.
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

async function settledCount(): Promise<number> {
  const result = await db.query<{ n: string }>('SELECT count(*)::text AS n FROM settlements');
  return Number(result.rows[0]?.n ?? 0);
}

beforeAll(async () => {
  databaseUrl = await freshLedgerDatabase('worker');
  redis = newRedis();
  await redis.flushdb();
  db = await connectDb();
}, 60_000);

afterEach(async () => {
  for (const p of running.splice(0)) await p.stop('SIGKILL');
});

afterAll(async () => {
  await db.end();
  await redis.quit();
});

describe('the ledger worker process (dist/worker.js)', () => {
  it('serves /healthz and /readyz, drains what the gateway queued, and stops cleanly on SIGTERM', async () => {
    const worker = await startWorker();
    const health = await fetch(`${worker.url}/healthz`);
    expect(health.status).toBe(200);
    const ready = (await (await fetch(`${worker.url}/readyz`)).json()) as { checks: Record<string, boolean> };
    expect(ready.checks).toEqual({ postgres: true, redis: true });

    const accountId = newId('account');
    await enqueue(redis, [settlementRecord(accountId, 1_234), settlementRecord(accountId, 0)]);
    await waitFor('the worker to write both settlements', async () => ((await ledgerTotals(db, accountId)).settlements === 2 ? true : undefined));
    expect(await ledgerTotals(db, accountId)).toMatchObject({ usageEvents: 4, charges: 1, chargedSum: 1_234, totalSpent: 1_234 });

    const exited = new Promise<number | null>((resolve) => worker.process.child.once('exit', (code) => resolve(code)));
    await worker.process.stop('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('loses and doubles nothing when killed with SIGKILL mid-stream and restarted', async () => {
    const accounts = Array.from({ length: 4 }, () => newId('account'));
    const records: SettlementRecord[] = [];
    for (let i = 0; i < 2_000; i += 1) records.push(settlementRecord(accounts[i % 4] ?? '', 1_000 + (i % 97)));
    const queuedSum = records.reduce((sum, r) => sum + r.chargedMicros, 0);
    const before = await settledCount();
    await enqueue(redis, records);

    // Small batches so the kill lands between transactions and inside one.
    const first = await startWorker({ LEDGER_BATCH_SIZE: '20' });
    await waitFor('the worker to be part-way through', async () => ((await settledCount()) - before >= 200 ? true : undefined), { intervalMs: 5 });
    await first.process.stop('SIGKILL');
    const partial = (await settledCount()) - before;
    expect(partial).toBeLessThan(2_000);

    // The same record delivered again on top, as a gateway retry of its pipeline would.
    await enqueue(redis, records.slice(0, 50));
    await startWorker({ LEDGER_BATCH_SIZE: '20' });
    await waitFor('every queued record to be written', async () => ((await settledCount()) - before === 2_000 ? true : undefined), { timeoutMs: 90_000 });
    await waitFor('every stream to be empty', async () => {
      const lengths = await Promise.all(accounts.map((a) => streamLength(redis, a)));
      return lengths.every((n) => n === 0) ? true : undefined;
    });

    let charges = 0;
    let chargedSum = 0;
    for (const accountId of accounts) {
      const totals = await ledgerTotals(db, accountId);
      expect(totals.balance).toBe(-totals.chargedSum);
      expect(totals.totalSpent).toBe(totals.chargedSum);
      expect(totals.usageEvents).toBe(2 * totals.settlements);
      charges += totals.charges;
      chargedSum += totals.chargedSum;
    }
    expect(charges).toBe(2_000);
    expect(chargedSum).toBe(queuedSum);
  }, 150_000);

  it('applies a grant that was committed but never applied to the spendable balance, once, at start and on its sweep', async () => {
    const accountId = newId('account');
    const entryId = newId('ledgerEntry');
    // What a billing process killed between the grant's commit and its Redis apply leaves.
    await db.query('INSERT INTO account_balances (account_id, balance_micros, total_granted_micros) VALUES ($1, 3000000, 3000000)', [accountId]);
    await db.query(`INSERT INTO ledger_entries (id, account_id, kind, amount_micros, balance_after_micros, reason) VALUES ($1, $2, 'grant', 3000000, 3000000, 'crash')`, [entryId, accountId]);
    await startWorker();
    await waitFor('the outbox to mark the entry applied', async () => {
      const row = await db.query<{ applied: Date | null }>('SELECT applied_to_spendable_at AS applied FROM ledger_entries WHERE id = $1', [entryId]);
      const applied = row.rows[0]?.applied;
      return applied !== null && applied !== undefined ? true : undefined;
    });
    expect(await redis.get(redisKeys.accountBalance(accountId))).toBe('3000000');
    // A second worker (or a restart) finds nothing left to apply.
    await startWorker();
    expect(await redis.get(redisKeys.accountBalance(accountId))).toBe('3000000');
  });

  it('keeps every record in the stream while Postgres refuses connections, and writes them once when it is back', async () => {
    const name = 'svc_billing_test_ledger_worker';
    const admin = new Client({ connectionString: databaseUrl.replace(/\/[^/]+$/, '/postgres') });
    await admin.connect();
    try {
      const worker = await startWorker();
      const accountId = newId('account');
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
      await enqueue(redis, Array.from({ length: 30 }, (_, i) => settlementRecord(accountId, 100 + i)));
      // The drain job fails and is retried; the stream keeps every entry meanwhile.
      await waitFor('a drain job to fail', () => (worker.process.logs().includes('ledger job failed') ? true : undefined));
      expect((await fetch(`${worker.url}/readyz`)).status).toBe(503);
      expect(await streamLength(redis, accountId)).toBe(30);
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      await db.end().catch(() => undefined);
      db = await connectDb();
      await waitFor('the backlog to be written', async () => ((await ledgerTotals(db, accountId)).settlements === 30 ? true : undefined), { timeoutMs: 60_000 });
      expect(await ledgerTotals(db, accountId)).toMatchObject({ charges: 30, chargedSum: 30 * 100 + 435, totalSpent: 30 * 100 + 435 });
      await waitFor('the stream to be empty', async () => ((await streamLength(redis, accountId)) === 0 ? true : undefined));
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      await admin.end();
    }
  }, 90_000);
});
