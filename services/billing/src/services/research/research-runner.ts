import { atOurRateMicros, findResearchModel, providerCostMicros } from '@svc/contracts';
import type { ResearchModelSpec, ResearchProvider } from '@svc/contracts';
import type { Logger } from 'pino';
import type { Transactions } from '../../db/transactions';
import type { EventsRepository } from '../../stores/events.repository';
import type { LedgerAppendRepository, ResearchUsageAttempt } from '../../stores/ledger-append.repository';
import type { ResearchOutput, ResearchRepository, ResearchRunRow, ResearchSource, StoredAttempt } from '../../stores/research.repository';
import type { SpendableOutbox } from '../ledger/spendable.port';
import type { ResearchSpendableAdapter } from '../spendable/research-spendable.adapter';
import { chargedSoFar, chargeOf, nextAttempt, startingMoney } from './research-plan';
import type { CostReport, PollOutcome, ProviderRunState, ResearchProviderApi } from '../../adapters/research/research-provider';
import { researchRunView } from './research-view';

/** What a step answers: the run is settled (its job ends), or its next step is due after `delayMs` on `provider`'s queue. */
export type StepResult = { kind: 'done' } | { kind: 'later'; delayMs: number; provider: ResearchProvider };

export interface RunnerSettings {
  /** A run's bound from its creation (RESEARCH_RUN_TIMEOUT_MS): past it the run is given up. */
  runTimeoutMs: number;
  /** The first poll's delay and the backoff's ceiling (RESEARCH_POLL_MIN_MS, RESEARCH_POLL_MAX_MS). */
  pollMinMs: number;
  pollMaxMs: number;
  /** Passing refusals (429, 5xx, unreachable) of a start before the attempt fails and the next model is tried. */
  startTriesMax: number;
  /** How long a key's hold must live at least while its run goes on. */
  holdTtlMs: number;
}

export interface RunnerStores {
  transactions: Transactions;
  runs: ResearchRepository;
  append: LedgerAppendRepository;
  events: EventsRepository;
}

/** Told of every run this runner settled (the worker's metrics). */
export interface RunObserver {
  runSettled(status: string, chargedMicros: number, providerCostMicros: number): void;
}

type Ending = { status: 'completed' | 'failed' | 'cancelled'; output: ResearchOutput | null; sources: ResearchSource[]; error: string | null };

/**
 * The research worker's one step of a run (docs/decisions/0062): start the current attempt at
 * its provider, poll it, cancel it, fall back to the next model, or settle the run. Every
 * decision is made from the run's row, so a step that runs again after a worker died makes the
 * same decision; the settlement locks the account's balance row and the run's own row and
 * writes only when the run is not settled, so a run is charged once however often it is polled.
 */
export class ResearchRunner {
  constructor(
    private readonly stores: RunnerStores,
    private readonly providers: Readonly<Record<ResearchProvider, ResearchProviderApi>>,
    private readonly money: ResearchSpendableAdapter,
    private readonly outbox: SpendableOutbox,
    private readonly logger: Logger,
    private readonly settings: RunnerSettings,
    private readonly clock: () => Date = () => new Date(),
    private readonly observer?: RunObserver,
  ) {}

  /** The delay before poll `n` (from 0): the minimum, growing by half each time, at most the maximum. */
  backoffMs(n: number): number {
    return Math.min(this.settings.pollMaxMs, Math.round(this.settings.pollMinMs * 1.5 ** Math.max(0, n)));
  }

