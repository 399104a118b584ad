import { newId } from '@svc/ids';
import { redisKeys, SETTLEMENT_DIRTY_SET, SETTLEMENT_FIELD } from '@svc/contracts';
import { databaseUrl } from '@svc/test-kit';
import type { Redis } from 'ioredis';
import { Client } from 'pg';
import pino from 'pino';
import { createBillingDatabase } from '../src/db/prisma.repository';
import type { BillingDatabase, PrismaClient } from '../src/db/prisma.repository';
import { HistoryRepository } from '../src/stores/history.repository';
import type { LedgerRepository } from '../src/stores/ledger.repository';
import { LedgerDrainService } from '../src/services/settlement/ledger-drain.service';
import { SETTLEMENT_DEAD_LETTER_STREAM, SettlementStreamAdapter } from '../src/services/settlement/settlement-stream.adapter';
import { enqueue, freshLedgerDatabase, ledgerTotals, newRedis, settlementRecord, streamLength, openLedgerStores, TestLedgerAppend } from './ledger-fixtures';
import type { LedgerStores } from './ledger-fixtures';

const logger = pino({ level: 'silent' });
let redis: Redis;
let database: BillingDatabase;
let prisma: PrismaClient;
let db: Client;
let drain: LedgerDrainService;
let repository: LedgerRepository;
let append: TestLedgerAppend;
let stores: LedgerStores;

function drainService(on: BillingDatabase, batchSize = 500): LedgerDrainService {
  return new LedgerDrainService(new SettlementStreamAdapter(redis), new TestLedgerAppend(on), logger, { batchSize });
}

beforeAll(async () => {
  stores = await openLedgerStores(await freshLedgerDatabase('drain'), newRedis());
  ({ redis, database, prisma, repository, append, db } = stores);
  drain = drainService(database, 3);
}, 60_000);

afterAll(() => stores.close());

