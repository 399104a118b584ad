import { databaseUrl } from '@svc/test-kit';
import { newId } from '@svc/ids';
import type { SettlementRecord } from '@svc/contracts';
import { createBillingDatabase } from '../src/db/prisma.repository';
import type { BillingDatabase } from '../src/db/prisma.repository';
import { call, errorOf, expectInvalidRequest } from './billing-harness';
import { settlementRecord, TestLedgerAppend } from './ledger-fixtures';
import { asKey, newAccount, startStripeHarness } from './stripe-harness';
import type { StripeHarness } from './stripe-harness';

let h: StripeHarness;
let database: BillingDatabase;
let accountId: string;
const keyA = newId('apiKey');
const keyB = newId('apiKey');
const DAY = 86_400_000;
const today = new Date(new Date().toISOString().slice(0, 10) + 'T12:00:00Z').getTime();
const dayText = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** A search with a failed exa/fast attempt then a brave/web success, or a timed-out exa/deep attempt only. */
function search(keyId: string, settledAtMs: number, charged: number, timedOut = false): SettlementRecord {
  if (!timedOut) return settlementRecord(accountId, charged, { keyId, settledAtMs });
  return settlementRecord(accountId, charged, {
    keyId, settledAtMs,
    attempts: [{ index: 0, model: 'exa/deep', provider: 'exa', source: 'platform', status: 'error', error: 'timed out', reservedMicros: charged, chargedMicros: charged, timedOut: true, results: 0 }],
  });
}

beforeAll(async () => {
  h = await startStripeHarness('usage');
  const row = await h.db.query<{ url: string }>('SELECT current_database() AS url');
  database = createBillingDatabase(databaseUrl(row.rows[0]?.url ?? ''), () => undefined);
  accountId = await newAccount(h);
  const ledger = new TestLedgerAppend(database);
  // The ledger worker's own write path: settlements, usage events and search_charge entries.
  await ledger.writeSettlements(accountId, [
    search(keyA, today, 6_000), search(keyA, today, 6_000), search(keyB, today, 9_000),
    search(keyA, today - DAY, 6_000), search(keyB, today - 2 * DAY, 15_000, true),
    search(keyA, today - 40 * DAY, 6_000),
    // An extract (POST /v1/extract): two models, each answering one URL (long ago: outside the other tests' ranges).
    settlementRecord(accountId, 11_250, {
      keyId: keyB, settledAtMs: today - 80 * DAY, kind: 'extract',
      attempts: [
        { index: 0, model: 'exa/contents', provider: 'exa', source: 'platform', status: 'success', error: '2 of 3 URLs could not be fetched', reservedMicros: 3_750, chargedMicros: 1_250, timedOut: false, results: 1 },
        { index: 1, model: 'tavily/extract', provider: 'tavily', source: 'platform', status: 'success', error: null, reservedMicros: 10_000, chargedMicros: 10_000, timedOut: false, results: 1 },
      ],
    }),
  ]);
}, 60_000);

afterAll(async () => {
  await database.close();
  await h.close();
});

async function usage(query: string, kind: 'api' | 'management' = 'management', keyId?: string) {
  return call(`${h.billing.publicUrl}/v1/usage${query}`, { headers: asKey(accountId, kind, keyId) });
}

async function ledgerCharged(from: number, toExclusive: number, keyId?: string): Promise<number> {
  const rows = await h.db.query<{ s: string | null }>(
    `SELECT (-sum(e.amount_micros))::text AS s FROM ledger_entries e JOIN settlements s ON s.request_id = e.idempotency_key
     WHERE e.account_id = $1 AND e.kind = 'search_charge' AND s.settled_at >= $2 AND s.settled_at < $3 AND ($4::text IS NULL OR s.key_id = $4)`,
    [accountId, new Date(from), new Date(toExclusive), keyId ?? null]);
  return Number(rows.rows[0]?.s ?? 0);
}

