import { RESERVATION_TTL_GRACE_MS, redisKeys } from '@svc/contracts';
import { newId, newRequestId } from '@svc/ids';
import type { Micros } from '@svc/money';
import { freePort, recreateDatabase, redisUrl, repoRoot } from '@svc/test-kit';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import pino from 'pino';
import { createLogger, startBilling } from '../src/app/app';
import type { RunningBilling } from '../src/app/app';
import { BacklogService } from '../src/services/backlog/backlog.service';
import { parseBillingConfig } from '../src/config';
import { migrateBillingDatabase } from '../src/db/migrate';
import { ReconciliationJob } from '../src/services/reconciliation/reconciliation-job';
import { ReconciliationRedisAdapter } from '../src/services/reconciliation/reconciliation-redis.adapter';
import type { SpendableSnapshot } from '../src/services/reconciliation/reconciliation-redis.adapter';
import { ReconciliationRepository } from '../src/stores/reconciliation.repository';
import { REPORT_ONLY, ReconciliationService } from '../src/services/reconciliation/reconciliation.service';
import type { AccountReport } from '../src/services/reconciliation/reconciliation.service';
import { RESERVATION_PASS_WITHIN_MS, ReservationWalk } from '../src/services/reconciliation/reservation-walk';
import { LedgerDrainService } from '../src/services/settlement/ledger-drain.service';
import { SettlementStreamAdapter } from '../src/services/settlement/settlement-stream.adapter';
import { SpendableBalanceAdapter } from '../src/services/spendable/spendable-balance.adapter';
import { SpendableOutboxService } from '../src/services/spendable/spendable-outbox.service';
import { FakeAccountAdmin } from './billing-harness';
import { enqueue, settlementRecord, openLedgerStores, migratedBillingDatabase } from './ledger-fixtures';
import type { LedgerStores } from './ledger-fixtures';

const REDIS_DB = 13;
const OPERATOR_TOKEN = 'operator-token-for-recon-tests';
const STALE_AFTER_MS = 60_000;
const logger = pino({ level: 'silent' });
const REPAIR_ALL = { releaseStale: true, correctDrift: true };

let outbox: SpendableOutboxService;
let service: ReconciliationService;
let stores: LedgerStores;

beforeAll(async () => {
  const url = await migratedBillingDatabase('svc_billing_test_recon_int');
  stores = await openLedgerStores(url, new Redis(redisUrl(REDIS_DB)));
  outbox = new SpendableOutboxService(stores.repository, new SpendableBalanceAdapter(stores.redis), logger);
  service = new ReconciliationService(new ReconciliationRepository(stores.prisma), new ReconciliationRedisAdapter(stores.redis), logger, STALE_AFTER_MS);
}, 60_000);

afterAll(() => stores.close());

/** An account with a durable grant already applied to its spendable balance. */
async function fundedAccount(amountMicros: Micros): Promise<string> {
  const accountId = newId('account');
  await stores.repository.ensureBalance(accountId);
  const outcome = await stores.append.appendEntry({ accountId, kind: 'grant', amountMicros, reason: 'test', idempotencyKey: null, requestId: null });
  if (outcome.kind !== 'created') throw new Error('grant not created');
  await outbox.applyEntry(outcome.entry);
  return accountId;
}

/** What the gateway's reserve script does: bal -> reserved, held in the rsv hash with its lifetime. */
async function reserve(accountId: string, requestId: string, amount: Micros, ttlMs: number): Promise<string> {
  const key = `${redisKeys.accountTag(accountId)}:rsv:${requestId}`;
  await stores.redis.multi()
    .decrby(redisKeys.accountBalance(accountId), amount)
    .incrby(redisKeys.accountReserved(accountId), amount)
    .hset(key, '0', String(amount))
    .pexpire(key, ttlMs)
    .exec();
  return key;
}

