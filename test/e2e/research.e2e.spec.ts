import { redisKeys } from '@svc/contracts';
import { verifyWebhook } from '@svc/sdk';
import { bearer, call, grantCredits, newAccount, newApiKey, SETTLING_STACK, useStack, waitFor, WebhookReceiver } from '@svc/test-kit';
import type { JsonResponse } from '@svc/test-kit';
import { RESEARCH_WORKER_TEST_ENV } from './research-stack';

/**
 * Research runs end to end (docs/decisions/0062): the public edge, billing's API, the research
 * worker and the ledger worker as their own processes, against the provider simulator. Each
 * run's money is checked in the ledger (PostgreSQL), in Redis, against reconciliation's
 * equation and in the finance report.
 */

describe('research runs end to end', () => {
  const receivers: WebhookReceiver[] = [];
  afterAll(async () => {
    for (const receiver of receivers) await receiver.stop();
  });
  const suite = useStack({
    ...SETTLING_STACK, name: 'research', redisDb: 15, researchWorker: true,
    simulatorEnv: { SIM_RESEARCH_MS: '1500' },
    researchWorkerEnv: { ...RESEARCH_WORKER_TEST_ENV },
    workerEnv: { LEDGER_DRAIN_INTERVAL_MS: '100', WEBHOOK_DISPATCH_INTERVAL_MS: '100', RECONCILE_INTERVAL_MS: '86400000' },
  }, { db: true });

  async function funded(label: string, micros: number, keyFields: Record<string, unknown> = {}): Promise<{ accountId: string; key: string; keyId: string; managementKey: string }> {
    const { accountId, managementKey } = await newAccount(suite.gw, label);
    await grantCredits(suite.stack, accountId, micros, { redis: suite.redis });
    const key = await newApiKey(suite.gw, managementKey, keyFields);
    return { accountId, key: key.secret, keyId: key.id, managementKey };
  }

  const create = (key: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<JsonResponse> =>
    call('POST', `${suite.gw}/v1/research`, { body, headers: { ...bearer(key), ...headers } });

  async function settled(key: string, id: string, timeoutMs = 30_000): Promise<Record<string, unknown>> {
    return waitFor(`run ${id} settled`, async () => {
      const got = await call('GET', `${suite.gw}/v1/research/${id}`, { headers: bearer(key) });
      return ['completed', 'failed', 'cancelled'].includes(got.body.status) ? got.body as Record<string, unknown> : undefined;
    }, { timeoutMs, intervalMs: 100 });
  }

  /** The account's ledger entries of a run, oldest first. */
  async function entriesOf(runId: string): Promise<{ kind: string; amount: number }[]> {
    const rows = await suite.db.query<{ kind: string; amount_micros: string }>(
      'SELECT kind, amount_micros FROM ledger_entries WHERE idempotency_key = $1 ORDER BY created_at, id', [runId]);
    return rows.rows.map((r) => ({ kind: r.kind, amount: Number(r.amount_micros) }));
  }

  /** Durable balance, Redis's spendable balance, and reconciliation's drift for the account (0 when exact). */
  async function money(accountId: string): Promise<{ durable: number; spendable: number; drift: number; reserved: number }> {
    const report = await call('GET', `${suite.stack.billing.operatorUrl}/operator/reconciliation?account_id=${accountId}`, { headers: bearer(suite.stack.operatorToken) });
    const item = report.body.data[0];
    return {
      durable: Math.round(item.durable_usd * 1e6), spendable: Math.round(Number(item.spendable_usd) * 1e6), drift: Math.round(item.drift_usd * 1e6),
      reserved: Math.round(item.reserved_usd * 1e6),
    };
  }

  async function outboxApplied(accountId: string): Promise<void> {
    await waitFor('every ledger entry applied to Redis', async () => {
      const rows = await suite.db.query('SELECT 1 FROM ledger_entries WHERE account_id = $1 AND applied_to_spendable_at IS NULL', [accountId]);
      return rows.rowCount === 0 ? true : undefined;
    });
  }

  it('completes: charged its metered cost, the rest of the hold released, the ledger exact, reconciliation and finance balanced', async () => {
    const account = await funded('research-complete', 10_000_000);
    const answer = await create(account.key, { input: 'state of solid-state batteries sim:exa=run800', model: 'exa/agent-auto', max_cost_usd: 2, metadata: { ticket: 'T-1' } });
    expect(answer.status).toBe(202);
    expect(answer.body).toMatchObject({ object: 'research_run', status: 'queued', max_cost_usd: 2, held_usd: 2, cost_usd: null, metadata: { ticket: 'T-1' }, model: 'exa/agent-auto' });
    expect(answer.body.id).toMatch(/^rsr_/);
    // The hold is in the ledger at once and out of the spendable balance.
    expect(await entriesOf(answer.body.id)).toEqual([{ kind: 'research_hold', amount: -2_000_000 }]);
    await outboxApplied(account.accountId);
    expect(await suite.redis.get(redisKeys.accountBalance(account.accountId))).toBe('8000000');
    expect(await suite.redis.get(redisKeys.keyHold(account.accountId, account.keyId))).toBe('2000000');
    expect(await money(account.accountId)).toMatchObject({ durable: 8_000_000, spendable: 8_000_000, drift: 0, reserved: 0 });

    const done = await settled(account.key, answer.body.id);
    expect(done).toMatchObject({ status: 'completed', held_usd: 0, error: null, model: 'exa/agent-auto' });
    expect((done.output as { text: string }).text).toContain('solid-state batteries');
    expect((done.sources as unknown[]).length).toBe(3);
    const cost = Math.round(Number(done.cost_usd) * 1e6);
    // Exa was given the cap at its own price (2.00 / 1.25 = 1.60 USD) and reported 20 to 80 % of it; charged at 1.25.
    const sim = await call('GET', `${suite.sim}/_sim/research`);
    const providerRun = sim.body.runs.find((r: { budget_micros: number | null }) => r.budget_micros === 1_600_000);
    expect(providerRun).toBeDefined();
    expect(cost).toBe(Math.floor((providerRun.cost.micros * 1_250_000 + 500_000) / 1_000_000));
    expect(cost).toBeGreaterThan(0);
    expect(cost).toBeLessThan(2_000_000);
    expect(await entriesOf(answer.body.id)).toEqual([{ kind: 'research_hold', amount: -2_000_000 }, { kind: 'research_release', amount: 2_000_000 - cost }]);
    await outboxApplied(account.accountId);
    expect(await money(account.accountId)).toMatchObject({ durable: 10_000_000 - cost, spendable: 10_000_000 - cost, drift: 0, reserved: 0 });
    expect(await suite.redis.get(redisKeys.keyHold(account.accountId, account.keyId))).toBeNull();
    expect(await suite.redis.get(redisKeys.keyTotalUsage(account.accountId, account.keyId))).toBe(String(cost));
    // Usage and the settlement row hold the run once, at its cost.
    const settlement = await suite.db.query('SELECT charged_micros FROM settlements WHERE request_id = $1', [answer.body.id]);
    expect(settlement.rows).toEqual([{ charged_micros: String(cost) }]);
    const usage = await call('GET', `${suite.gw}/v1/usage?group_by=model`, { headers: bearer(account.managementKey) });
    expect(usage.body.data).toEqual([expect.objectContaining({ model: 'exa/agent-auto', cost_usd: cost / 1e6 })]);
    const finance = await call('GET', `${suite.stack.billing.operatorUrl}/operator/finance/reconciliation`, { headers: bearer(suite.stack.operatorToken) });
    expect(finance.body.research).toMatchObject({ entries_drift_usd: 0, open_hold_drift_usd: 0, mismatched_runs: [] });
    expect(finance.body.usage).toMatchObject({ entries_drift_usd: 0, events_drift_usd: 0, key_spend_drift_usd: 0, mismatched_requests: [] });
  });

  it('a provider that reports more than the cap: charged exactly the cap, the loss listed for finance', async () => {
    const account = await funded('research-overcap', 5_000_000);
    const answer = await create(account.key, { input: 'overcap question sim:exa=overcap,run300', model: 'exa/agent-auto', max_cost_usd: 1.5 });
    expect(answer.status).toBe(202);
    const done = await settled(account.key, answer.body.id);
    expect(done).toMatchObject({ status: 'completed', cost_usd: 1.5 });
    // Budget 1.20 USD at Exa's price; Exa reported 1.5 times it, 1.80 USD: 0.30 USD more than the run was charged.
    expect(await entriesOf(answer.body.id)).toEqual([{ kind: 'research_hold', amount: -1_500_000 }, { kind: 'research_release', amount: 0 }]);
    await outboxApplied(account.accountId);
    expect(await money(account.accountId)).toMatchObject({ durable: 3_500_000, spendable: 3_500_000, drift: 0 });
    const finance = await call('GET', `${suite.stack.billing.operatorUrl}/operator/finance/reconciliation`, { headers: bearer(suite.stack.operatorToken) });
    expect(finance.body.research.loss_runs).toEqual(expect.arrayContaining([{ run_id: answer.body.id, provider_cost_usd: 1.8, charged_usd: 1.5, loss_usd: 0.3 }]));
    expect(finance.body.research.loss_usd).toBeGreaterThanOrEqual(0.3);
    expect(finance.body.research.entries_drift_usd).toBe(0);
  });

  it('cancel mid-run: Exa cancelled at once and charged what it reports; Tavily finished there and charged its credits', async () => {
    const account = await funded('research-cancel', 10_000_000);
    const exa = await create(account.key, { input: 'long one sim:exa=forever', model: 'exa/agent-auto', max_cost_usd: 2 });
    const tav = await create(account.key, { input: 'tavily one sim:tavily=run2500', model: 'tavily/research-mini', max_cost_usd: 2 });
    expect([exa.status, tav.status]).toEqual([202, 202]);
    expect(tav.body.held_usd).toBe(1.1);
    for (const run of [exa, tav]) {
      await waitFor(`${String(run.body.id)} running`, async () => ((await call('GET', `${suite.gw}/v1/research/${run.body.id}`, { headers: bearer(account.key) })).body.status === 'running' ? true : undefined));
    }
    await new Promise((resolve) => setTimeout(resolve, 600));
    const cancelled = await call('POST', `${suite.gw}/v1/research/${exa.body.id}/cancel`, { headers: bearer(account.key) });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.cancel_requested_at).toEqual(expect.any(String));
    const cancelledTav = await call('POST', `${suite.gw}/v1/research/${tav.body.id}/cancel`, { headers: bearer(account.key) });
    expect(cancelledTav.status).toBe(200);
    expect(cancelledTav.body).toMatchObject({ status: 'running', cost_usd: null });
    const exaDone = await settled(account.key, exa.body.id);
    const tavDone = await settled(account.key, tav.body.id);
    expect(exaDone).toMatchObject({ status: 'cancelled', output: null });
    expect(Number(exaDone.cost_usd)).toBeGreaterThan(0);
    expect(Number(exaDone.cost_usd)).toBeLessThan(2);
    expect(tavDone).toMatchObject({ status: 'cancelled', output: null });
    expect(Number(tavDone.cost_usd)).toBeGreaterThan(0);
    expect(Number(tavDone.cost_usd)).toBeLessThanOrEqual(1.1);
    // A second cancel of a settled run changes nothing.
    const again = await call('POST', `${suite.gw}/v1/research/${exa.body.id}/cancel`, { headers: bearer(account.key) });
    expect(again.status).toBe(200);
    expect(again.body.cost_usd).toBe(exaDone.cost_usd);
    const total = Math.round((Number(exaDone.cost_usd) + Number(tavDone.cost_usd)) * 1e6);
    await outboxApplied(account.accountId);
    expect(await money(account.accountId)).toMatchObject({ durable: 10_000_000 - total, spendable: 10_000_000 - total, drift: 0 });
  });

  it('402 when the balance or the key\'s limit cannot hold the run; 400/403/404 for bad requests', async () => {
    const poor = await funded('research-poor', 1_000_000);
    const refused = await create(poor.key, { input: 'too dear', model: 'exa/agent-auto', max_cost_usd: 2 });
    expect(refused.status).toBe(402);
    expect(refused.body.error).toMatchObject({ code: 'insufficient_credits', needed_usd: 2 });
    const limited = await funded('research-limited', 10_000_000, { limit_usd: 1, limit_reset: 'monthly' });
    const overLimit = await create(limited.key, { input: 'over the limit', model: 'exa/agent-auto', max_cost_usd: 2 });
    expect(overLimit.status).toBe(402);
    expect(overLimit.body.error).toMatchObject({ code: 'key_limit_exceeded', needed_usd: 2 });
    expect(await money(poor.accountId)).toMatchObject({ durable: 1_000_000, spendable: 1_000_000, drift: 0 });
    expect(await money(limited.accountId)).toMatchObject({ durable: 10_000_000, spendable: 10_000_000, drift: 0 });
    // A cap below every model's least cost; an unknown model; a management key; another account's run.
    const cheap = await create(limited.key, { input: 'q', model: 'exa/agent-high', max_cost_usd: 0.1 });
    expect(cheap.status).toBe(400);
    expect(cheap.body.error.message).toContain('exa/agent-high');
    expect((await create(limited.key, { input: 'q', model: 'exa/fast', max_cost_usd: 1 })).status).toBe(400);
    expect((await create(limited.key, { input: 'q', model: 'exa/fast', max_cost_usd: 1 })).body.error.code).toBe('unknown_model');
    expect((await create(limited.managementKey, { input: 'q', model: 'exa/agent-low', max_cost_usd: 1 })).status).toBe(403);
    expect((await create(limited.key, { input: '   ', model: 'exa/agent-low', max_cost_usd: 1 })).status).toBe(400);
    expect((await create(limited.key, { input: 'q', model: 'exa/agent-low' })).status).toBe(400);
    expect((await create(limited.key, { input: 'q\ud800', model: 'exa/agent-low', max_cost_usd: 1 })).status).toBe(400);
    expect((await create(limited.key, { input: 'q', model: 'exa/agent-low', max_cost_usd: 1, output_schema: { type: 'object', properties: { a: { description: '\udc00' } } } })).status).toBe(400);
    const ok = await create(limited.key, { input: 'mine', model: 'exa/agent-minimal', max_cost_usd: 0.5 });
    expect(ok.status).toBe(202);
    expect((await call('GET', `${suite.gw}/v1/research/${ok.body.id}`, { headers: bearer(poor.key) })).status).toBe(404);
    expect((await call('GET', `${suite.gw}/v1/research/rsr_nope`, { headers: bearer(poor.key) })).status).toBe(404);
    await settled(limited.key, ok.body.id);
    // The key's model fence, forwarded by the gateway: a run of only fenced models is 403; a fenced model among others is skipped.
    const fenced = await funded('research-fenced', 10_000_000, { allowed_models: ['tavily/*'] });
    const outside = await create(fenced.key, { input: 'q', model: 'exa/agent-low', max_cost_usd: 2 });
    expect(outside.status).toBe(403);
    expect(outside.body.error.code).toBe('model_not_allowed');
    const mixed = await create(fenced.key, { input: 'q', models: ['exa/agent-low', 'tavily/research-mini'], max_cost_usd: 2 });
    expect(mixed.status).toBe(202);
    expect(mixed.body).toMatchObject({ held_usd: 1.1, model: 'tavily/research-mini' });
    expect(mixed.body.attempts[0]).toMatchObject({ model: 'exa/agent-low', status: 'skipped', error: expect.stringContaining('not allowed') });
    await settled(fenced.key, mixed.body.id);
  });

  it('research.completed and research.failed arrive signed, and are listed in /v1/events', async () => {
    const account = await funded('research-hooks', 10_000_000);
    const hook = await WebhookReceiver.start();
    receivers.push(hook);
    const endpoint = await call('POST', `${suite.gw}/v1/webhook-endpoints`, { body: { url: hook.url, events: ['research.completed', 'research.failed'] }, headers: bearer(account.managementKey) });
    expect(endpoint.status).toBe(201);
    const ok = await create(account.key, { input: 'hooked sim:exa=run200', model: 'exa/agent-low', max_cost_usd: 1 });
    // Fails at the first model (Exa's run fails: half its usage so far charged) and at the fallback (Tavily's task fails: nothing).
    const bad = await create(account.key, { input: 'doomed sim:*=fail,run200', models: ['exa/agent-auto', 'tavily/research-mini'], max_cost_usd: 3 });
    expect([ok.status, bad.status]).toEqual([202, 202]);
    const okDone = await settled(account.key, ok.body.id);
    const badDone = await settled(account.key, bad.body.id);
    expect(okDone).toMatchObject({ status: 'completed', cost_usd: 0.03125 });
    expect(badDone).toMatchObject({ status: 'failed' });
    expect((badDone.attempts as { model: string; status: string }[]).map((a) => [a.model, a.status])).toEqual([['exa/agent-auto', 'failed'], ['tavily/research-mini', 'failed']]);
    const events = await waitFor('both events delivered', async () => {
      const verified = await Promise.all(hook.accepted().map((r) => verifyWebhook(r.rawBody, r.signature, String(endpoint.body.secret))));
      return verified.length >= 2 ? verified : undefined;
    }, { timeoutMs: 30_000 });
    expect(events.map((e) => e.type).sort()).toEqual(['research.completed', 'research.failed']);
    expect(events.find((e) => e.type === 'research.completed')?.data).toMatchObject({ id: ok.body.id, status: 'completed', cost_usd: 0.03125 });
    expect(events.find((e) => e.type === 'research.failed')?.data).toMatchObject({ id: bad.body.id, status: 'failed', cost_usd: badDone.cost_usd });
    await expect(verifyWebhook(hook.accepted()[0]?.rawBody ?? '', hook.accepted()[0]?.signature, 'whsec_wrong')).rejects.toThrow();
    const listed = await call('GET', `${suite.gw}/v1/events?type=research.completed`, { headers: bearer(account.managementKey) });
    expect(listed.body.data.map((e: { data: { id: string } }) => e.data.id)).toEqual([ok.body.id]);
  });

  it('lists runs in cursor pages, newest first, and reads them with either key', async () => {
    const account = await funded('research-list', 10_000_000);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(String((await create(account.key, { input: `page ${i} sim:exa=run100`, model: 'exa/agent-minimal', max_cost_usd: 0.1 })).body.id));
    const first = await call('GET', `${suite.gw}/v1/research?limit=2`, { headers: bearer(account.managementKey) });
    expect(first.status).toBe(200);
    expect(first.body.data.map((r: { id: string }) => r.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.data[0]).not.toHaveProperty('output');
    const second = await call('GET', `${suite.gw}/v1/research?limit=2&cursor=${first.body.next_cursor}`, { headers: bearer(account.key) });
    expect(second.body.data.map((r: { id: string }) => r.id)).toEqual([ids[0]]);
    expect(second.body.next_cursor).toBeNull();
    for (const id of ids) await settled(account.key, id);
    const completed = await call('GET', `${suite.gw}/v1/research?status=completed`, { headers: bearer(account.key) });
    expect(completed.body.data).toHaveLength(3);
  });

  it('an Idempotency-Key makes a create safe to send again: one run, one hold', async () => {
    const account = await funded('research-idem', 10_000_000);
    const body = { input: 'once only sim:exa=run100', model: 'exa/agent-low', max_cost_usd: 1 };
    const [a, b] = await Promise.all([create(account.key, body, { 'idempotency-key': 'k-1' }), create(account.key, body, { 'idempotency-key': 'k-1' })]);
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(a.body.id).toBe(b.body.id);
    const other = await create(account.key, { ...body, max_cost_usd: 2 }, { 'idempotency-key': 'k-1' });
    expect(other.status).toBe(400);
    await settled(account.key, String(a.body.id));
    await outboxApplied(account.accountId);
    expect(await money(account.accountId)).toMatchObject({ durable: 10_000_000 - 31_250, spendable: 10_000_000 - 31_250, drift: 0, reserved: 0 });
  });

  it('50 runs created at once with a balance for 20 caps: exactly 20 accepted, the rest 402, never a negative balance', async () => {
    const account = await funded('research-race', 40_000_000);
    const answers = await Promise.all(Array.from({ length: 50 }, (_unused, i) =>
      create(account.key, { input: `race ${i} sim:exa=run4000`, model: 'exa/agent-auto', max_cost_usd: 2 })));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(20);
    expect(statuses.filter((s) => s === 402)).toHaveLength(30);
    for (const refused of answers.filter((a) => a.status === 402)) expect(refused.body.error.code).toBe('insufficient_credits');
    await outboxApplied(account.accountId);
    expect(await money(account.accountId)).toMatchObject({ durable: 0, spendable: 0, drift: 0, reserved: 0 });
    const accepted = answers.filter((a) => a.status === 202).map((a) => String(a.body.id));
    let charged = 0;
    for (const id of accepted) charged += Math.round(Number((await settled(account.key, id, 60_000)).cost_usd) * 1e6);
    await outboxApplied(account.accountId);
    const after = await money(account.accountId);
    expect(after).toMatchObject({ durable: 40_000_000 - charged, spendable: 40_000_000 - charged, drift: 0 });
    const lowest = await suite.db.query<{ m: string }>('SELECT min(balance_after_micros) AS m FROM ledger_entries WHERE account_id = $1', [account.accountId]);
    expect(Number(lowest.rows[0]?.m)).toBeGreaterThanOrEqual(0);
  });
});
