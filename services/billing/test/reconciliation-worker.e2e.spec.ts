import { join } from 'node:path';
import { RESERVATION_TTL_GRACE_MS, redisKeys } from '@svc/contracts';
import { newId, newRequestId } from '@svc/ids';
import { freePort, redisUrl, repoRoot, startProcess, waitFor } from '@svc/test-kit';
import type { RunningProcess } from '@svc/test-kit';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { enqueue, settlementRecord, migratedBillingDatabase } from './ledger-fixtures';

const REDIS_DB = 13;
const WORKER = join(repoRoot(), 'services/billing/dist/worker.js');

/**
 * The ledger worker (dist/worker.js, its own process) runs reconciliation on a schedule:
 * stale reservations are released, drift is reported (not corrected: RECONCILE_REPAIR is
 * off by default), and /readyz shows the backlog and the reconciliation counters.
 */
describe('ledger worker: periodic reconciliation and the backlog on /readyz', () => {
  let redis: Redis;
  let db: Client;
  let worker: RunningProcess;
  let url: string;

  beforeAll(async () => {
    const databaseUrl = await migratedBillingDatabase('svc_billing_test_recon_worker');
    redis = new Redis(redisUrl(REDIS_DB));
    await redis.flushdb();
    db = new Client({ connectionString: databaseUrl });
    await db.connect();
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    worker = await startProcess({
      name: 'ledger-worker',
      script: WORKER,
      env: {
        PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: databaseUrl, REDIS_URL: redisUrl(REDIS_DB), LOG_LEVEL: 'info',
        LEDGER_DRAIN_INTERVAL_MS: '100', RECONCILE_INTERVAL_MS: '1000', BACKLOG_LOG_INTERVAL_MS: '200',
      },
      readyUrl: `${url}/readyz`,
    });
  }, 60_000);

  afterAll(async () => {
    await worker?.stop();
    await db?.end();
    await redis?.quit();
  });

  it('releases a stale reservation and reports (without correcting) a drift', async () => {
    const accountId = newId('account');
    await db.query('INSERT INTO account_balances (account_id, balance_micros) VALUES ($1, 1000000)', [accountId]);
    const rsv = `${redisKeys.accountTag(accountId)}:rsv:${newRequestId()}`;
    // bal + reserved = 1,000,000 + 777 (a drift of -777), 30,000 held by a search long past its bound.
    await redis.multi()
      .set(redisKeys.accountBalance(accountId), String(970_777))
      .set(redisKeys.accountReserved(accountId), '30000')
      .hset(rsv, '0', '30000')
      .pexpire(rsv, RESERVATION_TTL_GRACE_MS - 120_000)
      .exec();

    await waitFor('the stale reservation to be released', async () => ((await redis.exists(rsv)) === 0 ? true : undefined));
    expect(await redis.get(redisKeys.accountBalance(accountId))).toBe('1000777');
    expect(await redis.get(redisKeys.accountReserved(accountId))).toBe('0');
    const ready = await waitFor('a reconciliation run with drift counted', async () => {
      const body = (await (await fetch(`${url}/readyz`)).json()) as { reconciliation?: { last_drift_accounts: number; stale_released_total: number } };
      return body.reconciliation !== undefined && body.reconciliation.last_drift_accounts === 1 ? body : undefined;
    });
    expect(ready.reconciliation).toMatchObject({ stale_released_total: 1, drift_corrected_total: 0 });
    expect(worker.logs()).toMatch(/reconciliation found drift/);
    // Still not corrected: repair of drift is off by default.
    expect(await redis.get(redisKeys.accountBalance(accountId))).toBe('1000777');
  });

  it('shows the backlog and the recent drain rate on /readyz', async () => {
    const accountId = newId('account');
    await enqueue(redis, Array.from({ length: 50 }, () => settlementRecord(accountId, 10)));
    await waitFor('the backlog to drain', async () => ((await redis.xlen(redisKeys.settlementStream(accountId))) === 0 ? true : undefined));
    const body = (await (await fetch(`${url}/readyz`)).json()) as { backlog?: { pending_records: number; drain_rate_per_s: number } };
    expect(body.backlog).toMatchObject({ pending_records: 0 });
    await waitFor('the drain to be counted in the rate', async () => {
      const again = (await (await fetch(`${url}/readyz`)).json()) as { backlog?: { drain_rate_per_s: number } };
      return (again.backlog?.drain_rate_per_s ?? 0) > 0 ? true : undefined;
    });
  });
});
