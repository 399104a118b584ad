import { QUEUE_PREFIX, RESEARCH_JOB, RESEARCH_PROVIDERS, RESEARCH_QUEUES } from '@svc/contracts';
import type { ResearchProvider } from '@svc/contracts';
import type { RedisClient } from '@svc/redis-client';
import { Queue } from 'bullmq';
import type { JobsOptions } from 'bullmq';
import type { ResearchQueue } from './research.service';

/** A research job's data: the run; everything else is read from its row. */
export interface ResearchJobData {
  runId: string;
}

/**
 * A run's job: its id is the run id, so adding it again while it exists (waiting, delayed or
 * running) adds nothing; a job that fails (the database unreachable) is retried with backoff
 * and, once given up, removed, so the worker's sweep can add it again.
 */
export function researchJobOptions(runId: string): JobsOptions {
  return { jobId: runId, attempts: 50, backoff: { type: 'exponential', delay: 1_000 }, removeOnComplete: true, removeOnFail: true };
}

/** The research queues, one per provider (RESEARCH_QUEUES), as a producer: billing's API and the research worker's sweep add to them. */
export class ResearchQueueAdapter implements ResearchQueue {
  private readonly queues: Readonly<Record<ResearchProvider, Queue<ResearchJobData>>>;

  constructor(connection: RedisClient) {
    const make = (provider: ResearchProvider): Queue<ResearchJobData> => new Queue<ResearchJobData>(RESEARCH_QUEUES[provider], { connection, prefix: QUEUE_PREFIX });
    this.queues = Object.fromEntries(RESEARCH_PROVIDERS.map((provider) => [provider, make(provider)])) as Record<ResearchProvider, Queue<ResearchJobData>>;
  }

  async enqueue(runId: string, provider: ResearchProvider): Promise<void> {
    await this.queues[provider].add(RESEARCH_JOB, { runId }, researchJobOptions(runId));
  }

  async nudge(runId: string, provider: ResearchProvider): Promise<void> {
    const job = await this.queues[provider].getJob(runId);
    if (job !== undefined && (await job.isDelayed())) await job.promote();
  }

  async close(): Promise<void> {
    await Promise.all(Object.values(this.queues).map((queue) => queue.close()));
  }
}