  async advance(runId: string): Promise<StepResult> {
    const run = await this.stores.runs.byId(runId);
    if (run === null || run.settledAt !== null) return { kind: 'done' };
    await this.money.keepHold(run.accountId, run.keyId, this.settings.holdTtlMs).catch((error: unknown) =>
      this.logger.warn({ err: error, run_id: runId }, 'the key\'s hold was not kept alive this step'));
    const index = run.currentAttempt;
    const attempt = index === null ? undefined : run.attempts[index];
    if (index === null || attempt === undefined) {
      return this.settle(run, run.attempts, { status: run.cancelRequestedAt === null ? 'failed' : 'cancelled', output: null, sources: [], error: 'no model could run the research' });
    }
    const model = findResearchModel(attempt.model);
    if (model === undefined) throw new Error(`run ${runId} names ${attempt.model}, not a research model`);
    const now = this.clock();
    const pastBound = now.getTime() - run.createdAt.getTime() > this.settings.runTimeoutMs;
    switch (attempt.status) {
      case 'pending':
        if (run.cancelRequestedAt !== null) return this.end(run, index, { status: 'cancelled', error: 'cancelled before it started' }, null, { status: 'cancelled', error: 'cancelled' });
        if (pastBound) return this.end(run, index, { status: 'failed', error: 'not started within the run\'s time limit' }, null, { status: 'failed', error: 'the run did not finish within its time limit' });
        return this.start(run, index, attempt, model, now);
      case 'running':
        return this.follow(run, index, attempt, model, pastBound);
      case 'skipped':
      case 'completed':
      case 'failed':
      case 'cancelled':
        // A step that died after ending the attempt and before moving on: move on now.
        return this.fallBack(run, run.attempts, index);
      default: {
        const unreachable: never = attempt.status;
        return unreachable;
      }
    }
  }

  private async start(run: ResearchRunRow, index: number, attempt: StoredAttempt, model: ResearchModelSpec, now: Date): Promise<StepResult> {
    const money = startingMoney(run.attempts, index, run.heldMicros);
    if (!money.ok) {
      const attempts = run.attempts.map((a, i) => (i === index ? { ...a, status: 'skipped' as const, error: money.reason } : a));
      return this.fallBack(run, attempts, index);
    }
    const api = this.providers[model.provider];
    const outcome = await api.start({ model, input: run.input, outputSchema: run.outputSchema, providerBudgetMicros: money.money.providerBudgetMicros, runId: run.id });
    switch (outcome.kind) {
      case 'started': {
        const attempts = run.attempts.map((a, i) => (i === index
          ? { ...a, status: 'running' as const, ceilingMicros: money.money.ceilingMicros, providerBudgetMicros: money.money.providerBudgetMicros, providerRunId: outcome.providerRunId, startedAt: now.toISOString() }
          : a));
        await this.update(run.id, { status: 'running', attempts, startedAt: now });
        this.logger.info({ run_id: run.id, model: model.id, provider_run_id: outcome.providerRunId }, 'research attempt started');
        return { kind: 'later', delayMs: this.backoffMs(0), provider: model.provider };
      }
      case 'retry': {
        const tries = attempt.startTries + 1;
        if (tries >= this.settings.startTriesMax) {
          return this.end(run, index, { status: 'failed', error: `the provider did not take the run: ${outcome.error}` }, null, null);
        }
        const attempts = run.attempts.map((a, i) => (i === index ? { ...a, startTries: tries, error: outcome.error } : a));
        await this.update(run.id, { attempts });
        return { kind: 'later', delayMs: Math.max(outcome.retryAfterMs ?? 0, this.backoffMs(tries)), provider: model.provider };
      }
      case 'refused':
        return this.end(run, index, { status: 'failed', error: `the provider refused the run: ${outcome.error}` }, null, null);
      default: {
        const unreachable: never = outcome;
        return unreachable;
      }
    }
  }

  /** A running attempt: cancel it when asked or past the run's bound, else poll it. */
  private async follow(run: ResearchRunRow, index: number, attempt: StoredAttempt, model: ResearchModelSpec, pastBound: boolean): Promise<StepResult> {
    const api = this.providers[model.provider];
    const providerRunId = attempt.providerRunId;
    if (providerRunId === null) throw new Error(`run ${run.id}: a running attempt without its provider run id`);
    const stopping = run.cancelRequestedAt !== null ? 'cancel' : pastBound ? 'bound' : null;
    let outcome: PollOutcome | null = null;
    if (stopping !== null && model.cancellable) outcome = await api.cancel(providerRunId, model);
    if (outcome === null || outcome.kind === 'refused') outcome = await api.poll(providerRunId, model);
    switch (outcome.kind) {
      case 'retry':
      case 'refused': {
        if (outcome.kind === 'refused' || stopping === 'bound') {
          // The provider no longer answers for the run (or the bound passed without it): it ends
          // here; what the provider charged is not known, so nothing is charged (finance lists it).
          const error = outcome.kind === 'refused' ? `the provider refused to report the run: ${outcome.error}` : 'the run did not finish within its time limit';
          return this.end(run, index, { status: 'failed', error }, null, stopping === 'cancel' ? { status: 'cancelled', error: 'cancelled' } : null);
        }
        const attempts = run.attempts.map((a, i) => (i === index ? { ...a, polls: a.polls + 1 } : a));
        await this.update(run.id, { attempts });
        return { kind: 'later', delayMs: Math.max(outcome.retryAfterMs ?? 0, this.backoffMs(attempt.polls + 1)), provider: model.provider };
      }
      case 'state':
        return this.onState(run, index, attempt, model, outcome.state, stopping);
      default: {
        const unreachable: never = outcome;
        return unreachable;
      }
    }
  }

