import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { QUEUE_PREFIX, RESEARCH_QUEUES, redisKeys } from '@svc/contracts';
import { keySlot } from '@svc/redis-client';
import { bearer, call, grantCredits, newAccount, newApiKey, repoRoot, SETTLING_STACK, useStack, waitFor } from '@svc/test-kit';
import type { StackSuite } from '@svc/test-kit';
import { RESEARCH_WORKER_TEST_ENV } from './research-stack';

/**
 * Research runs that outlive what fails under them (docs/decisions/0062): a research worker
 * killed by its PID mid-run, Redis emptied mid-run (its hold is in the ledger, so the rebuilt
 * balance does not hand it back), and on a Redis Cluster with a replica per master, the master
 * of the account's slot and the master of the queues' slot killed mid-run. Each run finishes
 * with exactly one hold and one release in the ledger, its cost once in settlements, and the
 * durable and spendable balances agree.
 */

interface Funded { accountId: string; key: string; keyId: string }

async function funded(suite: StackSuite, label: string, micros: number): Promise<Funded> {
  const { accountId, managementKey } = await newAccount(suite.gw, label);
  await grantCredits(suite.stack, accountId, micros, { redis: suite.redis });
  const key = await newApiKey(suite.gw, managementKey);
  return { accountId, key: key.secret, keyId: key.id };
}

async function startRun(suite: StackSuite, account: Funded, input: string, capUsd = 2): Promise<string> {
  const created = await call('POST', `${suite.gw}/v1/research`, { body: { input, model: 'exa/agent-auto', max_cost_usd: capUsd }, headers: bearer(account.key) });
  if (created.status !== 202) throw new Error(`create: ${created.status} ${created.text}`);
  return String(created.body.id);
}

async function status(suite: StackSuite, account: Funded, id: string): Promise<Record<string, unknown> | undefined> {
  const got = await call('GET', `${suite.gw}/v1/research/${id}`, { headers: bearer(account.key) }).catch(() => undefined);
  return got?.status === 200 ? got.body as Record<string, unknown> : undefined;
}

async function whenRunning(suite: StackSuite, account: Funded, id: string): Promise<void> {
  await waitFor(`run ${id} running`, async () => ((await status(suite, account, id))?.status === 'running' ? true : undefined), { timeoutMs: 30_000 });
}

async function settled(suite: StackSuite, account: Funded, id: string, timeoutMs = 60_000): Promise<Record<string, unknown>> {
  return waitFor(`run ${id} settled`, async () => {
    const run = await status(suite, account, id);
    return run !== undefined && ['completed', 'failed', 'cancelled'].includes(String(run.status)) ? run : undefined;
  }, { timeoutMs, intervalMs: 200 });
}

/** One hold and one release for the run, its cost once in settlements, and the account exact everywhere (ledger, Redis, reconciliation). */
async function exactlyOnce(suite: StackSuite, account: Funded, id: string, funding: number): Promise<number> {
  const run = await settled(suite, account, id);
  const cost = Math.round(Number(run.cost_usd) * 1e6);
  const entries = await suite.db.query<{ kind: string; amount_micros: string }>('SELECT kind, amount_micros FROM ledger_entries WHERE idempotency_key = $1 ORDER BY created_at', [id]);
  expect(entries.rows.map((r) => [r.kind, Number(r.amount_micros)])).toEqual([['research_hold', -2_000_000], ['research_release', 2_000_000 - cost]]);
  const settlements = await suite.db.query('SELECT charged_micros FROM settlements WHERE request_id = $1', [id]);
  expect(settlements.rows).toEqual([{ charged_micros: String(cost) }]);
  await waitFor('every entry applied to Redis', async () => {
    const rows = await suite.db.query('SELECT 1 FROM ledger_entries WHERE account_id = $1 AND applied_to_spendable_at IS NULL', [account.accountId]);
    return rows.rowCount === 0 ? true : undefined;
  }, { timeoutMs: 30_000 });
  const report = await waitFor('the account exact', async () => {
    const got = await call('GET', `${suite.stack.billing.operatorUrl}/operator/reconciliation?account_id=${account.accountId}`, { headers: bearer(suite.stack.operatorToken) });
    const item = got.body?.data?.[0];
    return item !== undefined && item.drift_usd === 0 && item.spendable_usd !== null && Math.round(item.durable_usd * 1e6) === funding - cost ? item : undefined;
  }, { timeoutMs: 30_000 });
  expect(Math.round(Number(report.spendable_usd) * 1e6) + Math.round(Number(report.reserved_usd) * 1e6)).toBe(funding - cost);
  expect(await suite.redis.get(redisKeys.keyHold(account.accountId, account.keyId))).toBeNull();
  return cost;
}