/** What the gateway's settle script does: charge `charged` of what is held, refund the rest, append the record. */
async function settle(accountId: string, held: Micros, charged: Micros): Promise<void> {
  const requestId = newRequestId();
  await reserve(accountId, requestId, held, RESERVATION_TTL_GRACE_MS + 30_000);
  await stores.redis.multi()
    .incrby(redisKeys.accountBalance(accountId), held - charged)
    .decrby(redisKeys.accountReserved(accountId), held)
    .del(`${redisKeys.accountTag(accountId)}:rsv:${requestId}`)
    .exec();
  await enqueue(stores.redis, [settlementRecord(accountId, charged, { requestId })]);
}

describe('reconciliation: durable vs spendable, per account, under the account lock', () => {
  it('reports zero drift for a consistent account with a reservation open and charges pending', async () => {
    const accountId = await fundedAccount(5_000_000);
    await settle(accountId, 20_000, 12_000);
    await settle(accountId, 9_000, 0);
    await reserve(accountId, newRequestId(), 7_000, RESERVATION_TTL_GRACE_MS + 30_000);

    const report = await service.reconcileAccount(accountId, REPORT_ONLY);

    expect(report).toMatchObject({
      durableMicros: 5_000_000, spendableMicros: 5_000_000 - 12_000 - 7_000, reservedMicros: 7_000,
      pendingMicros: 12_000, pendingRecords: 2, unappliedMicros: 0, driftMicros: 0, repairs: [], staleReservations: [],
    });
  });

  it('reports an injected drift without repairing it by default, corrects it on repair after two equal reads, then reads zero', async () => {
    const accountId = await fundedAccount(1_000_000);
    await stores.redis.incrby(redisKeys.accountBalance(accountId), 1_234);

    const reported = await service.reconcileAccount(accountId, REPORT_ONLY);
    expect(reported.driftMicros).toBe(-1_234);
    expect(reported.repairs).toEqual([]);
    expect(await stores.redis.get(redisKeys.accountBalance(accountId))).toBe(String(1_001_234));

    const repaired = await service.reconcileAccount(accountId, REPAIR_ALL);
    expect(repaired.repairs).toEqual([{ kind: 'drift_corrected', amountMicros: -1_234, balanceAfterMicros: 1_000_000 }]);
    expect(await stores.redis.get(redisKeys.accountBalance(accountId))).toBe('1000000');
    expect((await service.reconcileAccount(accountId, REPORT_ONLY)).driftMicros).toBe(0);
  });

  it('does not correct a drift that changes between the two reads', async () => {
    const accountId = await fundedAccount(1_000_000);
    await stores.redis.incrby(redisKeys.accountBalance(accountId), 500);
    // Real Redis; the seam only adds 100 more to bal right after the first read.
    let reads = 0;
    class ShiftingAdapter extends ReconciliationRedisAdapter {
      override async readSpendable(id: string, entryIds: readonly string[]): Promise<SpendableSnapshot> {
        const snapshot = await super.readSpendable(id, entryIds);
        reads += 1;
        if (reads === 1) await stores.redis.incrby(redisKeys.accountBalance(id), 100);
        return snapshot;
      }
    }
    const shifting = new ReconciliationService(new ReconciliationRepository(stores.prisma), new ShiftingAdapter(stores.redis), logger, STALE_AFTER_MS);

    const report = await shifting.reconcileAccount(accountId, REPAIR_ALL);

    expect(report.driftMicros).toBe(-600);
    expect(report.repairs).toEqual([]);
    expect(report.driftNote).toMatch(/changed between two reads/);
    expect(await stores.redis.get(redisKeys.accountBalance(accountId))).toBe('1000600');
  });

  it('lists a reservation past its bound as stale, releases it on repair (back to spendable), and leaves a live one alone', async () => {
    const accountId = await fundedAccount(1_000_000);
    const staleRequest = newRequestId();
    const staleKey = await reserve(accountId, staleRequest, 40_000, RESERVATION_TTL_GRACE_MS - STALE_AFTER_MS - 10_000);
    const liveKey = await reserve(accountId, newRequestId(), 15_000, RESERVATION_TTL_GRACE_MS + 20_000);

    const reported = await service.reconcileAccount(accountId, REPORT_ONLY);
    expect(reported.driftMicros).toBe(0);
    expect(reported.staleReservations).toEqual([expect.objectContaining({ requestId: staleRequest, heldMicros: 40_000 })]);
    expect(await stores.redis.exists(staleKey)).toBe(1);

    const repaired = await service.reconcileAccount(accountId, { releaseStale: true, correctDrift: false });
    expect(repaired.repairs).toEqual([{ kind: 'stale_reservation_released', requestId: staleRequest, amountMicros: 40_000 }]);
    expect(repaired).toMatchObject({ spendableMicros: 1_000_000 - 15_000, reservedMicros: 15_000, driftMicros: 0 });
    expect(await stores.redis.exists(staleKey)).toBe(0);
    expect(await stores.redis.exists(liveKey)).toBe(1);
  });

  it('the periodic job finds a stale reservation by a SCAN bounded per run that goes on at the next (decision 0036)', async () => {
    // Keys standing in for the result cache's entries: the keyspace the walk must cross.
    const filler = Array.from({ length: 30_000 }, (_, i) => `svc:cache:{recon${i}}:e`);
    for (let start = 0; start < filler.length; start += 5_000) await stores.redis.mset(...filler.slice(start, start + 5_000).flatMap((key) => [key, '1']));
    try {
      const accountId = await fundedAccount(1_000_000);
      const staleKey = await reserve(accountId, newRequestId(), 40_000, RESERVATION_TTL_GRACE_MS - STALE_AFTER_MS - 10_000);
      const adapter = new ReconciliationRedisAdapter(stores.redis);
      const scans = jest.spyOn(stores.redis, 'scan');
      // Runs a minute apart: a pass may take 20 of them, so each makes 2 SCAN calls.
      const job = new ReconciliationJob(service, logger, { releaseStale: true, correctDrift: false }, 100, new ReservationWalk(adapter, 2_000, 60_000));
      let runs = 0;
      while (job.counters.stale_released_total === 0) {
        const before = scans.mock.calls.length;
        await job.run();
        runs += 1;
        expect(scans.mock.calls.length - before).toBeLessThanOrEqual(2);
        if (runs > 40) throw new Error('the stale reservation was never found');
      }
      scans.mockRestore();
      expect(await stores.redis.exists(staleKey)).toBe(0);
      expect(await service.reconcileAccount(accountId, REPORT_ONLY)).toMatchObject({ spendableMicros: 1_000_000, reservedMicros: 0, driftMicros: 0 });

      // Runs 20 minutes apart: one run walks the whole keyspace.
      const other = await fundedAccount(1_000_000);
      await reserve(other, newRequestId(), 7_000, RESERVATION_TTL_GRACE_MS - STALE_AFTER_MS - 10_000);
      const once = new ReconciliationJob(service, logger, { releaseStale: true, correctDrift: false }, 100, new ReservationWalk(adapter, 2_000, RESERVATION_PASS_WITHIN_MS));
      expect((await once.run()).stale_released_total).toBe(1);
      expect(await service.reconcileAccount(other, REPORT_ONLY)).toMatchObject({ spendableMicros: 1_000_000, reservedMicros: 0 });
    } finally {
      for (let start = 0; start < filler.length; start += 5_000) await stores.redis.unlink(...filler.slice(start, start + 5_000));
    }
  });

  it('counts a grant not yet applied to the spendable balance (and not once its applied marker is set)', async () => {
    const accountId = await fundedAccount(1_000_000);
    const outcome = await stores.append.appendEntry({ accountId, kind: 'grant', amountMicros: 250_000, reason: 'later', idempotencyKey: null, requestId: null });
    if (outcome.kind !== 'created') throw new Error('grant not created');

    expect(await service.reconcileAccount(accountId, REPORT_ONLY)).toMatchObject({ durableMicros: 1_250_000, unappliedMicros: 250_000, driftMicros: 0 });
    // Applied in Redis, column not marked yet (the outbox's crash window): still consistent.
    await new SpendableBalanceAdapter(stores.redis).applyOnce(accountId, outcome.entry.id, 250_000);
    expect(await service.reconcileAccount(accountId, REPORT_ONLY)).toMatchObject({ unappliedMicros: 0, spendableMicros: 1_250_000, driftMicros: 0 });
  });

  it('keeps zero drift in every report while the drain moves 1,000 pending records into Postgres', async () => {
    const accountId = await fundedAccount(100_000_000);
    let charged = 0;
    for (let i = 0; i < 1_000; i += 1) {
      const charge = 1_000 + (i % 7) * 333;
      charged += charge;
      await settle(accountId, charge + 500, charge);
    }
    const drain = new LedgerDrainService(new SettlementStreamAdapter(stores.redis), stores.append, logger, { batchSize: 25, maxBatchesPerAccount: 1 });
    let draining = true;
    const reports: AccountReport[] = [];
    const loop = (async (): Promise<void> => {
      while (draining) reports.push(await service.reconcileAccount(accountId, REPORT_ONLY));
    })();
    for (;;) {
      const result = await drain.drain();
      if (result.written === 0 && (await stores.redis.xlen(redisKeys.settlementStream(accountId))) === 0) break;
    }
    draining = false;
    await loop;
    const final = await service.reconcileAccount(accountId, REPORT_ONLY);

    expect(reports.length).toBeGreaterThan(1);
    expect(reports.map((r) => r.driftMicros).filter((d) => d !== 0)).toEqual([]);
    expect(reports.some((r) => r.pendingRecords > 0 && r.pendingRecords < 1_000)).toBe(true);
    expect(final).toMatchObject({ durableMicros: 100_000_000 - charged, pendingRecords: 0, pendingMicros: 0, driftMicros: 0 });
  }, 120_000);
});