  private async onState(run: ResearchRunRow, index: number, attempt: StoredAttempt, model: ResearchModelSpec, state: ProviderRunState, stopping: 'cancel' | 'bound' | null): Promise<StepResult> {
    switch (state.kind) {
      case 'running': {
        if (stopping === 'bound' && !model.cancellable) {
          // No cancel at this provider and past the bound: the run is given up; Tavily reports no
          // usage for it, so nothing is charged (finance lists it among the abandoned runs).
          return this.end(run, index, { status: 'failed', error: 'the run did not finish within its time limit; abandoned at the provider' }, null,
            { status: 'failed', error: 'the run did not finish within its time limit' });
        }
        const attempts = run.attempts.map((a, i) => (i === index ? { ...a, polls: a.polls + 1 } : a));
        await this.update(run.id, { attempts });
        return { kind: 'later', delayMs: this.backoffMs(attempt.polls + 1), provider: model.provider };
      }
      case 'completed': {
        if (stopping === 'cancel') {
          // Cancelled while it completed: the output is discarded (the caller asked for none), the cost is charged.
          return this.end(run, index, { status: 'cancelled', error: 'cancelled; the provider finished the run and charged it' }, state.cost, { status: 'cancelled', error: 'cancelled' });
        }
        return this.end(run, index, { status: 'completed', error: null }, state.cost,
          { status: 'completed', error: null, output: { text: state.text, structured: state.structured ?? null }, sources: state.sources });
      }
      case 'failed':
      case 'cancelled': {
        if (stopping === 'cancel') return this.end(run, index, { status: 'cancelled', error: 'cancelled' }, state.cost, { status: 'cancelled', error: 'cancelled' });
        if (stopping === 'bound') return this.end(run, index, { status: 'failed', error: 'the run did not finish within its time limit' }, state.cost, { status: 'failed', error: 'the run did not finish within its time limit' });
        return this.end(run, index, { status: 'failed', error: `the provider ended the run: ${state.error}` }, state.cost, null);
      }
      default: {
        const unreachable: never = state;
        return unreachable;
      }
    }
  }

  /**
   * Ends attempt `index` (its charge from the provider's report, never above its ceiling), then
   * either settles the run (`ending` given) or falls back to the next model.
   */
  private async end(run: ResearchRunRow, index: number, result: { status: 'completed' | 'failed' | 'cancelled'; error: string | null }, cost: CostReport | null, ending: (Partial<Ending> & Pick<Ending, 'status' | 'error'>) | null): Promise<StepResult> {
    const attempts = run.attempts.map((a, i) => (i === index ? this.ended(a, result, cost) : a));
    if (ending !== null) return this.settle(run, attempts, { output: null, sources: [], ...ending });
    return this.fallBack(run, attempts, index);
  }

  private ended(attempt: StoredAttempt, result: { status: 'completed' | 'failed' | 'cancelled'; error: string | null }, cost: CostReport | null): StoredAttempt {
    const model = findResearchModel(attempt.model);
    if (model === undefined) throw new Error(`${attempt.model} is not a research model`);
    const providerCost = cost === null ? 0 : providerCostMicros(model, cost);
    const atRate = cost === null ? 0 : atOurRateMicros(model, cost);
    return {
      ...attempt, status: result.status, error: result.error, providerCostMicros: providerCost, atRateMicros: atRate,
      chargedMicros: chargeOf(attempt.ceilingMicros ?? 0, atRate), endedAt: this.clock().toISOString(),
    };
  }

