import { redisKeys } from '@svc/contracts';
import { keySlot } from '@svc/redis-client';
import { bearer, call, newAccount, newApiKey, seededRandom, waitFor, grantCredits, UNTHROTTLED_GATEWAY_ENV, useStack, SETTLING_STACK } from '@svc/test-kit';
import type { JsonResponse } from '@svc/test-kit';

/**
 * A Redis Cluster resharded under load: while concurrent searches run through two gateways,
 * the slot of one account's keys, then the slot of the provider's leases (shared by every
 * search), move to another master, a few keys at a time (the gateways meet ASK and TRYAGAIN
 * while a slot is half moved, then MOVED, and refresh their slot maps). No charge may be
 * lost or doubled: every search answered 200 is in the ledger once, nothing else is, and the
 * ledger, PostgreSQL's balances and Redis's spendable balances agree. A search refused while
 * its keys were between two nodes may answer 503 `overloaded` (admission fails closed);
 * it is charged nothing.
 */
const PRICE_MICROS = 9_000; // exa/fast, max_results 10
const FUNDING_MICROS = 10_000_000;
const SEARCHES = 400;
const CONCURRENCY = 10;
const SEED = 0xc1_05_7e_12;

describe('searches on a Redis Cluster while slots migrate between masters', () => {
  const suite = useStack({
    ...SETTLING_STACK, name: 'clusterfailover', redisDb: 0, cluster: true, gateways: [{}, {}], gatewayEnv: UNTHROTTLED_GATEWAY_ENV,
    workerEnv: { LEDGER_DRAIN_INTERVAL_MS: '200' },
  }, { db: true });

  it('loses no charge and doubles none, and the ledger, PostgreSQL and Redis agree afterwards', async () => {
    const cluster = suite.stack.redisCluster;
    if (cluster === undefined) throw new Error('a cluster stack expected');
    const gateways = suite.stack.gateways.map((g) => g.url);
    const accounts: { accountId: string; secret: string }[] = [];
    for (let i = 0; i < 2; i += 1) {
      const account = await newAccount(gateways[0] ?? '', 'failover');
      const key = await newApiKey(gateways[0] ?? '', account.managementKey);
      await grantCredits(suite.stack, account.accountId, FUNDING_MICROS, { redis: suite.redis });
      accounts.push({ accountId: account.accountId, secret: key.secret });
    }
    const [moved] = accounts;
    if (moved === undefined) throw new Error('no account');

    const random = seededRandom(SEED);
    const answers: { accountId: string; response: JsonResponse }[] = [];
    let next = 0;
    const one = async (): Promise<void> => {
      while (next < SEARCHES) {
        const i = next++;
        const account = accounts[Math.floor(random() * accounts.length)] ?? moved;
        const gateway = gateways[Math.floor(random() * gateways.length)] ?? '';
        const response = await call('POST', `${gateway}/v1/search`, { body: { query: `reshard ${i}`, model: 'exa/fast', max_results: 10 }, headers: bearer(account.secret) });
        answers.push({ accountId: account.accountId, response });
      }
    };
    const accountSlot = keySlot(redisKeys.accountBalance(moved.accountId));
    const leaseSlot = keySlot(redisKeys.providerLeases('exa'));
    const resharding = (async () => {
      await waitFor('searches under way', () => (answers.length >= 40 ? true : undefined));
      const accountFrom = await cluster.masterOf(accountSlot);
      const accountTo = cluster.nodes.find((node) => node !== accountFrom);
      if (accountTo === undefined) throw new Error('no other master');
      await cluster.migrateSlot(accountSlot, accountTo, { batch: 2, pauseMs: 30 });
      await waitFor('more searches', () => (answers.length >= 160 ? true : undefined));
      const leaseFrom = await cluster.masterOf(leaseSlot);
      const leaseTo = cluster.nodes.find((node) => node !== leaseFrom);
      if (leaseTo === undefined) throw new Error('no other master');
      await cluster.migrateSlot(leaseSlot, leaseTo, { batch: 1, pauseMs: 30 });
      return { accountFrom: accountFrom.port, accountTo: accountTo.port, leaseFrom: leaseFrom.port, leaseTo: leaseTo.port };
    })();
    await Promise.all([...Array.from({ length: CONCURRENCY }, one), resharding]);
    const moves = await resharding;
    expect(moves.accountTo).not.toBe(moves.accountFrom);
    expect((await cluster.masterOf(accountSlot)).port).toBe(moves.accountTo);
    expect((await cluster.masterOf(leaseSlot)).port).toBe(moves.leaseTo);

    // Only 200, or 503 overloaded (fail closed) for a search whose keys were between nodes.
    const statuses = new Set(answers.map(({ response }) => `${response.status} ${response.status === 200 ? '' : String(response.body?.error?.code)}`.trim()));
    for (const status of statuses) expect(['200', '503 overloaded']).toContain(status);
    const ok = answers.filter(({ response }) => response.status === 200);
    // Most searches go through: the moves are short.
    expect(ok.length).toBeGreaterThan(SEARCHES * 0.8);

    for (const account of accounts) {
      const answered = ok.filter((a) => a.accountId === account.accountId).map((a) => String(a.response.body.request_id));
      const ledger = await waitFor('every answered search in the ledger', async () => {
        const rows = await suite.db.query<{ idempotency_key: string; amount_micros: string }>(
          "SELECT idempotency_key, amount_micros FROM ledger_entries WHERE account_id = $1 AND kind = 'search_charge'", [account.accountId]);
        return rows.rows.length >= answered.length ? rows.rows : undefined;
      }, { timeoutMs: 60_000 });
      // Exactly the answered searches, each once, each at its price.
      expect(ledger.map((r) => r.idempotency_key).sort()).toEqual([...answered].sort());
      for (const row of ledger) expect(Number(row.amount_micros)).toBe(-PRICE_MICROS);
      const expected = FUNDING_MICROS - answered.length * PRICE_MICROS;
      const balance = await suite.db.query<{ balance_micros: string }>('SELECT balance_micros FROM account_balances WHERE account_id = $1', [account.accountId]);
      expect(Number(balance.rows[0]?.balance_micros)).toBe(expected);
      // Redis: nothing reserved any more, and the spendable balance is what the ledger says.
      await waitFor('every reservation released in Redis', async () => {
        const [reserved, inFlight] = await Promise.all([suite.redis.get(redisKeys.accountReserved(account.accountId)), suite.redis.zcard(redisKeys.accountInFlight(account.accountId))]);
        return Number(reserved ?? '0') === 0 && inFlight === 0 ? true : undefined;
      }, { timeoutMs: 30_000 });
      expect(Number(await suite.redis.get(redisKeys.accountBalance(account.accountId)))).toBe(expected);
    }
    // And the operator's reconciliation (which scans every master) finds no drift on either account.
    const report = await waitFor('reconciliation to read zero drift for both accounts', async () => {
      const response = await call('GET', `${suite.stack.billing.operatorUrl}/operator/reconciliation?limit=100`, { headers: bearer(suite.stack.operatorToken) });
      if (response.status !== 200) return undefined;
      const rows = response.body.data as { account_id: string; drift_usd: number; spendable_usd: number | null; pending_records: number }[];
      const ours = rows.filter((r) => accounts.some((a) => a.accountId === r.account_id));
      if (ours.length !== accounts.length || ours.some((r) => r.spendable_usd === null || r.pending_records !== 0)) return undefined;
      return ours;
    }, { timeoutMs: 30_000 });
    expect(report.map((r) => r.drift_usd)).toEqual([0, 0]);
  }, 180_000);
});