describe('ledger drain: settlement records from the streams into Postgres', () => {
  it('writes each record once: settlement, usage events, one search_charge entry, durable balance and total spent', async () => {
    const accountId = newId('account');
    await repository.ensureBalance(accountId);
    await append.appendEntry({ accountId, kind: 'grant', amountMicros: 1_000_000, reason: 'test', idempotencyKey: null, requestId: null });
    const charged = [settlementRecord(accountId, 5_000), settlementRecord(accountId, 7_123), settlementRecord(accountId, 0), settlementRecord(accountId, 11)];
    await enqueue(redis, charged);

    const result = await drain.drain();

    expect(result).toMatchObject({ accounts: 1, written: 4, skipped: 0, deadLettered: 0 });
    expect(await ledgerTotals(db, accountId)).toEqual({
      settlements: 4, usageEvents: 8, charges: 3, chargedSum: 12_134, balance: 1_000_000 - 12_134, totalSpent: 12_134,
    });
    const entries = await db.query<{ request_id: string; amount_micros: string; balance_after_micros: string; idempotency_key: string }>(
      `SELECT request_id, amount_micros::text, balance_after_micros::text, idempotency_key FROM ledger_entries
       WHERE account_id = $1 AND kind = 'search_charge' ORDER BY balance_after_micros DESC`, [accountId]);
    expect(entries.rows.map((r) => [r.request_id, Number(r.amount_micros), Number(r.balance_after_micros)])).toEqual([
      [charged[0]?.requestId, -5_000, 995_000],
      [charged[1]?.requestId, -7_123, 987_877],
      [charged[3]?.requestId, -11, 987_866],
    ]);
    const usage = await db.query<{ attempt_index: number; status: string; charged_micros: string; model: string }>(
      'SELECT attempt_index, status, charged_micros::text, model FROM usage_events WHERE request_id = $1 ORDER BY attempt_index', [charged[1]?.requestId]);
    expect(usage.rows).toEqual([
      { attempt_index: 0, status: 'error', charged_micros: '0', model: 'exa/fast' },
      { attempt_index: 1, status: 'success', charged_micros: '7123', model: 'brave/web' },
    ]);
    // A batch without filters writes none (its filters array is empty: unnest pads it with NULLs).
    expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM settlements WHERE account_id = $1 AND filters IS NULL', [accountId])).rows[0]?.n).toBe(4);
    // The stream is gone once drained, and the account is no longer dirty.
    expect(await redis.exists(redisKeys.settlementStream(accountId))).toBe(0);
    expect(await redis.sismember(SETTLEMENT_DIRTY_SET, accountId)).toBe(0);
  });

  it('writes a record delivered twice once, in the same batch and in a later drain', async () => {
    const accountId = newId('account');
    const record = settlementRecord(accountId, 2_500);
    await enqueue(redis, [record, record]);
    await drain.drain();
    await enqueue(redis, [record]);
    const again = await drain.drain();

    expect(again).toMatchObject({ written: 0, skipped: 1 });
    expect(await ledgerTotals(db, accountId)).toEqual({ settlements: 1, usageEvents: 2, charges: 1, chargedSum: 2_500, balance: -2_500, totalSpent: 2_500 });
    expect(await streamLength(redis, accountId)).toBe(0);
  });

  it('fails the whole batch, writing nothing, when a search charge exists without its settlement (a broken invariant)', async () => {
    const accountId = newId('account');
    await repository.ensureBalance(accountId);
    const orphan = settlementRecord(accountId, 4_000);
    const other = settlementRecord(accountId, 1_000);
    // Only the drain writes search_charge entries, and only with their settlement row: this one is planted.
    await db.query(
      `INSERT INTO ledger_entries (id, account_id, kind, amount_micros, balance_after_micros, reason, idempotency_key, request_id)
       VALUES ($1, $2, 'search_charge', -4000, -4000, NULL, $3, $3)`,
      [newId('ledgerEntry'), accountId, orphan.requestId],
    );

    await expect(append.writeSettlements(accountId, [other, orphan])).rejects.toThrow(/duplicate key/);

    expect(await ledgerTotals(db, accountId)).toEqual({ settlements: 0, usageEvents: 0, charges: 1, chargedSum: 4_000, balance: 0, totalSpent: 0 });
  });

  it('writes the rest of a batch that holds one record already written', async () => {
    const accountId = newId('account');
    const first = settlementRecord(accountId, 100);
    await enqueue(redis, [first]);
    await drain.drain();
    const later = [settlementRecord(accountId, 200), settlementRecord(accountId, 300)];
    await enqueue(redis, [later[0] ?? first, first, later[1] ?? first]);

    const result = await drain.drain();

    expect(result).toMatchObject({ written: 2, skipped: 1 });
    expect(await ledgerTotals(db, accountId)).toEqual({ settlements: 3, usageEvents: 6, charges: 3, chargedSum: 600, balance: -600, totalSpent: 600 });
  });

  it('drains a stream longer than one batch completely', async () => {
    const accountId = newId('account');
    const records = Array.from({ length: 10 }, (_, i) => settlementRecord(accountId, 1_000 + i));
    await enqueue(redis, records);
    await drain.drain();
    expect(await ledgerTotals(db, accountId)).toMatchObject({ settlements: 10, charges: 10, chargedSum: 10_045 });
    expect(await streamLength(redis, accountId)).toBe(0);
  });

  it("writes ledger entries whose ids sort as they were written, byte-wise in PostgreSQL (decision 0034: the drain's inserts go to the right edge of the id index)", async () => {
    const accountId = newId('account');
    const records = Array.from({ length: 12 }, (_, i) => settlementRecord(accountId, 100 + i));
    // Three drains of three-record batches, a few milliseconds apart, so the ids span several milliseconds.
    for (const part of [records.slice(0, 4), records.slice(4, 8), records.slice(8)]) {
      await enqueue(redis, part);
      await drain.drain();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const written = await db.query<{ id: string }>(
      "SELECT id FROM ledger_entries WHERE account_id = $1 AND kind = 'search_charge' ORDER BY created_at, id", [accountId]);
    const byId = await db.query<{ id: string }>(
      `SELECT id FROM ledger_entries WHERE account_id = $1 AND kind = 'search_charge' ORDER BY id COLLATE "C"`, [accountId]);
    expect(written.rows).toHaveLength(12);
    // Ids of one millisecond may sort either way among themselves; their times never go back.
    const times = (rows: { id: string }[]): string[] => rows.map((row) => row.id.slice('led_'.length, 'led_'.length + 9));
    expect(times(byId.rows)).toEqual(times(written.rows));
    expect(new Set(times(written.rows)).size).toBeGreaterThan(1);
  });

  it('recovers a lost dirty mark with the sweep', async () => {
    const accountId = newId('account');
    await enqueue(redis, [settlementRecord(accountId, 42)], { markDirty: false });

    await drain.drain();
    expect(await ledgerTotals(db, accountId)).toMatchObject({ settlements: 0 });

    expect(await drain.sweep()).toBe(1);
    await drain.drain();
    expect(await ledgerTotals(db, accountId)).toMatchObject({ settlements: 1, chargedSum: 42 });
    expect(await drain.sweep()).toBe(0);
  });

  it('moves an entry that cannot be billed to the dead-letter stream and writes the others', async () => {
    const accountId = newId('account');
    const good = settlementRecord(accountId, 900);
    const wrongSum = { ...settlementRecord(accountId, 900), chargedMicros: 5 };
    await enqueue(redis, [good, wrongSum]);
    await redis.xadd(redisKeys.settlementStream(accountId), '*', SETTLEMENT_FIELD, '{not json');
    const deadBefore = await redis.xlen(SETTLEMENT_DEAD_LETTER_STREAM);

    const result = await drain.drain();

    expect(result).toMatchObject({ written: 1, deadLettered: 2 });
    expect(await ledgerTotals(db, accountId)).toMatchObject({ settlements: 1, chargedSum: 900 });
    expect(await redis.xlen(SETTLEMENT_DEAD_LETTER_STREAM)).toBe(deadBefore + 2);
    expect(await streamLength(redis, accountId)).toBe(0);
  });

  it("keeps a search's filters with its settlement for the activity (NULL without), and bills a record whose filters are malformed without them", async () => {
    const accountId = newId('account');
    const filters = { include_domains: ['docs.example.com', 'example.org'], country: 'DE', language: 'de', published_after: '2025-01-31T11:00:00.000Z', published_before: '2025-03-01', safesearch: 'strict' } as const;
    const filtered = settlementRecord(accountId, 700, { filters, settledAtMs: Date.now() - 2_000 });
    const plain = settlementRecord(accountId, 800, { settledAtMs: Date.now() - 1_000 });
    // A gateway bug or a hand-written entry: not canonical (upper case, unsorted). Its charge still counts.
    const malformed = { ...settlementRecord(accountId, 900, { settledAtMs: Date.now() }), filters: { include_domains: ['B.example', 'a.example'] } };
    const deadBefore = await redis.xlen(SETTLEMENT_DEAD_LETTER_STREAM);
    await enqueue(redis, [filtered, plain, malformed as never]);

    expect(await drain.drain()).toMatchObject({ written: 3, deadLettered: 0 });
    expect(await redis.xlen(SETTLEMENT_DEAD_LETTER_STREAM)).toBe(deadBefore);
    expect(await ledgerTotals(db, accountId)).toMatchObject({ settlements: 3, chargedSum: 2_400 });
    const stored = await db.query<{ request_id: string; filters: unknown }>('SELECT request_id, filters FROM settlements WHERE account_id = $1', [accountId]);
    expect(new Map(stored.rows.map((r) => [r.request_id, r.filters]))).toEqual(new Map([[filtered.requestId, filters], [plain.requestId, null], [malformed.requestId, null]]));
    // The activity reads them back as they were sent, newest first.
    const searches = await new HistoryRepository(prisma).searches(accountId, 10, null);
    expect(searches.map((s) => [s.requestId, s.filters])).toEqual([[malformed.requestId, null], [plain.requestId, null], [filtered.requestId, filters]]);
  });

  it('keeps the request\'s kind: an extract\'s record with its settlement, usage events and charge entry; a record without one is a search; an unknown kind is dead-lettered', async () => {
    const accountId = newId('account');
    const extract = settlementRecord(accountId, 3_250, { kind: 'extract', settledAtMs: Date.now() - 1_000 });
    const search = settlementRecord(accountId, 6_000, { settledAtMs: Date.now() });
    const unknown = { ...settlementRecord(accountId, 10), kind: 'crawl' };
    const deadBefore = await redis.xlen(SETTLEMENT_DEAD_LETTER_STREAM);
    await enqueue(redis, [extract, search, unknown as never]);

    expect(await drain.drain()).toMatchObject({ written: 2, deadLettered: 1 });
    expect(await redis.xlen(SETTLEMENT_DEAD_LETTER_STREAM)).toBe(deadBefore + 1);
    const settlements = await db.query<{ request_id: string; request_kind: string }>('SELECT request_id, request_kind FROM settlements WHERE account_id = $1', [accountId]);
    expect(new Map(settlements.rows.map((r) => [r.request_id, r.request_kind]))).toEqual(new Map([[extract.requestId, 'extract'], [search.requestId, 'search']]));
    const events = await db.query<{ request_id: string; request_kind: string }>('SELECT DISTINCT request_id, request_kind FROM usage_events WHERE account_id = $1', [accountId]);
    expect(new Map(events.rows.map((r) => [r.request_id, r.request_kind]))).toEqual(new Map([[extract.requestId, 'extract'], [search.requestId, 'search']]));
    const entries = await db.query<{ request_id: string; request_kind: string; amount_micros: string }>(
      "SELECT request_id, request_kind, amount_micros::text FROM ledger_entries WHERE account_id = $1 AND kind = 'search_charge'", [accountId]);
    expect(new Map(entries.rows.map((r) => [r.request_id, [r.request_kind, Number(r.amount_micros)]]))).toEqual(new Map([
      [extract.requestId, ['extract', -3_250]], [search.requestId, ['search', -6_000]],
    ]));
    const activity = await new HistoryRepository(prisma).searches(accountId, 10, null);
    expect(activity.map((row) => [row.requestId, row.kind])).toEqual([[search.requestId, 'search'], [extract.requestId, 'extract']]);
  });

  it('removes nothing from the stream while Postgres is unavailable, and writes everything once it is back', async () => {
    const name = 'svc_billing_test_ledger_pgdown';
    const url = await freshLedgerDatabase('pgdown');
    expect(url).toBe(databaseUrl(name));
    const admin = new Client({ connectionString: databaseUrl('postgres') });
    await admin.connect();
    const down = createBillingDatabase(url, () => undefined);
    try {
      const downDrain = drainService(down, 2);
      const accountId = newId('account');
      const records = Array.from({ length: 5 }, (_, i) => settlementRecord(accountId, 10 + i));
      await enqueue(redis, records);
      // Postgres refuses this database: new connections fail, open ones are ended.
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);

      await expect(downDrain.drain()).rejects.toThrow();
      await expect(downDrain.drain()).rejects.toThrow();
      expect(await streamLength(redis, accountId)).toBe(5);
      expect(await redis.sismember(SETTLEMENT_DIRTY_SET, accountId)).toBe(1);

      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      await downDrain.drain();
      const check = new Client({ connectionString: url });
      await check.connect();
      try {
        expect(await ledgerTotals(check, accountId)).toMatchObject({ settlements: 5, charges: 5, chargedSum: 60, totalSpent: 60 });
      } finally {
        await check.end();
      }
      expect(await streamLength(redis, accountId)).toBe(0);
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      await admin.end();
      await down.close();
    }
  });
});
