import { Client } from 'pg';
import { bearer, call, newAccount, newApiKey, waitFor, grantCredits, UNTHROTTLED_GATEWAY_ENV, useStack, SETTLING_STACK } from '@svc/test-kit';

/**
 * PostgreSQL unavailable to billing and the ledger worker for 30 s under search load,
 * without stopping the shared server: the billing database refuses new connections and
 * its sessions are terminated. Searches need only Redis, so they keep answering; the
 * settlement records wait in Redis (the backlog, reported); once connections are allowed
 * again every record reaches the ledger exactly once and reconciliation reads zero drift.
 * exa/fast with max_results 10 costs exactly 9,000 micro-USD.
 */
const PRICE_MICROS = 9_000;
// Enough for every search a fast machine answers in the run (about 220,000 at 0.009), so no search meets a 402.
const GRANT_MICROS = 2_000_000_000;
const OUTAGE_MS = 30_000;
const CONCURRENCY = 4;

interface BacklogBody {
  pending_records: number;
  pending_accounts: number;
  oldest_pending_age_ms: number;
  drain_rate_per_s: number;
  estimated_drain_ms: number | null;
}

describe('PostgreSQL outage under load: settlement waits in Redis, then every ledger entry arrives once', () => {
  let admin: Client;
  let billingDb: string;
  // Declared before the stack: runs before it stops.
  afterAll(async () => {
    // Whatever happened, the database takes connections again.
    await admin?.query(`ALTER DATABASE "${billingDb}" WITH ALLOW_CONNECTIONS true`).catch(() => undefined);
    await admin?.end();
  });
  const suite = useStack({
    ...SETTLING_STACK, name: 'pgoutage', redisDb: 15, gateways: [{}, {}], gatewayEnv: UNTHROTTLED_GATEWAY_ENV,
    workerEnv: { LEDGER_DRAIN_INTERVAL_MS: '100', BACKLOG_LOG_INTERVAL_MS: '1000' },
  });

  beforeAll(async () => {
    billingDb = new URL(suite.stack.databases.billing).pathname.slice(1);
    const adminUrl = new URL(suite.stack.databases.billing);
    adminUrl.pathname = '/postgres';
    admin = new Client({ connectionString: adminUrl.toString() });
    await admin.connect();
  });

  const operator = async <T>(method: 'GET' | 'POST', path: string): Promise<T> => {
    const response = await call(method, `${suite.stack.billing.operatorUrl}${path}`, { headers: bearer(suite.stack.operatorToken) });
    if (response.status !== 200) throw new Error(`${path} answered ${response.status} ${JSON.stringify(response.body)}`);
    return response.body as T;
  };

  it('keeps answering searches, reports the backlog, then writes every charge once and reconciles to zero drift', async () => {
    const account = await newAccount(suite.gw, 'pgoutage');
    const key = await newApiKey(suite.gw, account.managementKey);
    await grantCredits(suite.stack, account.accountId, GRANT_MICROS, { redis: suite.redis });

    // Load: CONCURRENCY loops over both gateways until told to stop.
    let running = true;
    const statuses = new Map<number, number>();
    const answeredDuringOutage = { count: 0 };
    let outage = false;
    const loops = Array.from({ length: CONCURRENCY }, async (_, loop) => {
      for (let i = 0; running; i += 1) {
        const gateway = suite.stack.gateways[(loop + i) % suite.stack.gateways.length]?.url ?? '';
        const response = await call('POST', `${gateway}/v1/search`, {
          body: { query: `outage ${loop} ${i}`, model: 'exa/fast', max_results: 10 }, headers: bearer(key.secret),
        });
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        if (outage && response.status === 200) answeredDuringOutage.count += 1;
      }
    });

    await waitFor('searches to be answered before the outage', () => ((statuses.get(200) ?? 0) >= 50 ? true : undefined), { timeoutMs: 30_000 });

    // The outage: no new connections to the billing database, existing ones terminated.
    await admin.query(`ALTER DATABASE "${billingDb}" WITH ALLOW_CONNECTIONS false`);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [billingDb]);
    outage = true;
    const outageStarted = Date.now();
    const samples: BacklogBody[] = [];
    await waitFor('the outage to last its 30 s', async () => {
      samples.push(await operator<BacklogBody>('GET', '/operator/ledger/backlog'));
      return Date.now() - outageStarted >= OUTAGE_MS ? true : undefined;
    }, { timeoutMs: OUTAGE_MS + 30_000, intervalMs: 1_000 });
    const workerReady = await call('GET', `${suite.stack.worker?.url ?? ''}/readyz`);
    const atPeak = await operator<BacklogBody>('GET', '/operator/ledger/backlog');
    outage = false;

    // Back: connections allowed again; the load stops so the drain can be measured.
    await admin.query(`ALTER DATABASE "${billingDb}" WITH ALLOW_CONNECTIONS true`);
    const restoredAt = Date.now();
    running = false;
    await Promise.all(loops);
    await waitFor('the backlog to drain', async () => ((await operator<BacklogBody>('GET', '/operator/ledger/backlog')).pending_records === 0 ? true : undefined), {
      timeoutMs: 120_000, intervalMs: 100,
    });
    const drainMs = Date.now() - restoredAt;

    const answered = statuses.get(200) ?? 0;
    process.stdout.write(`postgres outage: ${answered} searches answered (${answeredDuringOutage.count} during the ${OUTAGE_MS} ms outage), `
      + `backlog at peak ${atPeak.pending_records} records (oldest ${atPeak.oldest_pending_age_ms} ms), drained in ${drainMs} ms after PostgreSQL returned; `
      + `statuses ${JSON.stringify([...statuses])}\n`);

    // Searches kept answering with the database gone; the backlog grew and was reported.
    expect([...statuses.keys()]).toEqual([200]);
    expect(answeredDuringOutage.count).toBeGreaterThan(0);
    expect(workerReady.status).toBe(503);
    expect(workerReady.body).toMatchObject({ checks: { postgres: false, redis: true }, backlog: { pending_records: expect.any(Number) } });
    expect(atPeak.pending_records).toBeGreaterThan(0);
    expect(atPeak.pending_accounts).toBe(1);
    expect(atPeak.oldest_pending_age_ms).toBeGreaterThan(0);
    const growing = samples.map((s) => s.pending_records);
    expect(Math.max(...growing)).toBeGreaterThan(growing[0] ?? 0);

    // Every ledger entry arrived, none twice, and the money adds up.
    const db = new Client({ connectionString: suite.stack.databases.billing });
    await db.connect();
    try {
      const totals = await db.query<{ charges: string; distinct: string; sum: string | null }>(
        `SELECT count(*) AS charges, count(DISTINCT request_id) AS distinct, sum(-amount_micros) AS sum
           FROM ledger_entries WHERE account_id = $1 AND kind = 'search_charge'`, [account.accountId]);
      const settlements = await db.query<{ n: string }>('SELECT count(*) AS n FROM settlements WHERE account_id = $1', [account.accountId]);
      const balance = await db.query<{ balance_micros: string }>('SELECT balance_micros FROM account_balances WHERE account_id = $1', [account.accountId]);
      expect(Number(totals.rows[0]?.charges)).toBe(answered);
      expect(Number(totals.rows[0]?.distinct)).toBe(answered);
      expect(Number(settlements.rows[0]?.n)).toBe(answered);
      expect(Number(totals.rows[0]?.sum)).toBe(answered * PRICE_MICROS);
      expect(Number(balance.rows[0]?.balance_micros)).toBe(GRANT_MICROS - answered * PRICE_MICROS);
    } finally {
      await db.end();
    }

    const report = await operator<{ data: { drift_usd: number; pending_usd: number; reserved_usd: number; durable_usd: number }[] }>(
      'GET', `/operator/reconciliation?account_id=${account.accountId}`);
    expect(report.data).toEqual([expect.objectContaining({ drift_usd: 0, pending_usd: 0, reserved_usd: 0, durable_usd: (GRANT_MICROS - answered * PRICE_MICROS) / 1_000_000 })]);
  }, 300_000);
});