describe('GET /v1/usage', () => {
  it('defaults to the last 30 days by day, and its totals equal the ledger', async () => {
    const response = await usage('');
    expect(response.status).toBe(200);
    const start = Date.parse(dayText(today - 29 * DAY));
    expect(response.body).toMatchObject({ from: dayText(start), to: dayText(today) });
    expect(response.body.data).toEqual([
      { date: dayText(today - 2 * DAY), searches: 1, failed_attempts: 1, cost_usd: 0.015, byok_fee_usd: 0, cache_hits: 0, cache_saved_usd: 0 },
      { date: dayText(today - DAY), searches: 1, failed_attempts: 1, cost_usd: 0.006, byok_fee_usd: 0, cache_hits: 0, cache_saved_usd: 0 },
      { date: dayText(today), searches: 3, failed_attempts: 3, cost_usd: 0.021, byok_fee_usd: 0, cache_hits: 0, cache_saved_usd: 0 },
    ]);
    expect(response.body.total).toEqual({ searches: 5, cost_usd: 0.042, byok_fee_usd: 0, cache_hits: 0, cache_saved_usd: 0 });
    expect((response.body.total as { cost_usd: number }).cost_usd * 1_000_000).toBe(await ledgerCharged(start, Date.parse(dayText(today)) + DAY));
  });

  it('groups by model (a search counts for the model that answered) and by key, with the same totals', async () => {
    const byModel = await usage('?group_by=model');
    expect(byModel.body.data).toEqual([
      { model: 'brave/web', searches: 4, failed_attempts: 0, cost_usd: 0.027, byok_fee_usd: 0, cache_hits: 0, cache_saved_usd: 0 },
      { model: 'exa/deep', searches: 1, failed_attempts: 1, cost_usd: 0.015, byok_fee_usd: 0, cache_hits: 0, cache_saved_usd: 0 },
      { model: 'exa/fast', searches: 0, failed_attempts: 4, cost_usd: 0, byok_fee_usd: 0, cache_hits: 0, cache_saved_usd: 0 },
    ]);
    const byKey = await usage('?group_by=key');
    expect(byKey.body.data).toEqual(expect.arrayContaining([
      { key_id: keyA, searches: 3, failed_attempts: 3, cost_usd: 0.018, byok_fee_usd: 0, cache_hits: 0, cache_saved_usd: 0 },
      { key_id: keyB, searches: 2, failed_attempts: 2, cost_usd: 0.024, byok_fee_usd: 0, cache_hits: 0, cache_saved_usd: 0 },
    ]));
    expect(byModel.body.total).toEqual({ searches: 5, cost_usd: 0.042, byok_fee_usd: 0, cache_hits: 0, cache_saved_usd: 0 });
    expect(byKey.body.total).toEqual(byModel.body.total);
  });

  it('groups by kind: searches and extracts each with their requests and cost, the same total as by day and the ledger', async () => {
    const range = `?from=${dayText(today - 80 * DAY)}&to=${dayText(today)}`;
    const byKind = await usage(`${range}&group_by=kind`);
    expect(byKind.status).toBe(200);
    expect(byKind.body.data).toEqual([
      { kind: 'extract', searches: 1, failed_attempts: 0, cost_usd: 0.01125, byok_fee_usd: 0, cache_hits: 0, cache_saved_usd: 0 },
      { kind: 'search', searches: 6, failed_attempts: 6, cost_usd: 0.048, byok_fee_usd: 0, cache_hits: 0, cache_saved_usd: 0 },
    ]);
    const byDay = await usage(range);
    expect(byKind.body.total).toEqual(byDay.body.total);
    expect(byKind.body.total).toEqual({ searches: 7, cost_usd: 0.05925, byok_fee_usd: 0, cache_hits: 0, cache_saved_usd: 0 });
    expect(Math.round((byKind.body.total as { cost_usd: number }).cost_usd * 1_000_000)).toBe(await ledgerCharged(Date.parse(dayText(today - 80 * DAY)), Date.parse(dayText(today)) + DAY));
  });

  it('takes from/to as inclusive UTC days', async () => {
    const response = await usage(`?from=${dayText(today - 40 * DAY)}&to=${dayText(today - DAY)}`);
    expect(response.body.total).toEqual({ searches: 3, cost_usd: 0.027, byok_fee_usd: 0, cache_hits: 0, cache_saved_usd: 0 });
    expect((response.body.total as { cost_usd: number }).cost_usd * 1_000_000).toBe(await ledgerCharged(Date.parse(dayText(today - 40 * DAY)), Date.parse(dayText(today))));
  });

  it('shows an API key only its own usage, and a management key one key with key_id', async () => {
    const own = await usage('', 'api', keyA);
    expect(own.body.total).toEqual({ searches: 2 + 1, cost_usd: 0.018, byok_fee_usd: 0, cache_hits: 0, cache_saved_usd: 0 });
    const filtered = await usage(`?key_id=${keyB}`);
    expect(filtered.body.total).toEqual({ searches: 2, cost_usd: 0.024, byok_fee_usd: 0, cache_hits: 0, cache_saved_usd: 0 });
    const other = await usage(`?key_id=${keyB}`, 'api', keyA);
    expect(other.status).toBe(404);
    expect(errorOf(other).code).toBe('not_found');
  });

  it.each([
    ['a bad date', '?from=2026-02-30', 'from must be a date'],
    ['a date in another format', '?to=20260101', 'to must be a date'],
    ['from after to', '?from=2026-03-02&to=2026-03-01', 'is after'],
    ['a range over 366 days', '?from=2024-01-01&to=2025-12-31', 'at most 366 days'],
    ['an unknown group_by', '?group_by=week', 'group_by must be one of'],
    ['a malformed key_id', '?key_id=mkey_x', 'key_id must be'],
    ['an unknown parameter', '?limit=5', 'unknown query parameter'],
  ])('rejects %s as 400 invalid_request', async (_what, query, message) => {
    const response = await usage(query);
    expectInvalidRequest(response, message);
  });
});
