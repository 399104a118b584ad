import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newId, newRequestId } from '@svc/ids';
import { applyMigrations } from '@svc/pg-migrate';
import { recreateDatabase } from '@svc/test-kit';
import { Client } from 'pg';
import { migrateBillingDatabase, MIGRATIONS_DIR } from '../src/db/migrate';
import { createBillingDatabase } from '../src/db/prisma.repository';
import type { BillingDatabase } from '../src/db/prisma.repository';
import { KeyLimitThresholds } from '../src/services/outbound-webhooks/key-limit-thresholds';
import type { KeyLimit, KeyLimitSource } from '../src/services/outbound-webhooks/key-limit-thresholds';
import { migratedBillingDatabase, settlementRecord, TestLedgerAppend, thresholdStores } from './ledger-fixtures';

/**
 * Key spend by UTC day and the queue of keys to check (docs/decisions/0035), on real
 * PostgreSQL: the trigger on settlements against the settlements themselves, through the
 * drain's own write (LedgerAppendRepository.writeSettlements), redelivery, concurrent writers, the
 * migration's backfill, and the threshold check reading them.
 */
let url: string;
let db: BillingDatabase;
let pg: Client;
let ledger: TestLedgerAppend;

beforeAll(async () => {
  url = await migratedBillingDatabase('svc_billing_test_key_spend');
  db = createBillingDatabase(url, () => undefined);
  pg = new Client({ connectionString: url });
  await pg.connect();
  ledger = new TestLedgerAppend(db);
}, 60_000);

afterAll(async () => {
  await pg?.end();
  await db?.close();
});

/** key_spend_days and what the settlements themselves sum to per key and UTC day, both sorted. */
async function spendAgainstSettlements(accountId: string): Promise<{ days: unknown[]; settled: unknown[] }> {
  const days = await pg.query(`SELECT key_id, day::text AS day, spent_micros::text AS spent FROM key_spend_days WHERE account_id = $1 ORDER BY 1, 2`, [accountId]);
  const settled = await pg.query(
    `SELECT key_id, (settled_at AT TIME ZONE 'UTC')::date::text AS day, sum(charged_micros)::text AS spent FROM settlements
     WHERE account_id = $1 GROUP BY 1, 2 ORDER BY 1, 2`, [accountId]);
  return { days: days.rows, settled: settled.rows };
}

async function queued(keyId: string): Promise<number | null> {
  const row = await pg.query<{ version: string }>('SELECT version::text FROM key_limit_checks WHERE key_id = $1', [keyId]);
  return row.rows[0] === undefined ? null : Number(row.rows[0].version);
}

describe('key_spend_days', () => {
  it('holds each key\'s charges per UTC day, split at UTC midnight, and a redelivered batch adds nothing', async () => {
    const accountId = newId('account');
    const [a, b] = [newId('apiKey'), newId('apiKey')];
    const midnight = Date.UTC(2026, 10, 27);
    const records = [
      settlementRecord(accountId, 1_000, { keyId: a, settledAtMs: midnight - 1 }),
      settlementRecord(accountId, 2_000, { keyId: a, settledAtMs: midnight }),
      settlementRecord(accountId, 3_000, { keyId: a, settledAtMs: midnight + 5 }),
      settlementRecord(accountId, 4_000, { keyId: b, settledAtMs: midnight - 1 }),
      settlementRecord(accountId, 0, { keyId: b, settledAtMs: midnight + 1 }),
    ];
    await ledger.writeSettlements(accountId, records);
    // The same records again (a redelivery), and again with one new one among them.
    await ledger.writeSettlements(accountId, records);
    await ledger.writeSettlements(accountId, [...records, settlementRecord(accountId, 500, { keyId: b, settledAtMs: midnight + 2 })]);
    const { days, settled } = await spendAgainstSettlements(accountId);
    expect(days).toEqual(settled);
    const spent = new Map((days as { key_id: string; day: string; spent: string }[]).map((d) => [`${d.key_id} ${d.day}`, d.spent]));
    expect(spent).toEqual(new Map([[`${a} 2026-11-26`, '1000'], [`${a} 2026-11-27`, '5000'], [`${b} 2026-11-26`, '4000'], [`${b} 2026-11-27`, '500']]));
  });

  it('counts settlements written by any statement, not only the drain\'s (a worker of another build, an operator)', async () => {
    const accountId = newId('account');
    const keyId = newId('apiKey');
    await pg.query(
      `INSERT INTO settlements (request_id, account_id, key_id, charged_micros, attempt_count, settled_at)
       VALUES ($1, $3, $4, 1200, 1, '2026-11-20T10:00:00Z'), ($2, $3, $4, 800, 1, '2026-11-20T23:59:59Z')`,
      [newRequestId(), newRequestId(), accountId, keyId]);
    expect((await spendAgainstSettlements(accountId)).days).toEqual([{ key_id: keyId, day: '2026-11-20', spent: '2000' }]);
    expect(await queued(keyId)).toBe(1);
  });

  it('stays equal to the settlements under concurrent writers of several accounts sharing days', async () => {
    const accounts = [newId('account'), newId('account'), newId('account')];
    const keys = new Map(accounts.map((account) => [account, [newId('apiKey'), newId('apiKey')]]));
    const writers = accounts.flatMap((accountId) => Array.from({ length: 6 }, (_, w) => (async () => {
      for (let batch = 0; batch < 5; batch++) {
        const records = Array.from({ length: 20 }, (_, i) => settlementRecord(accountId, 1 + ((w * 7 + batch * 3 + i) % 11) * 100, {
          keyId: keys.get(accountId)?.[i % 2] ?? '', settledAtMs: Date.UTC(2026, 10, 27) + ((i * 37 + batch) % 3 - 1) * 3_600_000,
        }));
        // Each batch is written twice, at once: one of the two inserts nothing.
        await Promise.all([ledger.writeSettlements(accountId, records), ledger.writeSettlements(accountId, records)]);
      }
    })()));
    await Promise.all(writers);
    for (const accountId of accounts) {
      const { days, settled } = await spendAgainstSettlements(accountId);
      expect(days).toEqual(settled);
      expect(settled.length).toBe(4);
    }
  });
});

