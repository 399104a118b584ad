import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { LEDGER_QUEUE, QUEUE_PREFIX, redisKeys, SETTLEMENT_DIRTY_SET } from '@svc/contracts';
import { keySlot } from '@svc/redis-client';
import type { RedisClient } from '@svc/redis-client';
import { bearer, call, newAccount, newApiKey, repoRoot, seededRandom, startStack, waitFor } from '@svc/test-kit';
import type { ClusterNode, JsonResponse, Stack } from '@svc/test-kit';

/**
 * A Redis Cluster of 3 masters with one replica each, under two gateways, the ledger worker,
 * billing, account-admin and the provider simulator, each its own process
 * (docs/decisions/0030-redis-failover-and-shard-epochs.md).
 *
 * 1. A master killed with SIGKILL while 400 searches run: its replica is promoted, the
 *    gateways follow. Searches fail only between the kill and shortly after the promotion,
 *    and only as the spec's 503 `overloaded` with `Retry-After` (admission fails closed,
 *    nothing charged). The ledger holds exactly the answered searches, once each, at their
 *    price; PostgreSQL's and Redis's balances agree (spendable plus reserved).
 * 2. A whole shard (master and replica) killed and started again empty while searches run:
 *    the shard's epoch is gone, so the gateways re-send the settlement records the worker had
 *    not confirmed (some were still in the lost stream), the account is rebuilt from the
 *    ledger, and again the ledger holds exactly the answered searches.
 */
const PRICE_MICROS = 9_000; // exa/fast, max_results 10
const FUNDING_MICROS = 10_000_000;
const SEARCHES = 400;
const CONCURRENCY = 10;
const SEED = 0xfa11_0ae5;
/**
 * After the promotion is visible on every node, the gateways have this long to follow it: the
 * batch reads the slot map again after every failed connection, and at the latest every 5 s.
 */
const FOLLOW_MS = 5_000;

interface Account { accountId: string; secret: string }
interface Answer { accountId: string; startedAt: number; endedAt: number; response: JsonResponse }

