import { RESEARCH_JOB, RESEARCH_QUEUES } from '@svc/contracts';
import type { ResearchProvider } from '@svc/contracts';
import { DelayedError } from 'bullmq';
import type { Logger } from 'pino';
import type { ResearchJobData } from '../services/research/research-queue.adapter';
import type { ResearchRunner } from '../services/research/research-runner';
import type { ResearchQueue } from '../services/research/research.service';
import type { QueueProcessor } from './queue-processor';

/** A repeating job that does nothing: the watch of the queue's worker (decision 30) needs a scheduler to see a worker that stopped taking jobs. */
export const RESEARCH_WATCH_JOB = 'watch';

export interface ResearchProcessorParts {
  provider: ResearchProvider;
  runner: ResearchRunner;
  /** To move a run's job to another provider's queue (a fallback). */
  queue: ResearchQueue;
  /** Steps this process runs at once on this queue (RESEARCH_CONCURRENCY). */
  concurrency: number;
  /** The provider's documented request rate: at most `max` steps (one request each) per `duration` ms, across every worker. */
  limiter: { max: number; duration: number };
  lock: { durationMs: number; stalledIntervalMs: number };
  watchEveryMs: number;
  logger: Logger;
  onStep?: (provider: ResearchProvider, outcome: 'later' | 'done' | 'error') => void;
}

/**
 * One queue per research provider (RESEARCH_QUEUES): each job is one run (job id = run id) and
 * each processing is one step of it (research-runner.ts), at most one request to the
 * provider. A run that goes on is put back to wait (BullMQ's moveToDelayed: no attempt, no
 * failure) for its next poll, with backoff; a run that falls back to another provider's model
 * moves to that provider's queue. The queue's limiter keeps the steps, so the requests, within
 * the provider's documented rate.
 */
export function researchProcessor(parts: ResearchProcessorParts): QueueProcessor<ResearchJobData, string> {
  const { provider, runner, logger } = parts;
  return {
    queue: RESEARCH_QUEUES[provider],
    label: `research-${provider}`,
    schedules: [{ name: RESEARCH_WATCH_JOB, everyMs: parts.watchEveryMs, options: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 20 } } }],
    concurrency: parts.concurrency,
    limiter: parts.limiter,
    lock: parts.lock,
    failedMessage: 'research step failed; it is retried with backoff',
    logFailure(job, error) {
      parts.onStep?.(provider, 'error');
      logger.warn({ queue: RESEARCH_QUEUES[provider], run_id: job?.data.runId, attempts: job?.attemptsMade, err: error }, 'research step failed; it is retried with backoff');
    },
    async process(job, token) {
      if (job.name !== RESEARCH_JOB) return job.name === RESEARCH_WATCH_JOB ? 'watched' : 'unknown job';
      const result = await runner.advance(job.data.runId);
      if (result.kind === 'done') {
        parts.onStep?.(provider, 'done');
        return 'settled';
      }
      if (result.provider !== provider) {
        await parts.queue.enqueue(job.data.runId, result.provider);
        parts.onStep?.(provider, 'done');
        return `moved to ${result.provider}`;
      }
      parts.onStep?.(provider, 'later');
      await job.moveToDelayed(Date.now() + result.delayMs, token);
      throw new DelayedError();
    },
  };
}
