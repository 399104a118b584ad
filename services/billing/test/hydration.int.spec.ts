import { periodOf, recoveryKeys, redisKeys } from '@svc/contracts';
import { newId } from '@svc/ids';
import type { Micros } from '@svc/money';
import { redisUrl } from '@svc/test-kit';
import { Redis } from 'ioredis';
import pino from 'pino';
import { ConfirmingStreamAdapter } from '../src/services/hydration/confirming-stream.adapter';
import { HydrationRedisAdapter } from '../src/services/hydration/hydration-redis.adapter';
import { HydrationRepository } from '../src/stores/hydration.repository';
import { HydrationService } from '../src/services/hydration/hydration.service';
import type { LedgerEntryRecord } from '../src/db/ledger-entry-row';
import { ReconciliationRedisAdapter } from '../src/services/reconciliation/reconciliation-redis.adapter';
import { ReconciliationRepository } from '../src/stores/reconciliation.repository';
import { REPORT_ONLY, ReconciliationService } from '../src/services/reconciliation/reconciliation.service';
import { LedgerDrainService } from '../src/services/settlement/ledger-drain.service';
import { ColdAccountError, SpendableBalanceAdapter } from '../src/services/spendable/spendable-balance.adapter';
import { SpendableOutboxService } from '../src/services/spendable/spendable-outbox.service';
import { enqueue, settlementRecord, openLedgerStores, migratedBillingDatabase } from './ledger-fixtures';
import type { LedgerStores } from './ledger-fixtures';

/** Redis db 9 (shared with account-admin's key-outbox suite: every db 1..15 has an owner; this suite flushes it). */
const REDIS_DB = 9;
const logger = pino({ level: 'silent' });

let spendable: SpendableBalanceAdapter;
let outbox: SpendableOutboxService;
let recovery: HydrationRedisAdapter;
let reconciliation: ReconciliationService;
let stores: LedgerStores;

const hydrator = (graceMs: number): HydrationService => new HydrationService(new HydrationRepository(stores.prisma), recovery, logger, { graceMs });

beforeAll(async () => {
  const url = await migratedBillingDatabase('svc_billing_test_hydration_int');
  stores = await openLedgerStores(url, new Redis(redisUrl(REDIS_DB)));
  spendable = new SpendableBalanceAdapter(stores.redis);
  outbox = new SpendableOutboxService(stores.repository, spendable, logger);
  recovery = new HydrationRedisAdapter(stores.redis);
  reconciliation = new ReconciliationService(new ReconciliationRepository(stores.prisma), new ReconciliationRedisAdapter(stores.redis), logger, 60_000);
}, 60_000);

afterAll(() => stores.close());

async function grant(accountId: string, amountMicros: Micros): Promise<LedgerEntryRecord> {
  await stores.repository.ensureBalance(accountId);
  const outcome = await stores.append.appendEntry({ accountId, kind: 'grant', amountMicros, reason: 'test', idempotencyKey: null, requestId: null });
  if (outcome.kind !== 'created') throw new Error('grant not created');
  return outcome.entry;
}

async function drainAll(accountId: string): Promise<void> {
  const drain = new LedgerDrainService(new ConfirmingStreamAdapter(stores.redis, recovery), stores.append, logger, { batchSize: 100 });
  await drain.drainAccount(accountId);
}

