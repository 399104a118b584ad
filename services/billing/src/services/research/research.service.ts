import { createHash } from 'node:crypto';
import { DEFAULT_RESEARCH_RUN_TIMEOUT_MS, MODEL_NOT_ALLOWED_MESSAGE, RESERVATION_TTL_GRACE_MS } from '@svc/contracts';
import type { KeyFacts, ResearchProvider, ResearchStatus } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { newId } from '@svc/ids';
import { microsToUsd } from '@svc/money';
import type { Micros } from '@svc/money';
import type { Logger } from 'pino';
import type { Transactions } from '../../db/transactions';
import type { LedgerAppendRepository } from '../../stores/ledger-append.repository';
import type { ResearchRepository, ResearchRunRow } from '../../stores/research.repository';
import type { HistoryPage } from '../../common/pages';
import type { SpendableOutbox } from '../ledger/spendable.port';
import type { ResearchSpendableAdapter } from '../spendable/research-spendable.adapter';
import { plan } from './research-plan';

/** Puts a run's job on its provider's queue (the research worker's sweep does it too: a lost job is re-added). */
export interface ResearchQueue {
  enqueue(runId: string, provider: ResearchProvider): Promise<void>;
  /** Moves a delayed job of the run forward (a cancel is acted on at once). */
  nudge(runId: string, provider: ResearchProvider): Promise<void>;
}

export interface CreateResearch {
  accountId: string;
  keyId: string;
  facts: KeyFacts;
  /** Trimmed. */
  input: string;
  models: readonly string[];
  maxCostMicros: Micros;
  outputSchema: unknown;
  metadata: Record<string, string> | null;
  idempotencyKey: string | null;
}

export interface ResearchStores {
  transactions: Transactions;
  runs: ResearchRepository;
  append: LedgerAppendRepository;
}

export interface ResearchSettings {
  /** A run's bound from its creation (RESEARCH_RUN_TIMEOUT_MS). */
  runTimeoutMs: number;
}

/** The request a run was made with, digested (an Idempotency-Key sent again with another request is refused). */
function digestOf(input: CreateResearch): string {
  return createHash('sha256')
    .update(JSON.stringify([input.input, input.models, input.maxCostMicros, input.outputSchema ?? null, input.metadata ?? null]))
    .digest('base64url');
}

/**
 * POST /v1/research and the run's reads and cancel (docs/api.md, "Research runs"). Creation
 * holds the run's money in one flow (docs/decisions/0062): the hold is reserved in Redis
 * against the spendable balance and the key's limit (the search's reservation rule), the run
 * and its `research_hold` entry are written in one transaction, the entry is applied to Redis
 * once (the reservation becomes the durable hold), and the run's job is queued. A refusal
 * writes nothing; a failure after the reservation gives it back.
 */
export class ResearchService {
  constructor(
    private readonly stores: ResearchStores,
    private readonly money: ResearchSpendableAdapter,
    private readonly outbox: SpendableOutbox,
    private readonly queue: ResearchQueue,
    private readonly logger: Logger,
    private readonly settings: ResearchSettings = { runTimeoutMs: DEFAULT_RESEARCH_RUN_TIMEOUT_MS },
  ) {}