describe('research runs survive a killed worker and a Redis that lost its data', () => {
  const suite = useStack({
    ...SETTLING_STACK, name: 'researchrecovery', redisDb: 14, researchWorker: true,
    simulatorEnv: { SIM_RESEARCH_MS: '1500' },
    researchWorkerEnv: { ...RESEARCH_WORKER_TEST_ENV },
    workerEnv: { LEDGER_DRAIN_INTERVAL_MS: '100', HYDRATION_GRACE_MS: '500', HYDRATION_INTERVAL_MS: '100', RECONCILE_INTERVAL_MS: '86400000' },
  }, { db: true });

  it('a research worker killed by its PID mid-run (twice) and started again finishes the run with one charge', async () => {
    const account = await funded(suite, 'research-kill', 10_000_000);
    const id = await startRun(suite, account, 'killed worker sim:exa=run6000');
    await whenRunning(suite, account, id);
    for (let round = 0; round < 2; round++) {
      const worker = suite.stack.researchWorker;
      if (worker === undefined) throw new Error('no research worker');
      process.kill(worker.process.pid, 'SIGKILL');
      await worker.process.stop();
      await new Promise((resolve) => setTimeout(resolve, 800));
      await suite.stack.startResearchWorker();
    }
    const cost = await exactlyOnce(suite, account, id, 10_000_000);
    expect(cost).toBeGreaterThan(0);
    // The provider ran the run once: one run at Exa for this input.
    const sim = await call('GET', `${suite.sim}/_sim/research`);
    expect(sim.body.runs.filter((r: { status: string; budget_micros: number }) => r.budget_micros === 1_600_000 && r.status === 'completed')).toHaveLength(1);
  }, 90_000);

  it('Redis emptied mid-run: the hold stays out of the rebuilt balance, the job comes back, one charge', async () => {
    const account = await funded(suite, 'research-flush', 3_000_000);
    const id = await startRun(suite, account, 'flushed redis sim:exa=run5000');
    await whenRunning(suite, account, id);
    await suite.stack.flushRedis();
    // The ledger worker rebuilds the account: 3.00 less the 2.00 the run holds, and the key's hold.
    await waitFor('the account rebuilt', async () => ((await suite.redis.get(redisKeys.accountBalance(account.accountId))) === '1000000' ? true : undefined), { timeoutMs: 30_000 });
    expect(await suite.redis.get(redisKeys.keyHold(account.accountId, account.keyId))).toBe('2000000');
    // So a second run with the same cap cannot be held: the balance does not have it.
    const second = await call('POST', `${suite.gw}/v1/research`, { body: { input: 'second', model: 'exa/agent-auto', max_cost_usd: 2 }, headers: bearer(account.key) });
    expect(second.status).toBe(402);
    await exactlyOnce(suite, account, id, 3_000_000);
  }, 90_000);
});

describe('research runs on a Redis Cluster with a replica per master, while masters die', () => {
  const suite = useStack({
    ...SETTLING_STACK, name: 'researchfailover', redisDb: 0, cluster: true, clusterReplicas: 1, researchWorker: true,
    simulatorEnv: { SIM_RESEARCH_MS: '1500' },
    researchWorkerEnv: { ...RESEARCH_WORKER_TEST_ENV },
    workerEnv: { LEDGER_DRAIN_INTERVAL_MS: '200', HYDRATION_GRACE_MS: '2000', HYDRATION_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '86400000' },
  }, { db: true, timeoutMs: 180_000 });

  afterAll(() => {
    mkdirSync(join(repoRoot(), 'test-results'), { recursive: true });
    writeFileSync(join(repoRoot(), 'test-results', 'research-failover-logs.txt'), suite.stack.logs());
  });

  const cluster = () => {
    const found = suite.stack.redisCluster;
    if (found === undefined) throw new Error('a cluster stack expected');
    return found;
  };

  it.each([
    ['the account\'s slot', (account: Funded) => keySlot(redisKeys.accountBalance(account.accountId))],
    ['the research queues\' slot', () => keySlot(`${QUEUE_PREFIX}:${RESEARCH_QUEUES.exa}:id`)],
  ])('the master of %s killed mid-run: its replica promoted, the run finishes with one charge', async (_what, slotOf) => {
    const account = await funded(suite, 'research-failover', 10_000_000);
    const id = await startRun(suite, account, 'failover sim:exa=run7000');
    await whenRunning(suite, account, id);
    const victim = await cluster().masterOf(slotOf(account));
    const killedAt = Date.now();
    await cluster().kill(victim);
    await cluster().waitForFailover(victim);
    process.stdout.write(`research failover e2e: promoted ${Date.now() - killedAt} ms after the kill\n`);
    await exactlyOnce(suite, account, id, 10_000_000);
    await cluster().restart(victim);
  }, 120_000);
});
