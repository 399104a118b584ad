import { closeRedisClient, createRedisClient } from '@svc/redis-client';
import type { RedisClient, RedisTarget } from '@svc/redis-client';
import { Worker } from 'bullmq';
import type { Job, Queue, WorkerOptions } from 'bullmq';
import type { Logger } from 'pino';

/** A scheduler the watch reads: its id (the job's name) and how often it runs. */
export interface WatchedSchedule {
  readonly name: string;
  readonly everyMs: number;
}

export interface WatchedWorkerParts<Data, Name extends string> {
  /** The queue the worker takes jobs from (its connection reads the schedulers' next runs). */
  readonly queue: Pick<Queue, 'name' | 'getJobScheduler'>;
  /** How the logs name the worker. */
  readonly label: string;
  readonly process: (job: Job<Data, unknown, Name>, token: string | undefined) => Promise<unknown>;
  /** The worker's options but its connection (each worker gets a new one from `connect`). */
  readonly options: Omit<WorkerOptions, 'connection'>;
  /** A new connection for a worker (closed with it). */
  readonly connect: () => RedisClient;
  /** Called with every worker made (the first and every replacement): its event handlers. */
  readonly onWorker: (worker: Worker<Data, unknown, Name>) => void;
  /** The schedulers whose due jobs the worker must take. */
  readonly schedules: readonly WatchedSchedule[];
  /** Writes the schedulers again (a scheduler whose next job was lost gets one). */
  readonly reschedule: () => Promise<void>;
  readonly logger: Logger;
  /** A due job nobody took for this long means the worker stalled (default: 3 runs of the shortest schedule counted at most 60 s, at least 5 s). */
  readonly stallAfterMs?: number;
  /** How often the schedulers are read (default: the shortest schedule, kept within 1 to 10 s). */
  readonly checkEveryMs?: number;
}

export interface WatchedWorker<Data, Name extends string> {
  /** The worker taking jobs now. */
  readonly current: Worker<Data, unknown, Name>;
  /** How many times a stalled worker was replaced. */
  readonly replaced: number;
  /** Stops the watch, then closes the worker (after its jobs in progress) and its connection. */
  close(): Promise<void>;
}

/**
 * A connection for BullMQ (a Queue's, or one Worker's): it retries forever
 * (`maxRetriesPerRequest: null`, as BullMQ requires) and logs its errors as warnings.
 */
export function queueConnection(target: RedisTarget, logger: Logger): RedisClient {
  const connection = createRedisClient(target, { maxRetriesPerRequest: null });
  connection.on('error', (error: Error) => logger.warn({ err: error }, 'redis connection error'));
  return connection;
}

/** How long a replaced worker may take to close before its connection is closed under it. */
const CLOSE_REPLACED_MS = 5_000;

/**
 * A BullMQ Worker that is replaced when it stops taking due jobs (docs/decisions/0030,
 * "A worker that stops taking its jobs"). After a Redis Cluster failover of the master holding
 * the queue, a Worker was seen (3 runs in 27 of the failover test) to stay idle for good: its
 * scheduler's next job due for over a minute, in `delayed` or `wait`, nothing active, no error
 * emitted. The watch reads every scheduler's next run (one small script per scheduler every
 * `checkEveryMs`, only while the worker is idle); when one is overdue by `stallAfterMs` and
 * no job of the queue started or ended in this process for as long, it writes the schedulers
 * again and starts a new Worker on a new connection (the old one is closed without waiting
 * for it). With several replicas each watches its own worker; a due job any of them takes
 * is no longer due.
 */
export function startWatchedWorker<Data, Name extends string>(parts: WatchedWorkerParts<Data, Name>): WatchedWorker<Data, Name> {
  const shortest = Math.min(60_000, ...parts.schedules.map((s) => s.everyMs));
  const stallAfterMs = parts.stallAfterMs ?? Math.max(5_000, 3 * shortest);
  const checkEveryMs = parts.checkEveryMs ?? Math.min(10_000, Math.max(1_000, shortest));
  let busy = 0;
  /** When a job of this process last started or ended (or the worker was made). */
  let lastActivity = Date.now();
  let replaced = 0;
  let closed = false;
  let checking = false;

  const make = (): { worker: Worker<Data, unknown, Name>; connection: RedisClient } => {
    const connection = parts.connect();
    const worker = new Worker<Data, unknown, Name>(parts.queue.name, async (job, token) => {
      busy += 1;
      lastActivity = Date.now();
      try {
        return await parts.process(job, token);
      } finally {
        busy -= 1;
        lastActivity = Date.now();
      }
    }, { ...parts.options, connection });
    lastActivity = Date.now();
    parts.onWorker(worker);
    return { worker, connection };
  };
  let running = make();

  /** The longest a scheduler's next run is overdue (ms; 0 when none is). */
  const overdueMs = async (): Promise<number> => {
    let worst = 0;
    for (const { name } of parts.schedules) {
      const scheduler = await parts.queue.getJobScheduler(name);
      const next = scheduler?.next;
      if (typeof next === 'number') worst = Math.max(worst, Date.now() - next);
    }
    return worst;
  };

  const replace = async (overdue: number): Promise<void> => {
    parts.logger.error({ worker: parts.label, overdue_ms: overdue }, `the ${parts.label} worker took no due job: starting a new one`);
    await parts.reschedule();
    if (closed) return;
    const old = running;
    running = make();
    replaced += 1;
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, CLOSE_REPLACED_MS).unref());
    void Promise.race([old.worker.close(true), timeout])
      .catch(() => undefined)
      .finally(() => void closeRedisClient(old.connection).catch(() => undefined));
  };

  /** Idle (no job running, none started or ended) for the whole stall bound. */
  const idle = (): boolean => busy === 0 && Date.now() - lastActivity > stallAfterMs;
  const check = async (): Promise<void> => {
    if (closed || checking || !idle()) return;
    checking = true;
    try {
      const overdue = await overdueMs();
      // A job that started during the read is no stall.
      if (overdue > stallAfterMs && !closed && idle()) await replace(overdue);
    } catch (error) {
      parts.logger.warn({ err: error, worker: parts.label }, `checking the ${parts.label} worker's schedules failed; it runs again`);
    } finally {
      checking = false;
    }
  };
  // A queue whose jobs only producers add has no due job to miss: nothing to watch.
  const timer = parts.schedules.length === 0 ? undefined : setInterval(() => void check(), checkEveryMs);
  timer?.unref();

  return {
    get current() {
      return running.worker;
    },
    get replaced() {
      return replaced;
    },
    async close() {
      closed = true;
      clearInterval(timer);
      try {
        await running.worker.close();
      } finally {
        await closeRedisClient(running.connection).catch(() => undefined);
      }
    },
  };
}