  /** After an attempt that gave no answer: the next model that fits in what the hold leaves, or the run fails. */
  private async fallBack(run: ResearchRunRow, attempts: StoredAttempt[], from: number): Promise<StepResult> {
    if (run.cancelRequestedAt !== null) return this.settle(run, attempts, { status: 'cancelled', output: null, sources: [], error: 'cancelled' });
    const next = nextAttempt(attempts, from, run.heldMicros);
    const following = next.next === null ? undefined : next.attempts[next.next];
    if (next.next === null || following === undefined) {
      const last = [...next.attempts].reverse().find((a) => a.status === 'failed');
      return this.settle(run, next.attempts, { status: 'failed', output: null, sources: [], error: last?.error ?? 'no model could run the research' });
    }
    await this.update(run.id, { attempts: next.attempts, currentAttempt: next.next });
    this.logger.info({ run_id: run.id, model: following.model }, 'research run falls back to its next model');
    return { kind: 'later', delayMs: 0, provider: following.provider };
  }

  private async update(runId: string, change: Parameters<ResearchRepository['update']>[2]): Promise<void> {
    await this.stores.transactions.run((tx) => this.stores.runs.update(tx, runId, change));
  }

  /**
   * The run's end, once (docs/decisions/0062): under the account's balance lock and the run's
   * own row lock, a run not settled yet gets its `research_release` entry (the hold less what
   * its attempts were charged), its settlements row and usage events, its final state and its
   * event (research.completed or research.failed; a cancelled run has none), in one
   * transaction. The release is then applied to Redis once (the outbox retries it).
   */
  private async settle(run: ResearchRunRow, attempts: StoredAttempt[], ending: Ending): Promise<StepResult> {
    const settledAt = this.clock();
    const charged = chargedSoFar(attempts);
    if (charged > run.heldMicros) throw new Error(`run ${run.id}: its attempts' charges (${charged}) pass its hold (${run.heldMicros})`);
    const providerCost = attempts.reduce((sum, a) => sum + (a.providerCostMicros ?? 0), 0);
    const usage: ResearchUsageAttempt[] = attempts.map((a, index) => ({
      index, model: a.model, provider: a.provider,
      status: a.status === 'completed' ? 'success' : a.status === 'failed' || a.status === 'cancelled' ? 'error' : 'skipped',
      error: a.status === 'completed' ? null : a.error ?? (a.status === 'pending' ? 'not tried' : null),
      reservedMicros: a.ceilingMicros ?? 0, chargedMicros: a.chargedMicros ?? 0,
      results: a.status === 'completed' && ending.status === 'completed' ? ending.sources.length : 0,
    }));
    const finalAttempts = attempts.map((a) => (a.status === 'pending' ? { ...a, status: 'skipped' as const, error: 'not tried: the run ended first' } : a));
    const written = await this.stores.transactions.run(async (tx) => {
      await this.stores.append.lockBalance(tx, run.accountId, { create: false });
      const locked = await this.stores.runs.lock(tx, run.id);
      if (locked === null || locked.settledAt !== null) return null;
      const entry = await this.stores.append.writeResearchSettlement(tx, {
        runId: run.id, accountId: run.accountId, keyId: run.keyId, releaseMicros: run.heldMicros - charged, chargedMicros: charged, settledAt, attempts: usage,
      });
      const settled = await this.stores.runs.settle(tx, run.id, {
        status: ending.status, attempts: finalAttempts, output: ending.output, sources: ending.sources, costMicros: charged, providerCostMicros: providerCost, error: ending.error, settledAt,
      });
      if (ending.status !== 'cancelled') {
        await this.stores.events.emit(tx, { accountId: run.accountId, type: ending.status === 'completed' ? 'research.completed' : 'research.failed', data: researchRunView(settled) });
      }
      return entry;
    });
    if (written === null) return { kind: 'done' };
    this.logger.info({ run_id: run.id, status: ending.status, cost_micros: charged, provider_cost_micros: providerCost, held_micros: run.heldMicros }, 'research run settled');
    this.observer?.runSettled(ending.status, charged, providerCost);
    await this.outbox.applyAfterCommit(written);
    return { kind: 'done' };
  }
}