describe('settlement backlog', () => {
  it('counts pending records and accounts, the oldest record age and the drain rate', async () => {
    await stores.redis.flushdb();
    const backlog = new BacklogService(stores.redis);
    expect(await backlog.measure()).toMatchObject({ pendingRecords: 0, pendingAccounts: 0, oldestPendingAgeMs: 0, estimatedDrainMs: 0 });
    const a = newId('account');
    const b = newId('account');
    await enqueue(stores.redis, [settlementRecord(a, 1), settlementRecord(a, 2), settlementRecord(b, 3)]);
    // A third account's dirty mark lost: the backlog counts its stream once a sweep found it (decision 0036).
    await enqueue(stores.redis, [settlementRecord(newId('account'), 4)], { markDirty: false });
    expect(await backlog.measure()).toMatchObject({ pendingRecords: 3, pendingAccounts: 2 });
    const streams = new SettlementStreamAdapter(stores.redis);
    await streams.markDirty((await streams.sweepStep(100_000)).accounts);

    const measured = await backlog.measure();
    expect(measured).toMatchObject({ pendingRecords: 4, pendingAccounts: 3, drainRatePerS: 0, estimatedDrainMs: null });
    expect(measured.oldestPendingAgeMs).toBeGreaterThanOrEqual(0);

    const key = `svc:settle:drained:${Math.floor(Date.now() / 1000) - 2}`;
    await stores.redis.set(key, '40');
    const withRate = await backlog.measure();
    expect(withRate.drainRatePerS).toBe(4);
    expect(withRate.estimatedDrainMs).toBe(1_000);
  });
});

