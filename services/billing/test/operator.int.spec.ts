import { call, errorOf, operatorHeaders, OPERATOR_TOKEN, startHarness, expectInvalidRequest } from './billing-harness';
import type { Harness } from './billing-harness';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('operator');
}, 60_000);

afterAll(async () => {
  await h.close();
});

async function createAccount(): Promise<string> {
  const response = await call(`${h.billing.operatorUrl}/operator/accounts`, { method: 'POST', headers: operatorHeaders(), body: JSON.stringify({}) });
  expect(response.status).toBe(201);
  return response.body.account_id as string;
}

function grant(accountId: string, body: unknown, extra: Record<string, string> = {}) {
  return call(`${h.billing.operatorUrl}/operator/accounts/${accountId}/grants`, {
    method: 'POST',
    headers: operatorHeaders(extra),
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function ledgerSum(accountId: string): Promise<{ balance: string; sum: string; count: number }> {
  const result = await h.db.query<{ balance: string; sum: string; count: string }>(
    `SELECT b.balance_micros::text AS balance,
            COALESCE((SELECT SUM(amount_micros) FROM ledger_entries e WHERE e.account_id = b.account_id), 0)::text AS sum,
            (SELECT COUNT(*) FROM ledger_entries e WHERE e.account_id = b.account_id)::text AS count
     FROM account_balances b WHERE b.account_id = $1`,
    [accountId],
  );
  const row = result.rows[0];
  if (row === undefined) throw new Error('no balance row');
  return { balance: row.balance, sum: row.sum, count: Number(row.count) };
}

describe('operator authentication', () => {
  it.each([
    ['no Authorization header', {}],
    ['a wrong token', { authorization: 'Bearer operator-token-that-is-wrong!' }],
    ['the token without Bearer', { authorization: OPERATOR_TOKEN }],
  ])('rejects %s with 401 invalid_api_key and creates nothing', async (_what, headers) => {
    const before = h.accountAdmin.accounts.size;
    const response = await call(`${h.billing.operatorUrl}/operator/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: '{}',
    });
    expect(response.status).toBe(401);
    expect(errorOf(response).code).toBe('invalid_api_key');
    expect(errorOf(response).request_id).toBe(response.headers.get('x-svc-request-id'));
    expect(h.accountAdmin.accounts.size).toBe(before);
  });

  it('guards the ledger read too', async () => {
    const response = await call(`${h.billing.operatorUrl}/operator/accounts/acct_000000000000000000000000/ledger`);
    expect(response.status).toBe(401);
  });

  it('is not reachable on the public listener', async () => {
    const response = await call(`${h.billing.publicUrl}/operator/accounts`, { method: 'POST', headers: operatorHeaders(), body: '{}' });
    expect(response.status).toBe(404);
    expect(errorOf(response).code).toBe('not_found');
  });
});

describe('accounts and grants', () => {
  it('creates an account through account-admin and a zero balance row', async () => {
    const response = await call(`${h.billing.operatorUrl}/operator/accounts`, {
      method: 'POST',
      headers: operatorHeaders(),
      body: JSON.stringify({ email: 'ops@example.com', name: 'Ops' }),
    });
    expect(response.status).toBe(201);
    const accountId = response.body.account_id as string;
    expect(accountId).toMatch(/^acct_/);
    expect(h.accountAdmin.accounts.get(accountId)?.email).toBe('ops@example.com');
    const row = await h.db.query('SELECT balance_micros::text AS b FROM account_balances WHERE account_id = $1', [accountId]);
    expect(row.rows).toEqual([{ b: '0' }]);
  });

  it('a grant writes one entry whose balance_after is the new balance, and the balance equals the sum of entries', async () => {
    const accountId = await createAccount();
    const first = await grant(accountId, { amount_usd: 10.5, reason: 'welcome credit' });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^led_/),
      account_id: accountId,
      kind: 'grant',
      amount_usd: 10.5,
      balance_after_usd: 10.5,
      reason: 'welcome credit',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      request_id: first.headers.get('x-svc-request-id'),
    });
    const second = await grant(accountId, { amount_usd: 0.000001, reason: 'one micro' });
    expect(second.body.balance_after_usd).toBe(10.500001);
    expect(await ledgerSum(accountId)).toEqual({ balance: '10500001', sum: '10500001', count: 2 });
  });

  it('a repeated grant with the same Idempotency-Key returns the first entry and moves nothing', async () => {
    const accountId = await createAccount();
    const headers = { 'idempotency-key': 'grant-once-123' };
    const first = await grant(accountId, { amount_usd: 7, reason: 'refund ticket 42' }, headers);
    const again = await grant(accountId, { amount_usd: 7, reason: 'refund ticket 42' }, headers);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect({ ...again.body, request_id: null }).toEqual({ ...first.body, request_id: null });
    expect(again.body.id).toEqual(expect.stringMatching(/^led_/));
    expect(await ledgerSum(accountId)).toEqual({ balance: '7000000', sum: '7000000', count: 1 });

    const different = await grant(accountId, { amount_usd: 8, reason: 'refund ticket 42' }, headers);
    expectInvalidRequest(different);
    expect(await ledgerSum(accountId)).toEqual({ balance: '7000000', sum: '7000000', count: 1 });
  });

  it('10 concurrent repeats of one Idempotency-Key make exactly one entry', async () => {
    const accountId = await createAccount();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => grant(accountId, { amount_usd: 3, reason: 'burst' }, { 'idempotency-key': 'same-key' })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(responses.map((r) => r.body.id)).size).toBe(1);
    expect(await ledgerSum(accountId)).toEqual({ balance: '3000000', sum: '3000000', count: 1 });
  });

  it('20 concurrent grants to one account end with the exact sum and a gap-free chain of balance_after', async () => {
    const accountId = await createAccount();
    const amounts = Array.from({ length: 20 }, (_, i) => (i + 1) * 0.000123 + 1);
    const responses = await Promise.all(amounts.map((amount) => grant(accountId, { amount_usd: Number(amount.toFixed(6)), reason: 'concurrent' })));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(201));
    const expectedMicros = amounts.reduce((sum, amount) => sum + Math.round(Number(amount.toFixed(6)) * 1e6), 0);
    expect(await ledgerSum(accountId)).toEqual({ balance: String(expectedMicros), sum: String(expectedMicros), count: 20 });
    // Every entry's balance_after is the running sum in created_at order.
    const rows = await h.db.query<{ amount: string; after: string }>(
      'SELECT amount_micros::text AS amount, balance_after_micros::text AS after FROM ledger_entries WHERE account_id = $1 ORDER BY created_at, id',
      [accountId],
    );
    let running = 0;
    for (const row of rows.rows) {
      running += Number(row.amount);
      expect(Number(row.after)).toBe(running);
    }
  });

  it('creates the balance row lazily for an account made elsewhere (dashboard signup)', async () => {
    const accountId = h.accountAdmin.addAccount();
    const response = await grant(accountId, { amount_usd: 1, reason: 'signup bonus' });
    expect(response.status).toBe(201);
    expect(response.body.balance_after_usd).toBe(1);
  });

  it('an account unknown to account-admin is 404 not_found for grants and ledger, and writes nothing', async () => {
    const unknown = 'acct_AAAAAAAAAAAAAAAAAAAAAAAA';
    const response = await grant(unknown, { amount_usd: 1, reason: 'x' });
    expect(response.status).toBe(404);
    expect(errorOf(response).code).toBe('not_found');
    const ledger = await call(`${h.billing.operatorUrl}/operator/accounts/${unknown}/ledger`, { headers: operatorHeaders() });
    expect(ledger.status).toBe(404);
    const malformed = await grant('not-an-account', { amount_usd: 1, reason: 'x' });
    expect(malformed.status).toBe(404);
    const rows = await h.db.query('SELECT 1 FROM account_balances WHERE account_id = $1', [unknown]);
    expect(rows.rowCount).toBe(0);
  });
});

describe('grant validation', () => {
  let accountId: string;
  beforeAll(async () => {
    accountId = await createAccount();
  });

  it.each([
    ['an unknown field', { amount_usd: 1, reason: 'x', note: 'y' }, 'note'],
    ['amount 0', { amount_usd: 0, reason: 'x' }, 'amount_usd'],
    ['a negative amount', { amount_usd: -5, reason: 'x' }, 'amount_usd'],
    ['7 decimals', { amount_usd: 1.1234567, reason: 'x' }, 'decimals'],
    ['an amount over 1,000,000', { amount_usd: 1_000_000.5, reason: 'x' }, 'amount_usd'],
    ['an amount given as a string', { amount_usd: '5', reason: 'x' }, 'amount_usd'],
    ['no reason', { amount_usd: 1 }, 'reason'],
    ['an empty reason', { amount_usd: 1, reason: '  ' }, 'reason'],
    ['a reason over 500 characters', { amount_usd: 1, reason: 'r'.repeat(501) }, 'reason'],
    ['an array body', [1, 2], 'JSON object'],
    ['a non-JSON body', 'amount_usd=5', 'JSON'],
  ])('rejects %s with 400 invalid_request naming the problem, and moves nothing', async (_what, body, named) => {
    const response = await grant(accountId, body);
    expectInvalidRequest(response, named);
    expect(await ledgerSum(accountId)).toEqual({ balance: '0', sum: '0', count: 0 });
  });

  it('rejects a form-encoded body and a text body with 400 invalid_request', async () => {
    for (const contentType of ['application/x-www-form-urlencoded', 'text/plain']) {
      const response = await call(`${h.billing.operatorUrl}/operator/accounts/${accountId}/grants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': contentType },
        body: 'amount_usd=5&reason=x',
      });
      expectInvalidRequest(response);
    }
  });

  it('accepts exactly 1,000,000 and 6 decimals', async () => {
    const response = await grant(accountId, { amount_usd: 1_000_000, reason: 'max' });
    expect(response.status).toBe(201);
    const small = await grant(accountId, { amount_usd: 0.123456, reason: 'six decimals' });
    expect(small.body.balance_after_usd).toBe(1_000_000.123456);
  });

  it('rejects a bad Idempotency-Key header', async () => {
    const response = await grant(accountId, { amount_usd: 1, reason: 'x' }, { 'idempotency-key': 'k'.repeat(256) });
    expect(response.status).toBe(400);
    expect(errorOf(response).message).toContain('Idempotency-Key');
  });

  it('rejects an unknown field when creating an account', async () => {
    const response = await call(`${h.billing.operatorUrl}/operator/accounts`, { method: 'POST', headers: operatorHeaders(), body: JSON.stringify({ plan: 'pro' }) });
    expect(response.status).toBe(400);
    expect(errorOf(response).message).toContain('plan');
  });
});

describe('the ledger list', () => {
  let accountId: string;
  beforeAll(async () => {
    accountId = await createAccount();
    for (let i = 1; i <= 5; i += 1) {
      const response = await grant(accountId, { amount_usd: i, reason: `grant ${i}` });
      expect(response.status).toBe(201);
    }
  });

  function ledger(query = '') {
    return call(`${h.billing.operatorUrl}/operator/accounts/${accountId}/ledger${query}`, { headers: operatorHeaders() });
  }

  it('lists entries newest first with their running balance', async () => {
    const response = await ledger();
    expect(response.status).toBe(200);
    const data = response.body.data as { reason: string; balance_after_usd: number }[];
    expect(data.map((e) => e.reason)).toEqual(['grant 5', 'grant 4', 'grant 3', 'grant 2', 'grant 1']);
    expect(data.map((e) => e.balance_after_usd)).toEqual([15, 10, 6, 3, 1]);
    expect(response.body.next_cursor).toBeNull();
  });

  it('pages with limit and an opaque cursor, without gaps or repeats', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const response: Awaited<ReturnType<typeof ledger>> = await ledger(`?limit=2${cursor === null ? '' : `&cursor=${cursor}`}`);
      expect(response.status).toBe(200);
      const data = response.body.data as { reason: string }[];
      expect(data.length).toBeLessThanOrEqual(2);
      seen.push(...data.map((e) => e.reason));
      cursor = response.body.next_cursor as string | null;
      pages += 1;
    } while (cursor !== null && pages < 10);
    expect(seen).toEqual(['grant 5', 'grant 4', 'grant 3', 'grant 2', 'grant 1']);
    expect(pages).toBe(3);
  });

  it('an account with a balance row and no entries lists nothing', async () => {
    const empty = await createAccount();
    const response = await call(`${h.billing.operatorUrl}/operator/accounts/${empty}/ledger`, { headers: operatorHeaders() });
    expect(response.body).toMatchObject({ data: [], next_cursor: null });
  });

  it.each([['?limit=0'], ['?limit=101'], ['?limit=abc'], ['?limit=2.5'], ['?cursor=garbage'], ['?cursor=bDEubGVkX0FBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE'], ['?limit=1&limit=2'], ['?page=2']])(
    'rejects %s with 400 invalid_request',
    async (query) => {
      const response = await ledger(query);
      expectInvalidRequest(response);
    },
  );
});

describe('routing on the operator listener', () => {
  it('answers an unknown path with 404 and a wrong method with 405 and Allow', async () => {
    const unknown = await call(`${h.billing.operatorUrl}/operator/nothing`, { headers: operatorHeaders() });
    expect(unknown.status).toBe(404);
    expect(errorOf(unknown).request_id).toBe(unknown.headers.get('x-svc-request-id'));
    const wrong = await call(`${h.billing.operatorUrl}/operator/accounts`, { method: 'DELETE', headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toContain('POST');
  });

  it('serves healthz and readyz', async () => {
    expect((await call(`${h.billing.operatorUrl}/healthz`)).status).toBe(200);
    const ready = await call(`${h.billing.operatorUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toEqual({ postgres: true, redis: true });
  });
});