describe('searches on a Redis Cluster with a replica per master, while masters die', () => {
  let stack: Stack;
  let redis: RedisClient;
  let db: Client;
  const accounts: Account[] = [];
  /** The first test's answers (the second checks the ledger over both). */
  let phaseOne: Answer[] = [];

  beforeAll(async () => {
    stack = await startStack({
      name: 'redisfailover',
      redisDb: 0,
      cluster: true,
      clusterReplicas: 1,
      simulator: true,
      worker: true,
      workerEnv: { LEDGER_DRAIN_INTERVAL_MS: '1000', HYDRATION_GRACE_MS: '2000', HYDRATION_INTERVAL_MS: '200' },
      logLevel: 'warn',
      gatewayEnv: { PROVIDER_MAX_IN_FLIGHT_EXA: '1000', RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000', ACCOUNT_MAX_IN_FLIGHT: '100000' },
      gateways: [{}, {}],
    });
    redis = stack.redisClient();
    db = new Client({ connectionString: stack.databases.billing });
    await db.connect();
    const gateway = stack.gateways[0]?.url ?? '';
    // Accounts until two of them live on different masters.
    while (accounts.length < 2) {
      const account = await newAccount(gateway, 'failover');
      const slot = keySlot(redisKeys.accountBalance(account.accountId));
      const cluster = stack.redisCluster;
      if (cluster === undefined) throw new Error('a cluster stack expected');
      const [other] = accounts;
      if (other !== undefined && (await cluster.masterOf(slot)) === (await cluster.masterOf(keySlot(redisKeys.accountBalance(other.accountId))))) continue;
      const key = await newApiKey(gateway, account.managementKey);
      const grant = await call('POST', `${stack.billing.operatorUrl}/operator/accounts/${account.accountId}/grants`, {
        body: { amount_usd: FUNDING_MICROS / 1_000_000, reason: 'e2e funding' },
        headers: bearer(stack.operatorToken),
      });
      expect(grant.status).toBe(201);
      await waitFor('the grant to reach the spendable balance', async () =>
        (await redis.get(redisKeys.accountBalance(account.accountId))) === String(FUNDING_MICROS) ? true : undefined);
      accounts.push({ accountId: account.accountId, secret: key.secret });
    }
  }, 180_000);

  afterAll(async () => {
    if (stack !== undefined) {
      mkdirSync(join(repoRoot(), 'test-results'), { recursive: true });
      writeFileSync(join(repoRoot(), 'test-results', 'redis-failover-logs.txt'), stack.logs());
    }
    await db?.end();
    redis?.disconnect();
    await stack?.stop();
  });

  const cluster = () => {
    if (stack.redisCluster === undefined) throw new Error('a cluster stack expected');
    return stack.redisCluster;
  };
  const masterOfAccount = (account: Account): Promise<ClusterNode> => cluster().masterOf(keySlot(redisKeys.accountBalance(account.accountId)));

  /** `count` searches, CONCURRENCY at a time, over both accounts and both gateways (seeded); `during` runs alongside. */
  async function searches<T>(label: string, count: number, seed: number, during: (answers: Answer[]) => Promise<T>): Promise<{ answers: Answer[]; result: T }> {
    const random = seededRandom(seed);
    const gateways = stack.gateways.map((g) => g.url);
    const answers: Answer[] = [];
    let next = 0;
    const one = async (): Promise<void> => {
      while (next < count) {
        const i = next++;
        const account = accounts[Math.floor(random() * accounts.length)] ?? accounts[0];
        const gateway = gateways[Math.floor(random() * gateways.length)] ?? '';
        if (account === undefined) throw new Error('no account');
        const startedAt = Date.now();
        const response = await call('POST', `${gateway}/v1/search`, { body: { query: `${label} ${i}`, model: 'exa/fast', max_results: 10 }, headers: bearer(account.secret) });
        answers.push({ accountId: account.accountId, startedAt, endedAt: Date.now(), response });
      }
    };
    const [result] = await Promise.all([during(answers), ...Array.from({ length: CONCURRENCY }, one)]);
    return { answers, result: result as T };
  }

  /** Every refusal is the spec's 503 overloaded with Retry-After, a JSON error carrying the request id of its header. */
  function expectOnlyOverloaded(answers: readonly Answer[]): void {
    const shapes = new Map<string, number>();
    const wrong: string[] = [];
    for (const { response } of answers) {
      const shape = response.status === 200 ? '200' : `${response.status} ${String(response.body?.error?.code)}`;
      shapes.set(shape, (shapes.get(shape) ?? 0) + 1);
      if (response.status === 200) continue;
      const retryAfter = response.headers.get('retry-after');
      if (shape !== '503 overloaded' || retryAfter === null || !/^\d+$/.test(retryAfter) || typeof response.body?.error?.message !== 'string'
        || response.body?.error?.request_id !== response.headers.get('x-svc-request-id')) {
        wrong.push(`${shape} retry-after=${String(retryAfter)} ${response.text.slice(0, 300)}`);
      }
    }
    process.stdout.write(`redis-failover e2e: ${answers.length} searches, ${JSON.stringify([...shapes])}\n`);
    expect(wrong.slice(0, 5)).toEqual([]);
  }

  /** How many times `text` is in the stack's logs. */
  const logged = (text: string): number => stack.logs().split(text).length - 1;

  /** The ledger worker's queue as BullMQ keeps it in Redis: its schedulers' next runs and its jobs by state. */
  async function ledgerQueueState(): Promise<string> {
    const key = (part: string): string => `${QUEUE_PREFIX}:${LEDGER_QUEUE}:${part}`;
    try {
      const [schedulers, delayed, waiting, active] = await Promise.all([
        redis.zrange(key('repeat'), '0', '-1', 'WITHSCORES'), redis.zrange(key('delayed'), '0', '-1'), redis.lrange(key('wait'), 0, -1), redis.lrange(key('active'), 0, -1),
      ]);
      return `ledger queue: schedulers ${JSON.stringify(schedulers)} (now ${Date.now()}), delayed ${JSON.stringify(delayed)}, waiting ${JSON.stringify(waiting)}, active ${JSON.stringify(active)}`;
    } catch (error) {
      return `ledger queue not read: ${String(error)}`;
    }
  }

  /** The ledger holds exactly the answered searches (each once, at its price), and PostgreSQL, Redis and reconciliation agree. */
  async function expectLedgerExact(answers: readonly Answer[]): Promise<void> {
    const answeredIds = new Set(answers.map((a) => String(a.response.body?.request_id ?? a.response.headers.get('x-svc-request-id'))));
    for (const account of accounts) {
      const answered = answers.filter((a) => a.accountId === account.accountId && a.response.status === 200).map((a) => String(a.response.body.request_id));
      expect(new Set(answered).size).toBe(answered.length);
      const ledger = await waitFor('every answered search in the ledger', async () => {
        const rows = await db.query<{ request_id: string; amount_micros: string }>(
          "SELECT request_id, amount_micros FROM ledger_entries WHERE account_id = $1 AND kind = 'search_charge'", [account.accountId]);
        if (rows.rows.length >= answered.length) return rows.rows;
        // What a timeout reports: how far the ledger got, and what is still waiting in Redis.
        const [pending, dirty] = await Promise.all([
          redis.xlen(redisKeys.settlementStream(account.accountId)).catch((error: unknown) => String(error)),
          redis.sismember(SETTLEMENT_DIRTY_SET, account.accountId).catch((error: unknown) => String(error)),
        ]);
        throw new Error(`${account.accountId}: ${rows.rows.length} of ${answered.length} in the ledger, ${String(pending)} in its stream, dirty ${String(dirty)}; ${await ledgerQueueState()}`);
      }, { timeoutMs: 60_000 });
      expect(ledger.map((r) => r.request_id).sort()).toEqual([...answered].sort());
      for (const row of ledger) expect([row.request_id, Number(row.amount_micros)]).toEqual([row.request_id, -PRICE_MICROS]);
      for (const row of ledger) expect(answeredIds.has(row.request_id)).toBe(true);
      const expected = FUNDING_MICROS - answered.length * PRICE_MICROS;
      const balance = await db.query<{ balance_micros: string }>('SELECT balance_micros FROM account_balances WHERE account_id = $1', [account.accountId]);
      expect(Number(balance.rows[0]?.balance_micros)).toBe(expected);
      // Redis: spendable plus reserved is what the ledger says (reconciliation's own equation).
      // A search refused after its reservation was made, whose release failed while the
      // cluster was down, leaves the reservation held (money set aside, not lost) until
      // reconciliation releases it once the search is past its bound.
      const held = await waitFor('Redis\'s spendable plus reserved to equal the ledger\'s balance', async () => {
        const [bal, reserved] = await Promise.all([redis.get(redisKeys.accountBalance(account.accountId)), redis.get(redisKeys.accountReserved(account.accountId))]);
        if (Number(bal) + Number(reserved ?? '0') !== expected) throw new Error(`bal ${String(bal)}, reserved ${String(reserved)}, expected ${expected}`);
        return Number(reserved ?? '0');
      }, { timeoutMs: 60_000 });
      process.stdout.write(`redis-failover e2e: ${account.accountId} ${answered.length} charged, ${held} micro-USD still reserved\n`);
    }
    const report = await waitFor('reconciliation to read zero drift for both accounts', async () => {
      const response = await call('GET', `${stack.billing.operatorUrl}/operator/reconciliation?limit=100`, { headers: bearer(stack.operatorToken) });
      if (response.status !== 200) return undefined;
      const rows = response.body.data as { account_id: string; drift_usd: number; spendable_usd: number | null; pending_records: number }[];
      const ours = rows.filter((r) => accounts.some((a) => a.accountId === r.account_id));
      if (ours.length !== accounts.length || ours.some((r) => r.spendable_usd === null || r.pending_records !== 0)) throw new Error(JSON.stringify(ours));
      return ours;
    }, { timeoutMs: 60_000 });
    expect(report.map((r) => r.drift_usd)).toEqual([0, 0]);
  }

  it('a master killed with SIGKILL during 400 searches: its replica is promoted and followed; failures only in the window, only 503 overloaded; the ledger exact', async () => {
    const [victimAccount] = accounts;
    if (victimAccount === undefined) throw new Error('no account');
    const victim = await masterOfAccount(victimAccount);
    const [replica] = await cluster().replicasOf(victim);
    if (replica === undefined) throw new Error('the master has no replica');
    const { answers, result: window } = await searches('failover', SEARCHES, SEED, async (so) => {
      await waitFor('searches under way', () => (so.length >= 80 ? true : undefined), { timeoutMs: 60_000 });
      const killedAt = Date.now();
      await cluster().kill(victim);
      const taker = await cluster().waitForFailover(victim);
      return { killedAt, promotedAt: Date.now(), taker };
    });
    phaseOne = answers;
    // Then, once the gateways had FOLLOW_MS to follow the promotion, 40 more over both gateways.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, window.promotedAt + FOLLOW_MS - Date.now())));
    const later = await searches('after-failover', 40, SEED + 2, async () => undefined);
    answers.push(...later.answers);
    expect(window.taker).toBe(replica);
    expect(await masterOfAccount(victimAccount)).toBe(replica);
    process.stdout.write(`redis-failover e2e: promotion ${window.promotedAt - window.killedAt} ms after the kill\n`);

    expectOnlyOverloaded(answers);
    // Failures only in the failover window: none answered before the kill, none started after
    // the gateways had FOLLOW_MS to follow the promotion.
    const failed = answers.filter((a) => a.response.status !== 200);
    for (const a of failed) {
      expect(a.endedAt).toBeGreaterThanOrEqual(window.killedAt);
      expect(a.startedAt).toBeLessThanOrEqual(window.promotedAt + FOLLOW_MS);
    }
    // Both accounts are served after the window, the victim's on the promoted replica.
    const after = answers.filter((a) => a.startedAt > window.promotedAt + FOLLOW_MS);
    expect(after.filter((a) => a.accountId === victimAccount.accountId).length).toBeGreaterThan(0);
    expect(after.map((a) => a.response.status).filter((status) => status !== 200)).toEqual([]);
    // Searches went through before the kill too (how many fail inside the window depends on
    // how fast the refusals come back: each runner sends its next search at once).
    expect(answers.filter((a) => a.endedAt <= window.killedAt && a.response.status === 200).length).toBeGreaterThanOrEqual(80);

    await expectLedgerExact(answers);
    // The killed node comes back (empty) and rejoins as the new master's replica.
    await cluster().restart(victim);
    expect(await cluster().replicasOf(replica)).toEqual([victim]);
  }, 240_000);

  it('a shard killed whole and started again empty is noticed by its epoch: unconfirmed records re-sent, the account rebuilt, the ledger exact', async () => {
    const [, shardAccount] = accounts;
    if (shardAccount === undefined) throw new Error('no account');
    const master = await masterOfAccount(shardAccount);
    const [replica] = await cluster().replicasOf(master);
    if (replica === undefined) throw new Error('the master has no replica');
    const resentBefore = logged('re-sending unconfirmed settlement records');
    const rebuiltBefore = logged('spendable balance rebuilt from the ledger');
    const ledgerBefore = await db.query<{ n: string }>("SELECT count(*) AS n FROM ledger_entries WHERE kind = 'search_charge'");
    let pendingAtKill = 0;
    const { answers } = await searches('lost-shard', 300, SEED + 1, async (so) => {
      await waitFor('searches under way', () => (so.filter((a) => a.accountId === shardAccount.accountId && a.response.status === 200).length >= 40 ? true : undefined), { timeoutMs: 60_000 });
      pendingAtKill = await redis.xlen(redisKeys.settlementStream(shardAccount.accountId));
      // The replica first, so nothing takes over: the shard's data is gone with both.
      await cluster().kill(replica);
      await cluster().kill(master);
      await cluster().restart(master);
      await cluster().restart(replica);
    });
    expect(await masterOfAccount(shardAccount)).toBe(master);
    // Records were still in the stream the shard lost, and the gateways noticed the loss by its epoch.
    expect(pendingAtKill).toBeGreaterThan(0);
    await waitFor('a gateway to re-send its unconfirmed records', () => (logged('re-sending unconfirmed settlement records') > resentBefore ? true : undefined));
    // Keep searching the account until it is rebuilt from the ledger and admitted again.
    await waitFor('the account to be admitted again', async () => {
      const startedAt = Date.now();
      const response = await call('POST', `${stack.gateways[0]?.url ?? ''}/v1/search`, { body: { query: 'after', model: 'exa/fast', max_results: 10 }, headers: bearer(shardAccount.secret) });
      answers.push({ accountId: shardAccount.accountId, startedAt, endedAt: Date.now(), response });
      return response.status === 200 ? true : undefined;
    }, { timeoutMs: 60_000, intervalMs: 200 });
    expect(logged('spendable balance rebuilt from the ledger')).toBeGreaterThan(rebuiltBefore);
    expectOnlyOverloaded(answers);
    expect(Number(ledgerBefore.rows[0]?.n)).toBeGreaterThan(0);
    // Both phases' answers: the ledger holds all of them, once each.
    await expectLedgerExact([...phaseOne, ...answers]);
  }, 240_000);
});
