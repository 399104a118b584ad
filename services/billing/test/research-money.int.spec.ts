import { findResearchModel, redisKeys } from '@svc/contracts';
import type { KeyFacts, ResearchModelSpec, ResearchProvider } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { newId } from '@svc/ids';
import type { Redis } from 'ioredis';
import pino from 'pino';
import type { PollOutcome, ProviderRunState, ResearchProviderApi, StartOutcome } from '../src/adapters/research/research-provider';
import { Transactions } from '../src/db/transactions';
import { ReconciliationRedisAdapter } from '../src/services/reconciliation/reconciliation-redis.adapter';
import { REPORT_ONLY, ReconciliationService } from '../src/services/reconciliation/reconciliation.service';
import { ResearchQueueAdapter } from '../src/services/research/research-queue.adapter';
import { ResearchRunner } from '../src/services/research/research-runner';
import { ResearchService } from '../src/services/research/research.service';
import { ResearchSpendableAdapter } from '../src/services/spendable/research-spendable.adapter';
import { SpendableBalanceAdapter } from '../src/services/spendable/spendable-balance.adapter';
import { SpendableOutboxService } from '../src/services/spendable/spendable-outbox.service';
import { EventsRepository } from '../src/stores/events.repository';
import { FinanceRepository } from '../src/stores/finance.repository';
import { ReconciliationRepository } from '../src/stores/reconciliation.repository';
import { ResearchRepository } from '../src/stores/research.repository';
import { freshLedgerDatabase, newRedis, openLedgerStores } from './ledger-fixtures';
import type { LedgerStores } from './ledger-fixtures';

/**
 * A research run's money on the real PostgreSQL and Redis (docs/decisions/0062): billing's
 * creation (the hold in Redis, then the run and its research_hold entry, applied once), the
 * runner's steps against scripted providers (outside parties: their real requests are the
 * contract suite's), and reconciliation's equation read at every state a run passes through.
 */
const logger = pino({ level: 'silent' });
let stores: LedgerStores;
let redis: Redis;
let money: ResearchSpendableAdapter;
let outbox: SpendableOutboxService;
let service: ResearchService;
let runner: ResearchRunner;
let recon: ReconciliationService;
let queue: ResearchQueueAdapter;
let finance: FinanceRepository;

/** A provider whose every run answers what the test sets for it, by its provider run id. */
class ScriptedProvider implements ResearchProviderApi {
  readonly runs = new Map<string, ProviderRunState>();
  starts = 0;
  nextStart: StartOutcome | null = null;
  constructor(readonly provider: ResearchProvider) {}
  async start(): Promise<StartOutcome> {
    this.starts += 1;
    const outcome = this.nextStart ?? { kind: 'started', providerRunId: `${this.provider}-${this.starts}` };
    this.nextStart = null;
    if (outcome.kind === 'started') this.runs.set(outcome.providerRunId, { kind: 'running' });
    return outcome;
  }
  async poll(id: string): Promise<PollOutcome> {
    return { kind: 'state', state: this.runs.get(id) ?? { kind: 'running' } };
  }
  async cancel(id: string, _model: ResearchModelSpec): Promise<PollOutcome | null> {
    if (this.provider === 'tavily') return null;
    this.runs.set(id, { kind: 'cancelled', error: 'cancelled', cost: null });
    return this.poll(id);
  }
}
const exa = new ScriptedProvider('exa');
const tavily = new ScriptedProvider('tavily');

const NO_LIMIT: KeyFacts = { limitMicros: null, limitReset: null, allowedModels: null };

beforeAll(async () => {
  stores = await openLedgerStores(await freshLedgerDatabase('research'), newRedis());
  redis = stores.redis;
  const runs = new ResearchRepository(stores.prisma);
  const transactions = new Transactions(stores.prisma);
  money = new ResearchSpendableAdapter(redis);
  outbox = new SpendableOutboxService(stores.repository, new SpendableBalanceAdapter(redis), logger, { adapter: money, runs });
  queue = new ResearchQueueAdapter(redis);
  service = new ResearchService({ transactions, runs, append: stores.append }, money, outbox, queue, logger);
  runner = new ResearchRunner(
    { transactions, runs, append: stores.append, events: new EventsRepository(stores.prisma) },
    { exa, tavily }, money, outbox, logger,
    { runTimeoutMs: 7_200_000, pollMinMs: 1_000, pollMaxMs: 5_000, startTriesMax: 3, holdTtlMs: 10_800_000 },
  );
  recon = new ReconciliationService(new ReconciliationRepository(stores.prisma), new ReconciliationRedisAdapter(redis), logger, 60_000);
  finance = new FinanceRepository(stores.prisma);
}, 60_000);

afterAll(async () => {
  await queue.close();
  await stores.close();
});

/** A new account with `micros` granted and applied to Redis. */
async function funded(micros: number): Promise<{ accountId: string; keyId: string }> {
  const accountId = newId('account');
  await stores.repository.ensureBalance(accountId);
  await stores.append.appendEntry({ accountId, kind: 'grant', amountMicros: micros, reason: 'test', idempotencyKey: null, requestId: null });
  await outbox.applyPending();
  return { accountId, keyId: newId('apiKey') };
}