  async create(input: CreateResearch): Promise<{ run: ResearchRunRow; repeated: boolean }> {
    const digest = digestOf(input);
    if (input.idempotencyKey !== null) {
      const earlier = await this.stores.runs.byIdempotencyKey(input.accountId, input.keyId, input.idempotencyKey);
      if (earlier !== null) return { run: this.sameRequest(earlier, digest), repeated: true };
    }
    const planned = plan(input.models, input.maxCostMicros, input.facts.allowedModels);
    if (planned.current === null) throw refusal(planned.attempts);
    const runId = newId('researchRun');
    const verdict = await this.money.reserve({
      accountId: input.accountId, keyId: input.keyId, runId, amountMicros: planned.heldMicros,
      limitMicros: input.facts.limitMicros, limitReset: input.facts.limitReset, holdTtlMs: this.settings.runTimeoutMs + RESERVATION_TTL_GRACE_MS,
    }).catch((error: unknown) => {
      this.logger.warn({ err: error, account_id: input.accountId }, 'research reservation failed: redis unreachable');
      throw new AppError('overloaded', 'the service is busy; retry shortly', { retryAfterSeconds: 1 });
    });
    switch (verdict.kind) {
      case 'ok':
      case 'dup':
        break;
      case 'cold':
        await this.outboxColdAccount(input.accountId);
        throw new AppError('overloaded', 'the account\'s balance is being restored; retry shortly', { retryAfterSeconds: 1 });
      case 'limit':
        throw new AppError('key_limit_exceeded', 'this key\'s credit limit cannot hold the run\'s cap', { needed_usd: microsToUsd(planned.heldMicros) });
      case 'balance':
        throw new AppError('insufficient_credits', 'the credit balance cannot hold the run\'s cap', { needed_usd: microsToUsd(planned.heldMicros) });
      default: {
        const unreachable: never = verdict;
        return unreachable;
      }
    }
    let written: { run: ResearchRunRow; hold: Awaited<ReturnType<LedgerAppendRepository['writeLocked']>> };
    try {
      written = await this.stores.transactions.run(async (tx) => {
        await this.stores.append.lockBalance(tx, input.accountId, { create: true });
        const run = await this.stores.runs.insert(tx, {
          id: runId, accountId: input.accountId, keyId: input.keyId, input: input.input, models: input.models, outputSchema: input.outputSchema ?? null,
          metadata: input.metadata, maxCostMicros: input.maxCostMicros, heldMicros: planned.heldMicros, attempts: planned.attempts,
          currentAttempt: planned.current, idempotencyKey: input.idempotencyKey, requestDigest: digest,
        });
        const hold = await this.stores.append.writeLocked(tx, {
          accountId: input.accountId, kind: 'research_hold', amountMicros: -planned.heldMicros, reason: null, idempotencyKey: runId, requestId: runId,
        });
        return { run, hold };
      });
    } catch (error) {
      await this.money.unreserve(input.accountId, input.keyId, runId).catch((undo: unknown) =>
        this.logger.error({ err: undo, run_id: runId }, 'research reservation not given back; reconciliation releases it as stale'));
      if (input.idempotencyKey !== null && isUniqueViolation(error)) {
        // Another request with the same key won the race: its run is the answer.
        const earlier = await this.stores.runs.byIdempotencyKey(input.accountId, input.keyId, input.idempotencyKey);
        if (earlier !== null) return { run: this.sameRequest(earlier, digest), repeated: true };
      }
      throw error;
    }
    // Committed: the hold is in the ledger. Its application to Redis (and the job) are retried
    // by the outbox's sweep and the research worker's sweep if this process stops here.
    await this.outbox.applyAfterCommit(written.hold);
    const first = written.run.attempts[planned.current];
    if (first !== undefined) {
      await this.queue.enqueue(runId, first.provider).catch((error: unknown) =>
        this.logger.warn({ err: error, run_id: runId }, 'research job not queued; the research worker\'s sweep queues it'));
    }
    return { run: written.run, repeated: false };
  }

  async get(accountId: string, id: string): Promise<ResearchRunRow> {
    const run = await this.stores.runs.get(accountId, id);
    if (run === null) throw new AppError('not_found', `research run ${id} does not exist`);
    return run;
  }

  async list(accountId: string, page: HistoryPage, status: ResearchStatus | null): Promise<{ rows: ResearchRunRow[]; more: boolean }> {
    const rows = await this.stores.runs.list(accountId, page.limit + 1, page.after, status);
    return { rows: rows.slice(0, page.limit), more: rows.length > page.limit };
  }

  /**
   * Asks for the run's end. The research worker acts on it at its next step (at once: the job
   * is moved forward): a run not started yet ends without a charge, one an Exa model runs is
   * cancelled there and charged what Exa reports, one a Tavily model runs finishes at Tavily
   * (it has no cancel) and is charged what it reports (RESEARCH_RULES). A settled run is
   * answered as it is.
   */
  async cancel(accountId: string, id: string): Promise<{ run: ResearchRunRow; accepted: boolean }> {
    const accepted = await this.stores.runs.requestCancel(accountId, id);
    const run = await this.get(accountId, id);
    if (accepted) {
      const current = run.currentAttempt === null ? undefined : run.attempts[run.currentAttempt];
      if (current !== undefined) await this.queue.nudge(id, current.provider).catch((error: unknown) => this.logger.warn({ err: error, run_id: id }, 'research job not moved forward; the cancel waits for its next step'));
    }
    return { run, accepted };
  }

  private sameRequest(earlier: ResearchRunRow, digest: string): ResearchRunRow {
    if (earlier.requestDigest !== digest) throw new AppError('invalid_request', 'this Idempotency-Key was used with a different request body');
    return earlier;
  }

  private async outboxColdAccount(accountId: string): Promise<void> {
    await this.money.requestHydration(accountId).catch(() => undefined);
  }
}

/** The refusal of a run no model may make: the key's fence alone, or the cap (with each model's reason). */
function refusal(attempts: readonly { model: string; error: string | null }[]): AppError {
  const reasons = attempts.map((a) => `${a.model}: ${a.error ?? 'not runnable'}`).join('; ');
  if (attempts.every((a) => a.error === MODEL_NOT_ALLOWED_MESSAGE)) {
    return new AppError('model_not_allowed', `this key may not use any of the requested models (${attempts.map((a) => a.model).join(', ')})`);
  }
  return new AppError('invalid_request', `no requested model can run within max_cost_usd: ${reasons}`);
}

function isUniqueViolation(error: unknown): boolean {
  const text = error instanceof Error ? `${error.name} ${error.message}` : String(error);
  return /unique|23505|P2002/i.test(text);
}
