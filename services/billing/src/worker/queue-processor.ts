import { QUEUE_PREFIX } from '@svc/contracts';
import { closeRedisClient } from '@svc/redis-client';
import type { RedisClient, RedisTarget } from '@svc/redis-client';
import { Queue } from 'bullmq';
import type { Job, JobsOptions } from 'bullmq';
import { queueConnection, startWatchedWorker } from './watched-worker';
import type { WatchedWorker } from './watched-worker';
import type { Logger } from 'pino';

/** A repeating job: one BullMQ job scheduler for the whole deployment, however many replicas. */
export interface Schedule<Name extends string = string> {
  /** The job's name, also the scheduler's id. */
  name: Name;
  everyMs: number;
  options: JobsOptions;
}

/**
 * One queue of the ledger worker and what runs its jobs: the only thing a queue needs to
 * write. `startQueues` gives each processor its own BullMQ Worker (concurrency 1 unless the
 * processor says more, on a blocking Redis connection of its own), creates its schedules at start and again after
 * Redis lost its data, replaces a worker that stopped taking its due jobs (watched-worker.ts),
 * logs its failures, and closes it (the current job finishes first).
 *
 * To add a queue: write `src/worker/<name>.processor.ts` with a function that returns a
 * QueueProcessor from the parts it needs, and add that one call to the list in
 * `ledger-worker.ts`. Its jobs' keys carry QUEUE_PREFIX like every queue's, so on a Redis
 * Cluster they share one slot (docs/architecture.md, "Redis: one node or a cluster").
 */
export interface QueueProcessor<Data = unknown, Name extends string = string> {
  /** The BullMQ queue's name (declared in packages/contracts, where the producers read it too). */
  readonly queue: string;
  /** How the logs name its worker: `<label> worker error`, `closing the <label> worker failed`. */
  readonly label: string;
  /** Repeating jobs; none when producers add the jobs. */
  readonly schedules: readonly Schedule<Name>[];
  /** Logged (warn) with the job's name, its attempts and the error when a job fails. */
  readonly failedMessage: string;
  /** How a failed job is logged instead (e.g. at info, for a delivery that is retried). */
  logFailure?(job: Job<Data, unknown, Name> | undefined, error: Error): void;
  /** Jobs run at once by this process's worker (default 1). */
  readonly concurrency?: number;
  /** The delay before retry `attemptsMade` of a job whose options say `backoff: { type: 'custom' }`. */
  readonly backoff?: (attemptsMade: number) => number;
  /** At most `max` jobs of this queue start per `duration` ms, across every worker of the deployment (BullMQ's limiter). */
  readonly limiter?: { readonly max: number; readonly duration: number };
  /** BullMQ's job lock (a job whose worker stopped renewing it for this long is taken again) and its stalled-job check's interval. */
  readonly lock?: { readonly durationMs: number; readonly stalledIntervalMs: number };
  /** Schedulers an earlier build kept on this queue, removed at start (their jobs would find no handler). */
  readonly retiredSchedules?: readonly string[];
  /**
   * Runs one job. A throw fails the job, and BullMQ retries it as the job's options say.
   * `token` is the job's lock, for a job that moves itself back to `delayed` (BullMQ's
   * `moveToDelayed` followed by a DelayedError, which is no failure and no attempt).
   */
  process(job: Job<Data, unknown, Name>, token?: string): Promise<unknown>;
}

export interface RunningQueues {
  /** Creates every schedule again (BullMQ keeps them in Redis: after a flush they are gone). */
  schedule(): Promise<void>;
  /** Each queue's watched worker, by queue name. */
  workers(): ReadonlyMap<string, WatchedWorker<unknown, string>>;
  /** Closes every worker (after its current job), then the queues and their connections. */
  close(): Promise<void>;
}

interface Started {
  processor: QueueProcessor;
  queue: Queue;
  worker: WatchedWorker<unknown, string> | null;
}

/** The watch's timing (tests shorten it); by default from each queue's shortest schedule. */
export interface QueueWatchOptions {
  stallAfterMs?: number;
  checkEveryMs?: number;
}

/**
 * Starts the processors in order: each one's queue (one shared connection for every queue),
 * its schedules, then its worker. Both kinds of connection retry forever
 * (`maxRetriesPerRequest: null`, as BullMQ requires). A failure closes what was started.
 */
export async function startQueues(processors: readonly QueueProcessor[], target: RedisTarget, logger: Logger, watch: QueueWatchOptions = {}): Promise<RunningQueues> {
  let connection: RedisClient | undefined;
  const started: Started[] = [];
  const schedule = async (entry: Started): Promise<void> => {
    for (const { name, everyMs, options } of entry.processor.schedules) {
      await entry.queue.upsertJobScheduler(name, { every: everyMs }, { name, data: {}, opts: options });
    }
  };
  const close = async (): Promise<void> => {
    for (const { processor, queue, worker } of started.toReversed()) {
      await worker?.close().catch((error: unknown) => logger.warn({ err: error }, `closing the ${processor.label} worker failed`));
      await queue.close().catch((error: unknown) => logger.warn({ err: error }, `closing the ${processor.label} queue failed`));
    }
    if (connection !== undefined) await closeRedisClient(connection).catch(() => undefined);
  };
  try {
    const queues = queueConnection(target, logger);
    connection = queues;
    for (const processor of processors) {
      const entry: Started = { processor, queue: new Queue(processor.queue, { connection: queues, prefix: QUEUE_PREFIX }), worker: null };
      started.push(entry);
      for (const retired of processor.retiredSchedules ?? []) await entry.queue.removeJobScheduler(retired);
      await schedule(entry);
      const backoff = processor.backoff;
      entry.worker = startWatchedWorker<unknown, string>({
        queue: entry.queue,
        label: processor.label,
        process: (job, token) => processor.process(job, token),
        options: {
          prefix: QUEUE_PREFIX,
          concurrency: processor.concurrency ?? 1,
          ...(backoff === undefined ? {} : { settings: { backoffStrategy: (attemptsMade: number) => backoff(attemptsMade) } }),
          ...(processor.limiter === undefined ? {} : { limiter: { max: processor.limiter.max, duration: processor.limiter.duration } }),
          ...(processor.lock === undefined ? {} : { lockDuration: processor.lock.durationMs, stalledInterval: processor.lock.stalledIntervalMs }),
        },
        connect: () => queueConnection(target, logger),
        onWorker(worker) {
          worker.on('failed', (job, error) => {
            if (processor.logFailure !== undefined) processor.logFailure(job, error);
            else logger.warn({ queue: processor.queue, job: job?.name, attempts: job?.attemptsMade, err: error }, processor.failedMessage);
          });
          worker.on('error', (error) => logger.error({ err: error }, `${processor.label} worker error`));
        },
        schedules: processor.schedules,
        reschedule: () => schedule(entry),
        logger,
        ...watch,
      });
    }
  } catch (error) {
    await close();
    throw error;
  }
  return {
    async schedule() {
      for (const entry of started) await schedule(entry);
    },
    workers() {
      const workers = new Map<string, WatchedWorker<unknown, string>>();
      for (const { processor, worker } of started) if (worker !== null) workers.set(processor.queue, worker);
      return workers;
    },
    close,
  };
}
