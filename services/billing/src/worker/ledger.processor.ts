import { LEDGER_JOBS, LEDGER_QUEUE } from '@svc/contracts';
import type { LedgerJobName, LedgerJobPayload } from '@svc/contracts';
import type { Logger } from 'pino';
import type { BacklogService } from '../services/backlog/backlog.service';
import type { LedgerDrainService } from '../services/settlement/ledger-drain.service';
import type { SpendableOutboxService } from '../services/spendable/spendable-outbox.service';
import type { QueueProcessor } from './queue-processor';

/** A drain or a sweep that fails is tried again, up to five times, half a second apart and doubling. */
const LEDGER_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: true,
  removeOnFail: { count: 100 },
};

export interface LedgerProcessorParts {
  drain: LedgerDrainService;
  outbox: SpendableOutboxService;
  backlog: BacklogService;
  logger: Logger;
  drainEveryMs: number;
  sweepEveryMs: number;
}

/**
 * LEDGER_QUEUE: two repeating jobs. `drain` (every LEDGER_DRAIN_INTERVAL_MS) writes the
 * settlement streams into Postgres and counts what it took for the backlog's drain rate;
 * `sweep` (every LEDGER_SWEEP_INTERVAL_MS) marks streams whose dirty mark was lost and
 * applies every ledger entry the spendable outbox has not applied yet. Several replicas are
 * safe: every write is idempotent in Postgres.
 */
export function ledgerProcessor(parts: LedgerProcessorParts): QueueProcessor<LedgerJobPayload, LedgerJobName> {
  const { drain, outbox, backlog, logger } = parts;
  const jobs: Record<LedgerJobName, () => Promise<unknown>> = {
    async [LEDGER_JOBS.drain]() {
      const result = await drain.drain();
      if (result.accounts > 0) logger.debug({ accounts: result.accounts, written: result.written, skipped: result.skipped, dead_lettered: result.deadLettered }, 'drain done');
      await backlog.recordDrained(result.written + result.skipped).catch(() => undefined);
      return result;
    },
    async [LEDGER_JOBS.sweep]() {
      const marked = await drain.sweep();
      const applied = await outbox.applyPending();
      if (applied > 0) logger.info({ applied }, 'outbox applied ledger entries to spendable balances');
      return { marked, applied };
    },
  };
  return {
    queue: LEDGER_QUEUE,
    label: 'ledger',
    schedules: [
      { name: LEDGER_JOBS.drain, everyMs: parts.drainEveryMs, options: LEDGER_JOB_OPTIONS },
      { name: LEDGER_JOBS.sweep, everyMs: parts.sweepEveryMs, options: LEDGER_JOB_OPTIONS },
    ],
    failedMessage: 'ledger job failed; it will be retried',
    async process(job) {
      const run = Object.hasOwn(jobs, job.name) ? jobs[job.name] : undefined;
      if (run === undefined) throw new Error(`unknown ledger job ${String(job.name)}`);
      return run();
    },
  };
}