describe('hydration: a cold account is rebuilt from the ledger exactly once', () => {
  it('rebuilds bal = durable - pending, counts an unapplied grant once, rebuilds the usage counters, and reconciles to zero', async () => {
    const accountId = newId('account');
    const keyId = newId('apiKey');
    await outbox.applyEntry(await grant(accountId, 5_000_000));
    // One search made durable before the flush, one still in the stream (re-sent by its gateway after the flush, twice).
    const durable = settlementRecord(accountId, 12_000, { keyId });
    const pending = settlementRecord(accountId, 30_000, { keyId });
    await enqueue(stores.redis, [durable]);
    await drainAll(accountId);
    expect(await stores.prisma.settlement.count({ where: { accountId } })).toBe(1);

    await stores.redis.flushdb();
    await enqueue(stores.redis, [pending, pending]);
    // A grant committed while the account is cold is not applied to a missing balance.
    const late = await grant(accountId, 700_000);
    await expect(outbox.applyEntry(late)).rejects.toBeInstanceOf(ColdAccountError);
    expect(await stores.redis.get(redisKeys.accountBalance(accountId))).toBeNull();
    expect(await stores.redis.sismember(recoveryKeys.hydrationWanted, accountId)).toBe(1);

    const outcome = await hydrator(0).hydrate(accountId);
    expect(outcome).toEqual({ kind: 'hydrated', balanceMicros: 5_700_000 - 12_000 - 30_000, pendingRecords: 1, appliedEntries: 1 });
    expect(await stores.redis.get(redisKeys.accountBalance(accountId))).toBe(String(5_700_000 - 42_000));
    expect(await stores.redis.get(redisKeys.keyTotalUsage(accountId, keyId))).toBe('42000');
    const day = periodOf('daily', Date.now()).startMs;
    expect(await stores.redis.get(redisKeys.keyPeriodUsage(accountId, keyId, 'daily', day))).toBe('42000');
    const row = await stores.prisma.ledgerEntry.findUnique({ where: { id: late.id } });
    expect(row?.appliedToSpendableAt).not.toBeNull();

    // The outbox cannot add the grant again (stale copy of the entry, marker set by hydration).
    expect(await outbox.applyEntry(late)).toBe(false);
    expect(await spendable.applyOnce(accountId, late.id, 700_000, false)).toBe(false);
    expect(await hydrator(0).hydrate(accountId)).toEqual({ kind: 'already' });
    expect(await stores.redis.get(redisKeys.accountBalance(accountId))).toBe(String(5_700_000 - 42_000));

    // (Before the drain, reconciliation counts the re-sent duplicate twice; the drain writes it once.)
    await drainAll(accountId);
    const settled = await reconciliation.reconcileAccount(accountId, REPORT_ONLY);
    expect(settled).toMatchObject({ driftMicros: 0, pendingRecords: 0, spendableMicros: 5_658_000, durableMicros: 5_658_000 });
    expect(await stores.prisma.settlement.count({ where: { accountId } })).toBe(2);
    // The drain confirmed both request ids for the gateways.
    const [seconds] = await stores.redis.time();
    const bucket = recoveryKeys.settleConfirmed(Math.floor((Number(seconds) * 1000) / 60_000));
    expect(await stores.redis.sismember(bucket, pending.requestId)).toBe(1);
  });

  it('rebuilds every key\'s day, week, month and all-time counters from settlements of many days (read as day totals)', async () => {
    const accountId = newId('account');
    const keys = [newId('apiKey'), newId('apiKey')];
    await outbox.applyEntry(await grant(accountId, 50_000_000));
    const now = Date.now();
    const DAY = 86_400_000;
    // Around every period start: the instant itself, a millisecond before, and days and weeks back.
    const instants = [now, now - 1, now - DAY, now - 3 * DAY, now - 8 * DAY, now - 20 * DAY, now - 40 * DAY, now - 400 * DAY,
      ...(['daily', 'weekly', 'monthly'] as const).flatMap((reset) => [periodOf(reset, now).startMs, periodOf(reset, now).startMs - 1])];
    const records = instants.flatMap((settledAtMs, i) => keys.map((keyId, k) => settlementRecord(accountId, 1_000 * (i + 1) + k * 7, { keyId, settledAtMs })));
    // A key that only ever settled at no charge gets no counter.
    const free = newId('apiKey');
    records.push(settlementRecord(accountId, 0, { keyId: free }));
    await enqueue(stores.redis, records);
    await drainAll(accountId);

    await stores.redis.flushdb();
    expect((await hydrator(0).hydrate(accountId)).kind).toBe('hydrated');
    for (const keyId of keys) {
      const own = records.filter((r) => r.keyId === keyId);
      const since = (start: number): string => String(own.filter((r) => r.settledAtMs >= start).reduce((sum, r) => sum + r.chargedMicros, 0));
      expect(await stores.redis.get(redisKeys.keyTotalUsage(accountId, keyId))).toBe(since(0));
      for (const reset of ['daily', 'weekly', 'monthly'] as const) {
        const { startMs } = periodOf(reset, now);
        expect(await stores.redis.get(redisKeys.keyPeriodUsage(accountId, keyId, reset, startMs))).toBe(since(startMs));
      }
    }
    expect(await stores.redis.get(redisKeys.keyTotalUsage(accountId, free))).toBeNull();
  });

  it('waits out the grace period after the flush for an account with history, and never for one without', async () => {
    await stores.redis.flushdb();
    const withHistory = newId('account');
    const entry = await grant(withHistory, 1_000_000);
    await stores.prisma.ledgerEntry.update({ where: { id: entry.id }, data: { appliedToSpendableAt: new Date() } });
    const outcome = await hydrator(60_000).hydrate(withHistory);
    expect(outcome.kind).toBe('wait');
    expect(await stores.redis.get(redisKeys.accountBalance(withHistory))).toBeNull();

    const fresh = newId('account');
    expect(await hydrator(60_000).hydrate(fresh)).toMatchObject({ kind: 'hydrated', balanceMicros: 0 });
    expect(await stores.redis.get(redisKeys.accountBalance(fresh))).toBe('0');
    // The first grant of an account with no other money creates its balance at once.
    const first = newId('account');
    await outbox.applyEntry(await grant(first, 250_000));
    expect(await stores.redis.get(redisKeys.accountBalance(first))).toBe('250000');
  });

  it('writes nothing when the stream changed between the read and the write', async () => {
    const accountId = newId('account');
    await grant(accountId, 1_000_000);
    const cold = await recovery.readCold(accountId);
    await enqueue(stores.redis, [settlementRecord(accountId, 5_000)]);
    expect(await recovery.writeHydrated(accountId, cold.lastId, 1_000_000, [], [], 60)).toBe('changed');
    expect(await stores.redis.get(redisKeys.accountBalance(accountId))).toBeNull();
    expect(await hydrator(0).hydrate(accountId)).toMatchObject({ kind: 'hydrated', balanceMicros: 995_000 });
  });
});
