import { redisKeys } from '@svc/contracts';
import { REDIS_TOPOLOGIES, bearer, call, newAccount, newApiKey, waitFor, grantCredits, UNTHROTTLED_GATEWAY_ENV, useStack, SETTLING_STACK } from '@svc/test-kit';
import type { JsonResponse } from '@svc/test-kit';

/**
 * Money exactness across processes: three gateways, account-admin, billing, the ledger
 * worker and the provider simulator, each its own process, one Redis and one PostgreSQL.
 * exa/fast with max_results 10 costs exactly 0.009 USD (9,000 micro-USD), and that is also
 * what a search reserves, so an account funded with N x 0.009 can pay for exactly N.
 */
const PRICE_MICROS = 9_000;
const N = 15;

describe.each(REDIS_TOPOLOGIES)('search money across gateway processes, billed through the ledger worker (%s Redis)', (topology) => {
  const suite = useStack({
    ...SETTLING_STACK,
    name: `money_${topology}`,
    cluster: topology === 'cluster',
    redisDb: 10,
    gatewayEnv: UNTHROTTLED_GATEWAY_ENV,
    gateways: [{}, {}, {}],
  }, { db: true });

  async function fundedAccount(micros: number): Promise<Awaited<ReturnType<typeof newAccount>>> {
    const account = await newAccount(suite.gw, 'money');
    await grantCredits(suite.stack, account.accountId, micros, { redis: suite.redis });
    return account;
  }

  const search = (gateway: string, secret: string, i: number): Promise<JsonResponse> =>
    call('POST', `${gateway}/v1/search`, { body: { query: `exactness ${i}`, model: 'exa/fast', max_results: 10 }, headers: bearer(secret) });

  /** Waits until the worker has written every settlement of the account, then reads the ledger. */
  async function settledLedger(accountId: string, expectedSearches: number): Promise<{ charges: number; sum: number; balance: number; distinct: number }> {
    return waitFor('the ledger worker to write every settlement', async () => {
      const rows = await suite.db.query<{ charges: string; sum: string | null; distinct: string }>(
        `SELECT count(*) AS charges, sum(-amount_micros) AS sum, count(DISTINCT idempotency_key) AS distinct
           FROM ledger_entries WHERE account_id = $1 AND kind = 'search_charge'`, [accountId]);
      const row = rows.rows[0];
      if (row === undefined || Number(row.charges) < expectedSearches) return undefined;
      const balance = await suite.db.query<{ balance_micros: string }>('SELECT balance_micros FROM account_balances WHERE account_id = $1', [accountId]);
      return { charges: Number(row.charges), sum: Number(row.sum ?? 0), balance: Number(balance.rows[0]?.balance_micros), distinct: Number(row.distinct) };
    }, { timeoutMs: 30_000 });
  }

  /** Samples the spendable balance while `work` runs; returns the lowest value seen. */
  async function lowestBalanceDuring<T>(accountId: string, work: Promise<T>): Promise<{ result: T; lowest: number }> {
    let lowest = Number.POSITIVE_INFINITY;
    let done = false;
    const sampler = (async () => {
      while (!done) {
        lowest = Math.min(lowest, Number(await suite.redis.get(redisKeys.accountBalance(accountId))));
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const result = await work;
    done = true;
    await sampler;
    return { result, lowest };
  }

  it(`an account funded for exactly ${N} searches gets ${4 * N} concurrent ones through 4 keys and 3 gateways: exactly ${N} succeed and the ledger matches to the micro-dollar`, async () => {
    const account = await fundedAccount(N * PRICE_MICROS);
    const keys = await Promise.all([0, 1, 2, 3].map(() => newApiKey(suite.gw, account.managementKey)));
    const { result: responses, lowest } = await lowestBalanceDuring(account.accountId, Promise.all(
      Array.from({ length: 4 * N }, (_, i) => search(suite.gateway(i % 3), keys[i % 4]?.secret ?? '', i)),
    ));
    const ok = responses.filter((r) => r.status === 200);
    expect(ok).toHaveLength(N);
    for (const r of ok) expect(r.body.cost_usd).toBe(PRICE_MICROS / 1_000_000);
    const refused = responses.filter((r) => r.status !== 200);
    expect(new Set(refused.map((r) => `${r.status} ${r.body?.error?.code}`))).toEqual(new Set(['402 insufficient_credits']));
    expect(lowest).toBeGreaterThanOrEqual(0);
    expect(await suite.redis.get(redisKeys.accountBalance(account.accountId))).toBe('0');
    const ledger = await settledLedger(account.accountId, N);
    expect(ledger).toEqual({ charges: N, sum: N * PRICE_MICROS, balance: 0, distinct: N });
    const credits = await call('GET', `${suite.gateway(1)}/v1/credits`, { headers: bearer(account.managementKey) });
    expect(credits.body.balance_usd).toBe(0);
  });

  it('a key limit smaller than the balance: exactly the limit is spent, across gateways', async () => {
    const account = await fundedAccount(2 * N * PRICE_MICROS);
    const key = await newApiKey(suite.gw, account.managementKey, { limit_usd: (N * PRICE_MICROS) / 1_000_000 });
    const responses = await Promise.all(Array.from({ length: 4 * N }, (_, i) => search(suite.gateway(i % 3), key.secret, i)));
    expect(responses.filter((r) => r.status === 200)).toHaveLength(N);
    const refused = responses.filter((r) => r.status !== 200);
    expect(new Set(refused.map((r) => `${r.status} ${r.body?.error?.code}`))).toEqual(new Set(['402 key_limit_exceeded']));
    expect(refused[0]?.body.error.needed_usd).toBe(PRICE_MICROS / 1_000_000);
    expect(await suite.redis.get(redisKeys.accountBalance(account.accountId))).toBe(String(N * PRICE_MICROS));
    const ledger = await settledLedger(account.accountId, N);
    expect(ledger).toEqual({ charges: N, sum: N * PRICE_MICROS, balance: N * PRICE_MICROS, distinct: N });
    const record = await call('GET', `${suite.gateway(2)}/v1/keys/${key.id}`, { headers: bearer(account.managementKey) });
    expect(record.body).toMatchObject({ usage_usd: (N * PRICE_MICROS) / 1_000_000, limit_remaining_usd: 0 });
  });

  it('a gateway killed with SIGKILL right after replying: every answered search is billed once', async () => {
    const account = await fundedAccount(1_000 * PRICE_MICROS);
    const key = await newApiKey(suite.gw, account.managementKey);
    const victim = suite.stack.gateways[2];
    if (victim === undefined) throw new Error('three gateways expected');
    const answered: string[] = [];
    let killed = false;
    await Promise.all(Array.from({ length: 30 }, async (_, i) => {
      const response = await search(victim.url, key.secret, i).catch(() => undefined);
      if (response?.status === 200) {
        answered.push(String(response.body.request_id));
        if (!killed) {
          killed = true;
          process.kill(victim.process.pid, 'SIGKILL');
        }
      }
    }));
    expect(killed).toBe(true);
    expect(answered.length).toBeGreaterThan(0);
    await waitFor('the answered searches in the ledger', async () => {
      const rows = await suite.db.query<{ idempotency_key: string }>(
        "SELECT idempotency_key FROM ledger_entries WHERE account_id = $1 AND kind = 'search_charge'", [account.accountId]);
      const billed = rows.rows.map((r) => r.idempotency_key);
      return answered.every((id) => billed.includes(id)) ? billed : undefined;
    }, { timeoutMs: 30_000 });
    const rows = await suite.db.query<{ request_id: string; n: string }>(
      'SELECT request_id, count(*) AS n FROM usage_events WHERE account_id = $1 GROUP BY request_id, attempt_index HAVING count(*) > 1', [account.accountId]);
    expect(rows.rows).toEqual([]);
    const charges = await suite.db.query<{ n: string; d: string }>(
      "SELECT count(*) AS n, count(DISTINCT idempotency_key) AS d FROM ledger_entries WHERE account_id = $1 AND kind = 'search_charge'", [account.accountId]);
    expect(charges.rows[0]?.n).toBe(charges.rows[0]?.d);
  });
});