async function figures(accountId: string): Promise<{ bal: number; reserved: number; drift: number; durable: number }> {
  const report = await recon.reconcileAccount(accountId, REPORT_ONLY);
  return {
    bal: Number(await redis.get(redisKeys.accountBalance(accountId))),
    reserved: Number((await redis.get(redisKeys.accountReserved(accountId))) ?? 0),
    drift: report.driftMicros,
    durable: report.durableMicros,
  };
}

const keyHold = async (accountId: string, keyId: string): Promise<number> => Number((await redis.get(redisKeys.keyHold(accountId, keyId))) ?? 0);

async function entries(runId: string): Promise<{ kind: string; amount: number; applied: boolean }[]> {
  const rows = await stores.db.query<{ kind: string; amount_micros: string; applied: boolean }>(
    'SELECT kind, amount_micros, applied_to_spendable_at IS NOT NULL AS applied FROM ledger_entries WHERE idempotency_key = $1 ORDER BY created_at, id', [runId]);
  return rows.rows.map((r) => ({ kind: r.kind, amount: Number(r.amount_micros), applied: r.applied }));
}

const create = (who: { accountId: string; keyId: string }, models: string[], capMicros: number, facts: KeyFacts = NO_LIMIT) => service.create({
  accountId: who.accountId, keyId: who.keyId, facts, input: 'a question', models, maxCostMicros: capMicros, outputSchema: null, metadata: null, idempotencyKey: null,
});

/** Runs `times` steps of the run, one after another. */
async function step(runId: string, times = 1): Promise<void> {
  for (let i = 0; i < times; i++) await runner.advance(runId);
}

