import { Writable } from 'node:stream';
import { QUEUE_PREFIX } from '@svc/contracts';
import { newId } from '@svc/ids';
import { waitFor } from '@svc/test-kit';
import { Queue } from 'bullmq';
import type { Job } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import { startQueues } from '../src/worker/queue-processor';
import type { QueueProcessor, RunningQueues } from '../src/worker/queue-processor';
import { LEDGER_REDIS_URL } from './ledger-fixtures';

/**
 * startQueues against a real Redis (the ledger suites' database; every queue here has a
 * name of its own, so nothing it does touches theirs): each processor's schedules run on its
 * own worker, a failure is logged with the processor's message, schedules come back after
 * Redis lost them, a worker that stopped taking its due jobs is replaced (and one busy with a
 * long job is not), and close waits for the job in progress.
 */
const target = { url: LEDGER_REDIS_URL, cluster: false };
let lines: Record<string, unknown>[];
let running: RunningQueues | null = null;
let redis: Redis;
/** Every queue a test made, removed from Redis after it. */
const made: string[] = [];

function queueName(kind: string): string {
  const name = `test-${kind}-${newId('request')}`;
  made.push(name);
  return name;
}

function logger(): pino.Logger {
  lines = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return pino({ level: 'debug' }, sink);
}

function counting(queue: string, everyMs: number, seen: string[], options: { fail?: boolean; holdMs?: number } = {}): QueueProcessor<unknown, 'tick'> {
  return {
    queue,
    label: queue,
    schedules: [{ name: 'tick', everyMs, options: { attempts: 1, removeOnComplete: true, removeOnFail: true } }],
    failedMessage: `${queue} failed; it runs again`,
    async process(job: Job<unknown, unknown, 'tick'>) {
      seen.push(job.name);
      if (options.holdMs !== undefined) await new Promise((resolve) => setTimeout(resolve, options.holdMs));
      if (options.fail === true) throw new Error('planned failure');
      return seen.length;
    },
  };
}

beforeAll(() => {
  redis = new Redis(LEDGER_REDIS_URL);
});

afterEach(async () => {
  await running?.close();
  running = null;
  for (const name of made.splice(0)) {
    const queue = new Queue(name, { connection: redis, prefix: QUEUE_PREFIX });
    await queue.obliterate({ force: true });
    await queue.close();
  }
});

afterAll(async () => {
  await redis.quit();
});

describe('startQueues', () => {
  it('runs each processor\'s schedule on a worker of its own', async () => {
    const first: string[] = [];
    const second: string[] = [];
    const [a, b] = [queueName('a'), queueName('b')];
    running = await startQueues([counting(a, 50, first), counting(b, 50, second)], target, logger());
    await waitFor('both processors to run their job twice', async () => (first.length >= 2 && second.length >= 2 ? true : undefined), { timeoutMs: 10_000 });
    expect(new Set([...first, ...second])).toEqual(new Set(['tick']));
  });

  it('logs a failed job with the processor\'s message, the job\'s name and its attempts', async () => {
    const queue = queueName('fail');
    running = await startQueues([counting(queue, 50, [], { fail: true })], target, logger());
    const failed = await waitFor('the failure to be logged', async () => lines.find((line) => line.msg === `${queue} failed; it runs again`), { timeoutMs: 10_000 });
    expect(failed).toMatchObject({ level: 40, queue, job: 'tick', attempts: 1 });
  });

  it('creates the schedules again when Redis lost them', async () => {
    const queue = queueName('lost');
    running = await startQueues([counting(queue, 60_000, [])], target, logger());
    const inspect = new Queue(queue, { connection: redis, prefix: QUEUE_PREFIX });
    try {
      expect((await inspect.getJobSchedulers()).map((s) => s.key)).toEqual(['tick']);
      await inspect.removeJobScheduler('tick');
      expect(await inspect.getJobSchedulers()).toEqual([]);
      await running.schedule();
      expect((await inspect.getJobSchedulers()).map((s) => s.key)).toEqual(['tick']);
    } finally {
      await inspect.close();
    }
  });

  it('replaces a worker that stopped taking its due jobs, and the schedule runs again', async () => {
    const seen: string[] = [];
    const queue = queueName('stall');
    running = await startQueues([counting(queue, 100, seen)], target, logger(), { stallAfterMs: 600, checkEveryMs: 100 });
    await waitFor('the job to run', async () => (seen.length >= 2 ? true : undefined), { timeoutMs: 10_000 });
    const watched = running.workers().get(queue);
    if (watched === undefined) throw new Error('no worker for the queue');
    const first = watched.current;
    // The worker stops fetching (as the stalled one after a failover did: idle, no error).
    await first.pause(true);
    const stopped = seen.length;
    const replaced = await waitFor('a new worker to take the due job', async () => (seen.length > stopped + 1 ? watched.current : undefined), { timeoutMs: 10_000 });
    expect(replaced).not.toBe(first);
    expect(watched.replaced).toBe(1);
    const logged = lines.find((line) => line.msg === `the ${queue} worker took no due job: starting a new one`);
    expect(logged).toMatchObject({ level: 50, worker: queue });
    expect(Number(logged?.overdue_ms)).toBeGreaterThan(600);
  });

  it('leaves a worker alone while it runs a job longer than the stall bound', async () => {
    const seen: string[] = [];
    const queue = queueName('long');
    running = await startQueues([counting(queue, 100, seen, { holdMs: 1_500 })], target, logger(), { stallAfterMs: 300, checkEveryMs: 100 });
    await waitFor('two long jobs to run', async () => (seen.length >= 2 ? true : undefined), { timeoutMs: 10_000 });
    expect(running.workers().get(queue)?.replaced).toBe(0);
    expect(lines.filter((line) => line.msg === `the ${queue} worker took no due job: starting a new one`)).toEqual([]);
  });

  it('finishes the job in progress before close resolves', async () => {
    const seen: string[] = [];
    const done: number[] = [];
    const queue = queueName('close');
    const processor = counting(queue, 50, seen, { holdMs: 400 });
    const timed: QueueProcessor<unknown, 'tick'> = {
      ...processor,
      async process(job) {
        const result = await processor.process(job);
        done.push(Date.now());
        return result;
      },
    };
    const started = await startQueues([timed], target, logger());
    await waitFor('a job to start', async () => (seen.length > 0 ? true : undefined), { timeoutMs: 10_000 });
    await started.close();
    expect(done.length).toBe(seen.length);
  });
});
