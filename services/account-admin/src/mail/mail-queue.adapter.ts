import { Inject, Injectable } from '@nestjs/common';
import type { OnApplicationShutdown } from '@nestjs/common';
import { MAIL_JOB_OPTIONS, MAIL_QUEUE, MAIL_QUEUE_PREFIX } from '@svc/contracts';
import type { MailJobData, MailJobName } from '@svc/contracts';
import { closeRedisClient, createRedisClient } from '@svc/redis-client';
import type { RedisClient } from '@svc/redis-client';
import { Queue, Worker } from 'bullmq';
import type { Job } from 'bullmq';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import { LOGGER } from '../logging/logger';
import type { Logger } from '../logging/logger';

/** A job of the mail queue as the processor sees it: its name, payload, and whether this is its last attempt. */
export interface MailJobRun {
  name: MailJobName;
  data: MailJobData;
  /** 1 for the first attempt. */
  attempt: number;
  lastAttempt: boolean;
}

/** What the processor makes of a run: done (sent, failed for good or skipped: recorded), or a failure worth another attempt. */
export type MailRunOutcome = { retry: false } | { retry: true; detail: string };

/**
 * The mail queue in Redis (BullMQ; names and payloads in packages/contracts): the producer the
 * request path adds account-admin's own messages with, and the one Worker that takes every job
 * of the queue (account-admin's and billing's) in each replica, MAIL_CONCURRENCY at a time. A
 * failed attempt is tried again after MAIL_RETRY_BASE_DELAY_MS, doubling, 8 attempts in all
 * (MAIL_JOB_OPTIONS); the processor ends a job without retrying when the SMTP server refused
 * the message for good.
 *
 * The producer's connection gives up on a command after 2 s, so a request never waits long for
 * a Redis that is down: the message stays `queued` in PostgreSQL and the dispatcher adds it
 * later (MailService). The Worker's connection retries forever, as BullMQ requires.
 */
@Injectable()
export class MailQueueAdapter implements OnApplicationShutdown {
  private readonly producerConnection: RedisClient;
  private readonly queue: Queue<MailJobData, unknown, MailJobName>;
  private worker: Worker<MailJobData, unknown, MailJobName> | null = null;
  private workerConnection: RedisClient | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.producerConnection = createRedisClient({ url: config.REDIS_URL, cluster: config.REDIS_CLUSTER }, { maxRetriesPerRequest: 1, commandTimeout: 2_000, connectionName: 'svc-account-admin-mail' });
    this.producerConnection.on('error', () => undefined);
    this.queue = new Queue<MailJobData, unknown, MailJobName>(MAIL_QUEUE, { connection: this.producerConnection, prefix: MAIL_QUEUE_PREFIX });
    this.queue.on('error', () => undefined);
  }

  /** Adds one of account-admin's messages (job id: the message id; adding it twice is harmless). */
  async addMessage(messageId: string): Promise<void> {
    await this.queue.add('message', { messageId }, { ...MAIL_JOB_OPTIONS, jobId: messageId });
  }

  /** True when a job of that id is on the queue (waiting, delayed or running). */
  async hasJob(jobId: string): Promise<boolean> {
    return (await this.queue.getJobState(jobId)) !== 'unknown';
  }

  /** Starts the worker; `run` handles one attempt of one job. */
  startWorker(run: (job: MailJobRun) => Promise<MailRunOutcome>): void {
    const connection = createRedisClient({ url: this.config.REDIS_URL, cluster: this.config.REDIS_CLUSTER }, { maxRetriesPerRequest: null, connectionName: 'svc-account-admin-mail-worker' });
    connection.on('error', (error: Error) => this.logger.warn({ err: error.message }, 'mail worker: redis connection error'));
    this.workerConnection = connection;
    const base = this.config.MAIL_RETRY_BASE_DELAY_MS;
    this.worker = new Worker<MailJobData, unknown, MailJobName>(
      MAIL_QUEUE,
      async (job: Job<MailJobData, unknown, MailJobName>) => {
        const attempts = job.opts.attempts ?? 1;
        const outcome = await run({ name: job.name, data: job.data, attempt: job.attemptsMade + 1, lastAttempt: job.attemptsMade + 1 >= attempts });
        if (!outcome.retry) return 'done';
        throw new Error(outcome.detail);
      },
      {
        connection,
        prefix: MAIL_QUEUE_PREFIX,
        concurrency: this.config.MAIL_CONCURRENCY,
        settings: { backoffStrategy: (attemptsMade: number) => base * 2 ** Math.max(0, attemptsMade - 1) },
      },
    );
    this.worker.on('error', (error) => this.logger.error({ err: error.message }, 'mail worker error'));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.worker?.close().catch((error: unknown) => this.logger.warn({ err: String(error) }, 'closing the mail worker failed'));
    await this.queue.close().catch(() => undefined);
    if (this.workerConnection !== null) await closeRedisClient(this.workerConnection).catch(() => undefined);
    await closeRedisClient(this.producerConnection).catch(() => undefined);
  }
}