describe('a research run\'s money', () => {
  it('held at creation, settled once at the metered cost with the rest released; reconciliation reads 0 at every state', async () => {
    const who = await funded(10_000_000);
    const { run } = await create(who, ['exa/agent-auto'], 2_000_000);
    expect(run.heldMicros).toBe(2_000_000);
    expect(await entries(run.id)).toEqual([{ kind: 'research_hold', amount: -2_000_000, applied: true }]);
    expect(await figures(who.accountId)).toMatchObject({ bal: 8_000_000, reserved: 0, drift: 0, durable: 8_000_000 });
    expect(await keyHold(who.accountId, who.keyId)).toBe(2_000_000);

    await step(run.id); // start
    expect(exa.starts).toBeGreaterThanOrEqual(1);
    const providerRunId = `exa-${exa.starts}`;
    await step(run.id); // poll: running
    expect(await figures(who.accountId)).toMatchObject({ bal: 8_000_000, drift: 0 });
    exa.runs.set(providerRunId, { kind: 'completed', text: 'answer', structured: null, sources: [{ url: 'https://a.example/1', title: 'A' }], cost: { providerCostMicros: 800_000 } });
    // Two steps at once (a poll the lock let through twice): one settlement.
    await Promise.all([step(run.id), step(run.id)]);
    await step(run.id);
    expect(await entries(run.id)).toEqual([
      { kind: 'research_hold', amount: -2_000_000, applied: true },
      { kind: 'research_release', amount: 1_000_000, applied: true },
    ]);
    expect(await figures(who.accountId)).toMatchObject({ bal: 9_000_000, reserved: 0, drift: 0, durable: 9_000_000 });
    expect(await keyHold(who.accountId, who.keyId)).toBe(0);
    // The cost is the key's spend, as a search's charge is.
    expect(Number(await redis.get(redisKeys.keyTotalUsage(who.accountId, who.keyId)))).toBe(1_000_000);
    const settlement = await stores.db.query<{ charged_micros: string }>('SELECT charged_micros FROM settlements WHERE request_id = $1', [run.id]);
    expect(settlement.rows.map((r) => Number(r.charged_micros))).toEqual([1_000_000]);
    const events = await stores.db.query<{ type: string }>('SELECT type FROM events WHERE account_id = $1', [who.accountId]);
    expect(events.rows.map((e) => e.type)).toEqual(['research.completed']);
  });

  it('the equation holds between the hold in Redis and its entry, and a hold whose reservation Redis lost is taken from the balance', async () => {
    const who = await funded(5_000_000);
    const runId = newId('researchRun');
    expect(await money.reserve({ accountId: who.accountId, keyId: who.keyId, runId, amountMicros: 1_000_000, limitMicros: null, limitReset: null, holdTtlMs: 60_000 })).toEqual({ kind: 'ok' });
    // Reserved, not in the ledger yet.
    expect(await figures(who.accountId)).toMatchObject({ bal: 4_000_000, reserved: 1_000_000, drift: 0 });
    // Committed, not applied: the entry is unapplied.
    const written = await stores.append.appendEntry({ accountId: who.accountId, kind: 'research_hold', amountMicros: -1_000_000, reason: null, idempotencyKey: runId, requestId: runId });
    if (written.kind !== 'created') throw new Error('the hold entry was not written');
    expect(await figures(who.accountId)).toMatchObject({ bal: 4_000_000, reserved: 1_000_000, drift: 0, durable: 4_000_000 });
    // The reservation lost (Redis lost it, or reconciliation gave it back as stale) before the apply.
    await money.unreserve(who.accountId, who.keyId, runId);
    expect(await figures(who.accountId)).toMatchObject({ bal: 5_000_000, reserved: 0 });
    expect(await money.applyHold(who.accountId, written.entry.id, runId, 1_000_000)).toBe(true);
    expect(await money.applyHold(who.accountId, written.entry.id, runId, 1_000_000)).toBe(false);
    expect(await figures(who.accountId)).toMatchObject({ bal: 4_000_000, reserved: 0 });
  });

  it('50 creations at once with a balance for 20 holds: exactly 20 accepted, the rest 402, never a negative balance', async () => {
    const who = await funded(20 * 125_000);
    const outcomes = await Promise.allSettled(Array.from({ length: 50 }, () => create(who, ['exa/agent-medium'], 500_000)));
    const accepted = outcomes.filter((o) => o.status === 'fulfilled');
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
    expect(accepted).toHaveLength(20);
    expect(refused.every((e) => e instanceof AppError && e.code === 'insufficient_credits')).toBe(true);
    expect(await figures(who.accountId)).toMatchObject({ bal: 0, reserved: 0, drift: 0, durable: 0 });
    expect(await keyHold(who.accountId, who.keyId)).toBe(20 * 125_000);
  });

  it('the key\'s limit counts its open holds and its spend: a second run past it is refused until the first settles', async () => {
    const who = await funded(10_000_000);
    const facts: KeyFacts = { limitMicros: 3_000_000, limitReset: 'monthly', allowedModels: null };
    const { run } = await create(who, ['exa/agent-auto'], 2_000_000, facts);
    await expect(create(who, ['exa/agent-auto'], 2_000_000, facts)).rejects.toMatchObject({ code: 'key_limit_exceeded' });
    await step(run.id);
    exa.runs.set(`exa-${exa.starts}`, { kind: 'completed', text: 't', structured: null, sources: [], cost: { providerCostMicros: 400_000 } });
    await step(run.id);
    // Spent 0.5 of the 3 limit, nothing held: 2 fits again.
    await expect(create(who, ['exa/agent-auto'], 2_000_000, facts)).resolves.toMatchObject({ repeated: false });
  });

  it('a provider that reports more than the cap: charged exactly the ceiling, the provider cost kept, the loss listed for finance', async () => {
    const who = await funded(10_000_000);
    const { run } = await create(who, ['exa/agent-auto'], 2_000_000);
    await step(run.id);
    exa.runs.set(`exa-${exa.starts}`, { kind: 'completed', text: 't', structured: null, sources: [], cost: { providerCostMicros: 2_400_000 } });
    await step(run.id);
    const settled = await service.get(who.accountId, run.id);
    expect([settled.status, settled.costMicros]).toEqual(['completed', 2_000_000]);
    expect(await entries(run.id)).toEqual([
      { kind: 'research_hold', amount: -2_000_000, applied: true },
      { kind: 'research_release', amount: 0, applied: true },
    ]);
    const research = await finance.researchFigures();
    expect(research.lossRuns).toContainEqual({ runId: run.id, providerCostMicros: 2_400_000, chargedMicros: 2_000_000, lossMicros: 400_000 });
    expect(research.mismatchedRuns).not.toContain(run.id);
    expect(await figures(who.accountId)).toMatchObject({ bal: 8_000_000, drift: 0 });
  });

  it('falls back within what the hold leaves: a refused start moves to the next model; a cancel before the start costs nothing', async () => {
    const who = await funded(10_000_000);
    const { run } = await create(who, ['exa/agent-medium', 'tavily/research-mini'], 2_000_000);
    // The most each could cost: 0.125 + 1.10.
    expect(run.heldMicros).toBe(125_000 + (findResearchModel('tavily/research-mini')?.maxCostMicros ?? 0));
    exa.nextStart = { kind: 'refused', error: 'bad key' };
    await step(run.id);
    await step(run.id); // tavily starts
    tavily.runs.set(`tavily-${tavily.starts}`, { kind: 'completed', text: 't', structured: null, sources: [], cost: { credits: 40 } });
    await step(run.id);
    const done = await service.get(who.accountId, run.id);
    expect(done.status).toBe('completed');
    expect(done.attempts.map((a) => [a.model, a.status, a.chargedMicros])).toEqual([['exa/agent-medium', 'failed', 0], ['tavily/research-mini', 'completed', 400_000]]);
    expect(done.costMicros).toBe(400_000);

    const queued = (await create(who, ['exa/agent-low'], 1_000_000)).run;
    await service.cancel(who.accountId, queued.id);
    await step(queued.id);
    expect(await service.get(who.accountId, queued.id)).toMatchObject({ status: 'cancelled', costMicros: 0 });
    expect(await figures(who.accountId)).toMatchObject({ drift: 0 });
  });
});
