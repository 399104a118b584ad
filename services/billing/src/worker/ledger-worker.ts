import { Module } from '@nestjs/common';
import type { DynamicModule } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { LEDGER_JOBS, LEDGER_QUEUE } from '@svc/contracts';
import type { LedgerJobName, LedgerJobPayload } from '@svc/contracts';
import { Queue, Worker } from 'bullmq';
import type { Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createPrismaClient, DatabaseProbeRepository } from '../db/prisma.repository';
import { HealthController, READINESS } from '../health/health.controller';
import type { Readiness } from '../health/health.controller';
import { createListener } from '../http/listener';
import { freshRequestIds } from '../http/request-id';
import { LedgerRepository } from '../ledger/ledger.repository';
import { LedgerDrainService } from '../settlement/ledger-drain.service';
import { SettlementStreamAdapter } from '../settlement/settlement-stream.adapter';
import { SpendableBalanceAdapter } from '../spendable/spendable-balance.adapter';
import { SpendableOutboxService } from '../spendable/spendable-outbox.service';
import type { LedgerWorkerConfig } from '../worker-config';

/** Scheduler ids in BullMQ: the job names (one scheduler each for the whole deployment, however many replicas). */
const DRAIN_SCHEDULER = LEDGER_JOBS.drain;
const SWEEP_SCHEDULER = LEDGER_JOBS.sweep;

/** The worker's only HTTP surface: /healthz and /readyz. */
@Module({})
class WorkerHealthModule {
  static register(readiness: Readiness): DynamicModule {
    return { module: WorkerHealthModule, controllers: [HealthController], providers: [{ provide: READINESS, useValue: readiness }] };
  }
}

export interface RunningLedgerWorker {
  url: string;
  close(): Promise<void>;
}

function urlOf(app: NestFastifyApplication): string {
  const address = app.getHttpServer().address();
  if (address === null || typeof address === 'string') throw new Error('listener has no TCP address');
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}`;
}

/**
 * The ledger worker: a BullMQ Worker on LEDGER_QUEUE with two repeating jobs (job
 * schedulers), `drain` every LEDGER_DRAIN_INTERVAL_MS and `sweep` every
 * LEDGER_SWEEP_INTERVAL_MS, plus the health listener. Concurrency 1 per process; several
 * replicas are safe because every write is idempotent in Postgres.
 */
export async function startLedgerWorker(config: LedgerWorkerConfig, logger: Logger): Promise<RunningLedgerWorker> {
  const prisma = createPrismaClient(config.DATABASE_URL);
  // BullMQ's connections must retry forever (maxRetriesPerRequest: null); the data
  // connection fails a command fast instead, so a job fails rather than hangs.
  const workerConnection = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null });
  const queueConnection = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null });
  const data = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 2, connectTimeout: 2_000 });
  for (const connection of [workerConnection, queueConnection, data]) {
    connection.on('error', (error: Error) => logger.warn({ err: error }, 'redis connection error'));
  }
  const repository = new LedgerRepository(prisma);
  const drain = new LedgerDrainService(new SettlementStreamAdapter(data), repository, logger.child({ component: 'drain' }), {
    batchSize: config.LEDGER_BATCH_SIZE,
  });
  const outbox = new SpendableOutboxService(repository, new SpendableBalanceAdapter(data), logger.child({ component: 'outbox' }));
  const database = new DatabaseProbeRepository(prisma);

  let queue: Queue<LedgerJobPayload, unknown, LedgerJobName> | undefined;
  let worker: Worker<LedgerJobPayload, unknown, LedgerJobName> | undefined;
  let app: NestFastifyApplication | undefined;
  const close = async (): Promise<void> => {
    // The worker finishes its current job first: a batch is committed and its entries
    // removed, or not committed and left in the stream.
    await worker?.close().catch((error: unknown) => logger.warn({ err: error }, 'closing the BullMQ worker failed'));
    await queue?.close().catch((error: unknown) => logger.warn({ err: error }, 'closing the BullMQ queue failed'));
    await app?.close().catch(() => undefined);
    await Promise.allSettled([workerConnection, queueConnection, data].map((c) => c.quit().catch(() => c.disconnect())));
    await prisma.$disconnect();
  };

  try {
    const jobOptions = {
      attempts: 5,
      backoff: { type: 'exponential', delay: 500 },
      removeOnComplete: true,
      removeOnFail: { count: 100 },
    };
    queue = new Queue<LedgerJobPayload, unknown, LedgerJobName>(LEDGER_QUEUE, { connection: queueConnection });
    await queue.upsertJobScheduler(DRAIN_SCHEDULER, { every: config.LEDGER_DRAIN_INTERVAL_MS }, { name: LEDGER_JOBS.drain, data: {}, opts: jobOptions });
    await queue.upsertJobScheduler(SWEEP_SCHEDULER, { every: config.LEDGER_SWEEP_INTERVAL_MS }, { name: LEDGER_JOBS.sweep, data: {}, opts: jobOptions });

    const process = async (job: Job<LedgerJobPayload, unknown, LedgerJobName>): Promise<unknown> => {
      switch (job.name) {
        case LEDGER_JOBS.drain: {
          const result = await drain.drain();
          if (result.accounts > 0) logger.debug({ ...result }, 'drain done');
          return result;
        }
        case LEDGER_JOBS.sweep: {
          const marked = await drain.sweep();
          const applied = await outbox.applyPending();
          if (applied > 0) logger.info({ applied }, 'outbox applied ledger entries to spendable balances');
          return { marked, applied };
        }
        default: {
          const unknown: never = job.name;
          throw new Error(`unknown ledger job ${String(unknown)}`);
        }
      }
    };
    worker = new Worker<LedgerJobPayload, unknown, LedgerJobName>(LEDGER_QUEUE, process, { connection: workerConnection, concurrency: 1 });
    worker.on('failed', (job, error) => logger.warn({ job: job?.name, attempts: job?.attemptsMade, err: error }, 'ledger job failed; it will be retried'));
    worker.on('error', (error) => logger.error({ err: error }, 'ledger worker error'));

    const readiness: Readiness = {
      async check(): Promise<Record<string, boolean>> {
        const [postgres, redisUp] = await Promise.all([database.ping(), data.ping().then((r) => r === 'PONG', () => false)]);
        return { postgres, redis: redisUp };
      },
    };
    app = await createListener({ module: WorkerHealthModule.register(readiness), logger: logger.child({ listener: 'health' }), requestIds: freshRequestIds });
    await app.listen(config.PORT, config.HOST);
    // A crash between a grant's commit and its Redis apply is repaired at start too.
    await outbox.applyPending().catch((error: unknown) => logger.warn({ err: error }, 'outbox apply at start failed; the sweep retries'));
    return { url: urlOf(app), close };
  } catch (error) {
    await close();
    throw error;
  }
}
