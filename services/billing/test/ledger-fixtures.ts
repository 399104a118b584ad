import { newId, newRequestId } from '@svc/ids';
import { recreateDatabase, redisUrl } from '@svc/test-kit';
import { redisKeys, SETTLEMENT_DIRTY_SET, SETTLEMENT_FIELD } from '@svc/contracts';
import type { SettledAttempt, SettlementRecord } from '@svc/contracts';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { migrateBillingDatabase } from '../src/db/migrate';
import { createBillingDatabase } from '../src/db/prisma.repository';
import type { BillingDatabase, PrismaClient } from '../src/db/prisma.repository';
import { Transactions } from '../src/db/transactions';
import { LedgerAppendRepository } from '../src/stores/ledger-append.repository';
import type { AppendOutcome, EntryToWrite } from '../src/stores/ledger-append.repository';
import { LedgerRepository } from '../src/stores/ledger.repository';
import { EventsRepository } from '../src/stores/events.repository';
import { ThresholdsRepository } from '../src/stores/thresholds.repository';
import type { ThresholdStores } from '../src/services/outbound-webhooks/key-limit-thresholds';

/**
 * The ledger-append port as the tests use it: the drain's settlement write, and `appendEntry`,
 * one entry in a transaction of its own (as a grant without an audit entry is written).
 */
export class TestLedgerAppend extends LedgerAppendRepository {
  private readonly transactions: Transactions;

  constructor(database: Pick<BillingDatabase, 'prisma' | 'pool'>) {
    super(database.pool);
    this.transactions = new Transactions(database.prisma);
  }

  appendEntry(entry: EntryToWrite): Promise<AppendOutcome> {
    return this.transactions.run((tx) => this.append(tx, entry));
  }
}

/** The stores the threshold checks write (a transaction, the thresholds' tables, the events). */
export function thresholdStores(prisma: PrismaClient): ThresholdStores {
  return { transactions: new Transactions(prisma), thresholds: new ThresholdsRepository(prisma), events: new EventsRepository(prisma) };
}

/** Redis database of the ledger suites (they run serially; each flushes it first). */
export const LEDGER_REDIS_DB = 8;
export const LEDGER_REDIS_URL = redisUrl(LEDGER_REDIS_DB);

export async function freshLedgerDatabase(suite: string): Promise<string> {
  return migratedBillingDatabase(`svc_billing_test_ledger_${suite}`);
}

/** The database `name` dropped and created again, migrated to billing's schema; its URL. */
export async function migratedBillingDatabase(name: string): Promise<string> {
  const url = await recreateDatabase(name);
  await migrateBillingDatabase(url);
  return url;
}

/** A settlement record as the gateway builds it: a failed attempt, then a success. */
export function settlementRecord(accountId: string, chargedMicros: number, overrides: Partial<SettlementRecord> = {}): SettlementRecord {
  const attempts: SettledAttempt[] = [
    { index: 0, model: 'exa/fast', provider: 'exa', source: 'platform', status: 'error', error: 'provider answered 500', reservedMicros: 9_000, chargedMicros: 0, timedOut: false, results: 0 },
    { index: 1, model: 'brave/web', provider: 'brave', source: 'platform', status: 'success', error: null, reservedMicros: chargedMicros + 1_000, chargedMicros, timedOut: false, results: 10 },
  ];
  return { v: 1, requestId: newRequestId(), accountId, keyId: newId('apiKey'), settledAtMs: Date.now(), attempts, chargedMicros, ...overrides };
}

/** Appends the records to the account's stream and marks it dirty, as the gateway's settle step does. */
export async function enqueue(redis: Redis, records: readonly SettlementRecord[], { markDirty = true } = {}): Promise<void> {
  const pipeline = redis.pipeline();
  for (const record of records) pipeline.xadd(redisKeys.settlementStream(record.accountId), '*', SETTLEMENT_FIELD, JSON.stringify(record));
  if (markDirty) for (const accountId of new Set(records.map((r) => r.accountId))) pipeline.sadd(SETTLEMENT_DIRTY_SET, accountId);
  const results = await pipeline.exec();
  for (const [error] of results ?? []) if (error !== null) throw error;
}

export async function streamLength(redis: Redis, accountId: string): Promise<number> {
  return redis.xlen(redisKeys.settlementStream(accountId));
}

export interface LedgerTotals {
  settlements: number;
  usageEvents: number;
  charges: number;
  chargedSum: number;
  balance: number;
  totalSpent: number;
}

/** What Postgres holds for the account (sums as exact numbers). */
export async function ledgerTotals(db: Client, accountId: string): Promise<LedgerTotals> {
  const one = async (sql: string): Promise<number> => {
    const result = await db.query<{ n: string | null }>(sql, [accountId]);
    return Number(result.rows[0]?.n ?? 0);
  };
  return {
    settlements: await one('SELECT count(*)::text AS n FROM settlements WHERE account_id = $1'),
    usageEvents: await one('SELECT count(*)::text AS n FROM usage_events WHERE account_id = $1'),
    charges: await one(`SELECT count(*)::text AS n FROM ledger_entries WHERE account_id = $1 AND kind = 'search_charge'`),
    chargedSum: await one(`SELECT (-coalesce(sum(amount_micros), 0))::text AS n FROM ledger_entries WHERE account_id = $1 AND kind = 'search_charge'`),
    balance: await one('SELECT balance_micros::text AS n FROM account_balances WHERE account_id = $1'),
    totalSpent: await one('SELECT total_spent_micros::text AS n FROM account_balances WHERE account_id = $1'),
  };
}

export function newRedis(): Redis {
  return new Redis(LEDGER_REDIS_URL, { maxRetriesPerRequest: 2 });
}

/** A suite's stores: its migrated billing database (Prisma, pool, the ledger's reads and its append port, a plain pg client) and its Redis, flushed. */
export interface LedgerStores {
  redis: Redis;
  database: BillingDatabase;
  prisma: PrismaClient;
  repository: LedgerRepository;
  append: TestLedgerAppend;
  db: Client;
  close(): Promise<void>;
}

export async function openLedgerStores(databaseUrl: string, redis: Redis): Promise<LedgerStores> {
  await redis.flushdb();
  const database = createBillingDatabase(databaseUrl, () => undefined);
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  return {
    redis, database, db, prisma: database.prisma, repository: new LedgerRepository(database.prisma), append: new TestLedgerAppend(database),
    async close() {
      await database.close();
      await db.end();
      await redis.quit();
    },
  };
}