describe('key_limit_checks', () => {
  it('queues a key when it settles and moves its version on every insert, not on a redelivery', async () => {
    const accountId = newId('account');
    const keyId = newId('apiKey');
    expect(await queued(keyId)).toBeNull();
    const record = settlementRecord(accountId, 1_000, { keyId });
    await ledger.writeSettlements(accountId, [record]);
    expect(await queued(keyId)).toBe(1);
    await ledger.writeSettlements(accountId, [record]);
    expect(await queued(keyId)).toBe(1);
    await ledger.writeSettlements(accountId, [settlementRecord(accountId, 0, { keyId })]);
    expect(await queued(keyId)).toBe(2);
  });
});

/** Limits by key id, as account-admin's GetKeyLimits answers; `during` runs inside each call. */
class Limits implements KeyLimitSource {
  readonly limits = new Map<string, KeyLimit>();
  asked: string[][] = [];
  during: (() => Promise<void>) | null = null;
  async limitsOf(keyIds: readonly string[]): Promise<KeyLimit[]> {
    this.asked.push([...keyIds]);
    const during = this.during;
    this.during = null;
    if (during !== null) await during();
    return keyIds.flatMap((id) => this.limits.get(id) ?? []);
  }
  close(): void {}
}

describe('the key limit check', () => {
  const notices = async (keyId: string): Promise<unknown[]> =>
    (await pg.query('SELECT percent, period_start FROM key_limit_notices WHERE key_id = $1 ORDER BY percent', [keyId])).rows;

  it('sums only the days of the key\'s current period, and empties the queue of what it checked', async () => {
    const accountId = newId('account');
    const keyId = newId('apiKey');
    const limits = new Limits();
    limits.limits.set(keyId, { keyId, accountId, limitMicros: 10_000, limitReset: 'daily' });
    const thresholds = new KeyLimitThresholds(thresholdStores(db.prisma), limits);
    const now = Date.UTC(2026, 10, 27, 12);
    // 9,000 yesterday and 7,900 today: a daily limit of 10,000 is not at 80 %.
    await ledger.writeSettlements(accountId, [
      settlementRecord(accountId, 9_000, { keyId, settledAtMs: Date.UTC(2026, 10, 26, 23, 59, 59, 999) }),
      settlementRecord(accountId, 7_900, { keyId, settledAtMs: Date.UTC(2026, 10, 27) }),
    ]);
    expect(await thresholds.evaluate(now)).toBe(0);
    expect(await queued(keyId)).toBeNull();
    // Nothing settled: nothing is asked of account-admin.
    limits.asked = [];
    expect(await thresholds.evaluate(now)).toBe(0);
    expect(limits.asked).toEqual([]);
    await ledger.writeSettlements(accountId, [settlementRecord(accountId, 100, { keyId, settledAtMs: now })]);
    expect(await thresholds.evaluate(now)).toBe(1);
    expect(await notices(keyId)).toEqual([{ percent: 80, period_start: new Date(Date.UTC(2026, 10, 27)) }]);
    // Tomorrow's first settlement starts a new period: 100 is far from 80 %.
    await ledger.writeSettlements(accountId, [settlementRecord(accountId, 100, { keyId, settledAtMs: Date.UTC(2026, 10, 28, 0, 0, 1) })]);
    expect(await thresholds.evaluate(Date.UTC(2026, 10, 28, 0, 0, 2))).toBe(0);
  });

  it('checks again a key whose spend landed while it was being checked (the queue row is deleted only at the version read)', async () => {
    const accountId = newId('account');
    const keyId = newId('apiKey');
    const limits = new Limits();
    limits.limits.set(keyId, { keyId, accountId, limitMicros: 10_000, limitReset: null });
    const thresholds = new KeyLimitThresholds(thresholdStores(db.prisma), limits);
    await ledger.writeSettlements(accountId, [settlementRecord(accountId, 7_000, { keyId })]);
    // A drain commits 3,000 more after the queue was read (while account-admin is asked): the
    // key stays queued, and the next evaluation sends what the spend reached.
    limits.during = async () => {
      await ledger.writeSettlements(accountId, [settlementRecord(accountId, 3_000, { keyId })]);
    };
    const first = await thresholds.evaluate();
    expect(await queued(keyId)).toBe(2);
    const second = await thresholds.evaluate();
    expect(first + second).toBe(2);
    expect((await notices(keyId)).map((n) => (n as { percent: number }).percent)).toEqual([80, 100]);
    expect(await queued(keyId)).toBeNull();
  });

  it('leaves the queue as it was when account-admin does not answer, and walks a queue longer than one batch', async () => {
    const accountId = newId('account');
    const keyIds = Array.from({ length: 1_203 }, () => newId('apiKey'));
    await ledger.writeSettlements(accountId, keyIds.map((keyId) => settlementRecord(accountId, 1, { keyId })));
    const failing: KeyLimitSource = { limitsOf: () => Promise.reject(new Error('unavailable')), close: () => undefined };
    await expect(new KeyLimitThresholds(thresholdStores(db.prisma), failing).evaluate()).rejects.toThrow('unavailable');
    const count = async (): Promise<number> => Number((await pg.query('SELECT count(*) FROM key_limit_checks WHERE account_id = $1', [accountId])).rows[0]?.count);
    expect(await count()).toBe(keyIds.length);
    const limits = new Limits();
    limits.limits.set(keyIds[1_202] ?? '', { keyId: keyIds[1_202] ?? '', accountId, limitMicros: 1, limitReset: null });
    expect(await new KeyLimitThresholds(thresholdStores(db.prisma), limits).evaluate()).toBe(2);
    expect(limits.asked.length).toBeGreaterThanOrEqual(2);
    expect(new Set(limits.asked.flat()).size).toBeGreaterThanOrEqual(keyIds.length);
    expect(await count()).toBe(0);
  });
});

