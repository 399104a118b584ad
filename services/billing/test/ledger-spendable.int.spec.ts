import { newId } from '@svc/ids';
import { redisKeys } from '@svc/contracts';
import type { Redis } from 'ioredis';
import type { Client } from 'pg';
import pino from 'pino';
import type { AccountDirectory } from '../src/adapters/account-directory.adapter';
import { Transactions } from '../src/db/transactions';
import { AuditRepository } from '../src/stores/audit.repository';
import type { LedgerRepository } from '../src/stores/ledger.repository';
import { LedgerService } from '../src/services/ledger/ledger.service';
import { SpendableBalanceAdapter } from '../src/services/spendable/spendable-balance.adapter';
import { SpendableOutboxService } from '../src/services/spendable/spendable-outbox.service';
import { freshLedgerDatabase, newRedis, openLedgerStores } from './ledger-fixtures';
import type { TestLedgerAppend } from './ledger-fixtures';
import type { LedgerStores } from './ledger-fixtures';

const logger = pino({ level: 'silent' });
let redis: Redis;
let db: Client;
let repository: LedgerRepository;
let append: TestLedgerAppend;
let spendable: SpendableBalanceAdapter;
let outbox: SpendableOutboxService;
let ledger: LedgerService;
let stores: LedgerStores;

/** The account directory is another service (gRPC); here every account exists. */
const everyAccountExists: AccountDirectory = {
  accountExists: async () => true,
  createAccount: async () => ({ accountId: newId('account') }),
  close: () => undefined,
};

async function spendableOf(accountId: string): Promise<string | null> {
  return redis.get(redisKeys.accountBalance(accountId));
}

async function unapplied(accountId: string): Promise<number> {
  const result = await db.query<{ n: string }>('SELECT count(*)::text AS n FROM ledger_entries WHERE account_id = $1 AND applied_to_spendable_at IS NULL', [accountId]);
  return Number(result.rows[0]?.n ?? 0);
}

beforeAll(async () => {
  stores = await openLedgerStores(await freshLedgerDatabase('spendable'), newRedis());
  ({ redis, repository, append, db } = stores);
  spendable = new SpendableBalanceAdapter(redis);
  outbox = new SpendableOutboxService(repository, spendable, logger);
  ledger = new LedgerService({ transactions: new Transactions(stores.prisma), ledger: repository, append, audit: new AuditRepository(stores.prisma) }, everyAccountExists, outbox, spendable);
}, 60_000);

afterAll(() => stores.close());

describe('spendable balance: ledger entries reach Redis exactly once', () => {
  it('a grant moves the spendable balance once, and a repeated grant or apply does not move it again', async () => {
    const accountId = newId('account');
    const entry = await ledger.grant({ accountId, amountMicros: 5_000_000, reason: 'welcome', idempotencyKey: 'g-1', requestId: newId('request') });
    expect(await spendableOf(accountId)).toBe('5000000');
    expect(await unapplied(accountId)).toBe(0);

    await ledger.grant({ accountId, amountMicros: 5_000_000, reason: 'welcome', idempotencyKey: 'g-1', requestId: newId('request') });
    expect(await spendable.applyOnce(accountId, entry.id, entry.amountMicros)).toBe(false);
    expect(await outbox.applyEntry({ ...entry, appliedToSpendableAt: null })).toBe(false);
    expect(await outbox.applyPending()).toBe(0);
    expect(await spendableOf(accountId)).toBe('5000000');
  });

  it('a grant committed by a process that died before the apply is applied once by the outbox, however often it runs', async () => {
    const accountId = newId('account');
    await repository.ensureBalance(accountId);
    // The commit without the apply step: what a crash right after the transaction leaves.
    const committed = await append.appendEntry({ accountId, kind: 'grant', amountMicros: 2_500_000, reason: 'crash', idempotencyKey: null, requestId: null });
    expect(committed.kind).toBe('created');
    expect(await spendableOf(accountId)).toBeNull();
    expect(await unapplied(accountId)).toBe(1);

    const [first, second] = await Promise.all([outbox.applyPending(), outbox.applyPending()]);
    expect((first ?? 0) + (second ?? 0)).toBeGreaterThanOrEqual(1);
    await outbox.applyPending();
    expect(await spendableOf(accountId)).toBe('2500000');
    expect(await unapplied(accountId)).toBe(0);
  });

  it('a process that died after the Redis apply but before marking the entry does not apply it twice', async () => {
    const accountId = newId('account');
    await repository.ensureBalance(accountId);
    const committed = await append.appendEntry({ accountId, kind: 'grant', amountMicros: 700_000, reason: 'half', idempotencyKey: null, requestId: null });
    if (committed.kind !== 'created') throw new Error('expected a new entry');
    expect(await spendable.applyOnce(accountId, committed.entry.id, 700_000)).toBe(true);
    expect(await unapplied(accountId)).toBe(1);

    expect(await outbox.applyPending()).toBe(0);
    expect(await spendableOf(accountId)).toBe('700000');
    expect(await unapplied(accountId)).toBe(0);
  });

  it('search charges written by the worker are never applied to the spendable balance (the gateway moved it)', async () => {
    const accountId = newId('account');
    await append.writeSettlements(accountId, [{
      v: 1, requestId: newId('request'), accountId, keyId: newId('apiKey'), settledAtMs: Date.now(), chargedMicros: 3_000,
      attempts: [{ index: 0, model: 'brave/web', provider: 'brave', source: 'platform', status: 'success', error: null, reservedMicros: 3_000, chargedMicros: 3_000, timedOut: false, results: 3 }],
    }]);
    expect(await unapplied(accountId)).toBe(0);
    await outbox.applyPending();
    expect(await spendableOf(accountId)).toBeNull();
  });

  it('GET /v1/credits figures: balance is the spendable balance when Redis has it, else the durable one; reserved from Redis', async () => {
    const accountId = newId('account');
    await ledger.grant({ accountId, amountMicros: 10_000_000, reason: 'credits', idempotencyKey: null, requestId: newId('request') });
    // The gateway holds 40,000 for a search in flight and has settled a 25,000 charge not yet in Postgres.
    await redis.decrby(redisKeys.accountBalance(accountId), 65_000);
    await redis.set(redisKeys.accountReserved(accountId), '40000');
    expect(await ledger.creditsOf(accountId)).toEqual({ balanceMicros: 9_935_000, reservedMicros: 40_000, totalPurchasedMicros: 0, totalSpentMicros: 0 });

    await redis.del(redisKeys.accountBalance(accountId), redisKeys.accountReserved(accountId));
    expect(await ledger.creditsOf(accountId)).toEqual({ balanceMicros: 10_000_000, reservedMicros: 0, totalPurchasedMicros: 0, totalSpentMicros: 0 });
  });
});