describe('operator routes', () => {
  let billing: RunningBilling;
  let accountAdmin: FakeAccountAdmin;
  const op = (path: string, init: RequestInit = {}): Promise<Response> =>
    fetch(`${billing.operatorUrl}${path}`, { ...init, headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });

  beforeAll(async () => {
    accountAdmin = await FakeAccountAdmin.start();
    const url = await recreateDatabase('svc_billing_test_recon_http');
    await migrateBillingDatabase(url);
    const config = parseBillingConfig({
      PORT: String(await freePort()), OPERATOR_PORT: String(await freePort()), HOST: '127.0.0.1', DATABASE_URL: url,
      REDIS_URL: redisUrl(REDIS_DB), INTERNAL_TOKEN: 'internal-token-for-recon-tests', OPERATOR_TOKEN,
      ACCOUNT_ADMIN_GRPC_URL: accountAdmin.address, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    });
    billing = await startBilling(config, createLogger(config.LOG_LEVEL));
  }, 60_000);

  afterAll(async () => {
    await billing.close();
    await accountAdmin.stop();
  });

  it('GET /operator/reconciliation reports without repairing; POST .../repair corrects; paging and bad queries', async () => {
    const created = await fetch(`${billing.operatorUrl}/operator/accounts`, {
      method: 'POST', headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' }, body: '{}',
    });
    const { account_id: accountId } = (await created.json()) as { account_id: string };
    await fetch(`${billing.operatorUrl}/operator/accounts/${accountId}/grants`, {
      method: 'POST', headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ amount_usd: 2.5, reason: 'test' }),
    });
    await stores.redis.decrby(redisKeys.accountBalance(accountId), 10_000);

    const report = await op(`/operator/reconciliation?account_id=${accountId}`);
    expect(report.status).toBe(200);
    const body = (await report.json()) as { data: Record<string, unknown>[]; next_cursor: string | null };
    expect(body.data).toEqual([expect.objectContaining({
      account_id: accountId, durable_usd: 2.5, spendable_usd: 2.49, reserved_usd: 0, pending_usd: 0, unapplied_usd: 0, drift_usd: 0.01, repairs: [],
    })]);

    const repaired = await op(`/operator/reconciliation/repair?account_id=${accountId}`, { method: 'POST' });
    expect(repaired.status).toBe(200);
    expect(((await repaired.json()) as { data: { repairs: unknown[] }[] }).data[0]?.repairs).toEqual([{ kind: 'drift_corrected', amount_usd: 0.01, spendable_after_usd: 2.5 }]);

    const page = (await (await op('/operator/reconciliation?limit=1')).json()) as { data: { drift_usd: number }[]; next_cursor: string | null };
    expect(page.data).toEqual([expect.objectContaining({ drift_usd: 0 })]);
    expect(page.next_cursor).toBeNull();

    expect((await op('/operator/reconciliation?limit=0')).status).toBe(400);
    expect((await op('/operator/reconciliation?account_id=nope')).status).toBe(400);
    expect((await op('/operator/reconciliation?repair=true')).status).toBe(400);
    expect((await op(`/operator/reconciliation?account_id=${newId('account')}`)).status).toBe(404);
    expect((await fetch(`${billing.operatorUrl}/operator/reconciliation`)).status).toBe(401);
  });

  it('GET /operator/ledger/backlog reports the pending settlement records', async () => {
    await enqueue(stores.redis, [settlementRecord(newId('account'), 5), settlementRecord(newId('account'), 6)]);
    const response = await op('/operator/ledger/backlog');
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ pending_records: expect.any(Number), pending_accounts: expect.any(Number), drain_rate_per_s: expect.any(Number) });
    const body = (await (await op('/operator/ledger/backlog')).json()) as { pending_records: number };
    expect(body.pending_records).toBeGreaterThanOrEqual(2);
  });

  it('the CLI reconcile command reports, and repairs with --repair', async () => {
    const run = async (...args: string[]): Promise<{ data: { account_id: string; drift_usd: number; repairs: unknown[] }[] }> => {
      const { stdout } = await promisify(execFile)(process.execPath, [join(repoRoot(), 'services/billing/dist/cli/admin-cli.js'), 'reconcile', ...args], {
        env: { ...process.env, OPERATOR_URL: billing.operatorUrl, OPERATOR_TOKEN },
      });
      return JSON.parse(stdout) as { data: { account_id: string; drift_usd: number; repairs: unknown[] }[] };
    };
    const page = await run();
    const accountId = page.data[0]?.account_id ?? '';
    await stores.redis.incrby(redisKeys.accountBalance(accountId), 3);
    expect((await run('--account', accountId)).data[0]).toMatchObject({ drift_usd: -0.000003, repairs: [] });
    expect((await run('--account', accountId, '--repair')).data[0]?.repairs).toEqual([{ kind: 'drift_corrected', amount_usd: -0.000003, spendable_after_usd: 2.5 }]);
    expect((await run('--account', accountId)).data[0]).toMatchObject({ drift_usd: 0 });
  });
});