describe('the migration', () => {
  it('fills key_spend_days from the settlements already written and queues the keys of the last 10 minutes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'billing-migrations-'));
    try {
      for (const name of readdirSync(MIGRATIONS_DIR)) {
        if (name.startsWith('2026112900000') && name.endsWith('_key_spend_days')) continue;
        cpSync(join(MIGRATIONS_DIR, name), join(dir, name), { recursive: true });
      }
      const before = await recreateDatabase('svc_billing_test_key_spend_migration');
      await applyMigrations(before, dir);
      const old = createBillingDatabase(before, () => undefined);
      const client = new Client({ connectionString: before });
      await client.connect();
      try {
        const accountId = newId('account');
        const [recent, stale] = [newId('apiKey'), newId('apiKey')];
        await new TestLedgerAppend(old).writeSettlements(accountId, [
          settlementRecord(accountId, 1_500, { keyId: recent, settledAtMs: Date.UTC(2026, 10, 1, 10) }),
          settlementRecord(accountId, 2_500, { keyId: recent, settledAtMs: Date.UTC(2026, 10, 1, 23) }),
          settlementRecord(accountId, 700, { keyId: stale, settledAtMs: Date.UTC(2026, 9, 31, 23) }),
        ]);
        await client.query(`UPDATE settlements SET created_at = now() - interval '1 hour' WHERE key_id = $1`, [stale]);
        await migrateBillingDatabase(before);
        const days = await client.query(`SELECT key_id, day::text AS day, spent_micros::text AS spent FROM key_spend_days ORDER BY spent_micros`);
        expect(days.rows).toEqual([{ key_id: stale, day: '2026-10-31', spent: '700' }, { key_id: recent, day: '2026-11-01', spent: '4000' }]);
        expect((await client.query('SELECT key_id FROM key_limit_checks')).rows).toEqual([{ key_id: recent }]);
      } finally {
        await client.end();
        await old.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
