import { Module } from '@nestjs/common';
import type { DynamicModule } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { LEDGER_JOBS, LEDGER_QUEUE, QUEUE_PREFIX, RECONCILE_QUEUE } from '@svc/contracts';
import type { LedgerJobName, LedgerJobPayload } from '@svc/contracts';
import { Queue, Worker } from 'bullmq';
import type { Job } from 'bullmq';
import { closeRedisClient, createRedisClient } from '@svc/redis-client';
import type { Logger } from 'pino';
import { createBillingDatabase, DatabaseProbeRepository } from '../db/prisma.repository';
import { BacklogService, backlogView } from '../backlog/backlog.service';
import { WORKER_STATUS, WorkerHealthController } from '../backlog/worker-health.controller';
import type { WorkerStatus } from '../backlog/worker-health.controller';
import { READINESS } from '../health/health.controller';
import type { Readiness } from '../health/health.controller';
import { createListener } from '../http/listener';
import { freshRequestIds } from '@svc/http-edge';
import { LedgerRepository } from '../ledger/ledger.repository';
import { LedgerDrainService } from '../settlement/ledger-drain.service';
import { GrpcKeyUseSink, KeyUseRecorder } from '../key-use/key-use.recorder';
import { ReconciliationJob } from '../reconciliation/reconciliation-job';
import { ReconciliationRedisAdapter } from '../reconciliation/reconciliation-redis.adapter';
import { ReconciliationRepository } from '../reconciliation/reconciliation.repository';
import { ReconciliationService } from '../reconciliation/reconciliation.service';
import { SpendableBalanceAdapter } from '../spendable/spendable-balance.adapter';
import { SpendableOutboxService } from '../spendable/spendable-outbox.service';
import type { LedgerWorkerConfig } from '../worker-config';
import { ConfirmingStreamAdapter } from '../hydration/confirming-stream.adapter';
import { parseHydrationConfig } from '../hydration/hydration-config';
import { HydrationLoop } from '../hydration/hydration-loop';
import { HydrationRedisAdapter } from '../hydration/hydration-redis.adapter';
import { HydrationRepository } from '../hydration/hydration.repository';
import { HydrationService } from '../hydration/hydration.service';
import { LedgerWorkerMetrics } from '../metrics/metrics';
import { startMetricsServer } from '@svc/metrics';
import type { MetricsServer } from '@svc/metrics';
import { startWebhookProcessor } from '../webhook-delivery/webhook-processor';

/** Scheduler ids in BullMQ: the job names (one scheduler each for the whole deployment, however many replicas). */
const DRAIN_SCHEDULER = LEDGER_JOBS.drain;
const SWEEP_SCHEDULER = LEDGER_JOBS.sweep;
const RECONCILE_JOB = 'reconcile';

/** The worker's only HTTP surface: /healthz and /readyz (with the backlog). */
@Module({})
class WorkerHealthModule {
  static register(readiness: Readiness, status: WorkerStatus): DynamicModule {
    return {
      module: WorkerHealthModule,
      controllers: [WorkerHealthController],
      providers: [{ provide: READINESS, useValue: readiness }, { provide: WORKER_STATUS, useValue: status }],
    };
  }
}

export interface RunningLedgerWorker {
  url: string;
  /** The metrics listener's URL (null when METRICS_PORT could not be taken). */
  metricsUrl: string | null;
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
  const db = createBillingDatabase(config.DATABASE_URL, (error) => logger.warn({ err: error.message }, 'idle postgres connection failed; the pool replaces it'));
  const prisma = db.prisma;
  // BullMQ's connections must retry forever (maxRetriesPerRequest: null); the data
  // connection fails a command fast instead, so a job fails rather than hangs.
  // On Redis Cluster each is a Cluster client; the queues' keys share the hash tag of QUEUE_PREFIX.
  const target = { url: config.REDIS_URL, cluster: config.REDIS_CLUSTER };
  const workerConnection = createRedisClient(target, { maxRetriesPerRequest: null });
  const queueConnection = createRedisClient(target, { maxRetriesPerRequest: null });
  const data = createRedisClient(target, { maxRetriesPerRequest: 2, connectTimeout: 2_000 });
  const reconcileConnection = createRedisClient(target, { maxRetriesPerRequest: null });
  for (const connection of [workerConnection, queueConnection, data, reconcileConnection]) {
    connection.on('error', (error: Error) => logger.warn({ err: error }, 'redis connection error'));
  }
  const repository = new LedgerRepository(prisma, db.pool);
  const recovery = new HydrationRedisAdapter(data);
  const hydrationConfig = parseHydrationConfig();
  // The metrics read the backlog and reconciliation's counters at scrape (both made below).
  const metrics = new LedgerWorkerMetrics({ backlog: () => backlog.measure(), reconciliation: () => reconciliation.counters });
  // The drain confirms every record it made durable, so the gateways stop retaining it.
  const keyUses = new KeyUseRecorder(new GrpcKeyUseSink(config.ACCOUNT_ADMIN_GRPC_URL), logger.child({ component: 'key-use' }), config.KEY_USE_FLUSH_INTERVAL_MS);
  keyUses.start();
  const drain = new LedgerDrainService(new ConfirmingStreamAdapter(data, recovery), repository, logger.child({ component: 'drain' }), {
    batchSize: config.LEDGER_BATCH_SIZE,
    observer: metrics,
    onCommitted: (records) => keyUses.note(records),
  });
  const outbox = new SpendableOutboxService(repository, new SpendableBalanceAdapter(data), logger.child({ component: 'outbox' }));
  const database = new DatabaseProbeRepository(prisma);
  const backlog = new BacklogService(data);
  const reconciliation = new ReconciliationJob(
    new ReconciliationService(new ReconciliationRepository(prisma), new ReconciliationRedisAdapter(data), logger.child({ component: 'reconciliation' }), config.RECONCILE_STALE_AFTER_MS),
    logger.child({ component: 'reconciliation' }),
    { releaseStale: true, correctDrift: config.RECONCILE_REPAIR },
  );
  // While records are pending (e.g. PostgreSQL down), the backlog is logged every few seconds.
  let backlogTimer: NodeJS.Timeout | undefined;
  let lastLoggedPending = 0;
  const logBacklog = async (): Promise<void> => {
    const measured = await backlog.measure();
    if (measured.pendingRecords > 0 || lastLoggedPending > 0) logger.info(backlogView(measured), 'settlement backlog');
    lastLoggedPending = measured.pendingRecords;
  };

  let reconcileQueue: Queue | undefined;
  let reconcileWorker: Worker | undefined;
  let queue: Queue<LedgerJobPayload, unknown, LedgerJobName> | undefined;
  let worker: Worker<LedgerJobPayload, unknown, LedgerJobName> | undefined;
  let app: NestFastifyApplication | undefined;
  let hydration: HydrationLoop | undefined;
  let metricsServer: MetricsServer | null = null;
  let webhooks: Awaited<ReturnType<typeof startWebhookProcessor>> | undefined;
  const close = async (): Promise<void> => {
    await webhooks?.close();
    hydration?.stop();
    await metricsServer?.close();
    // The worker finishes its current job first: a batch is committed and its entries
    // removed, or not committed and left in the stream.
    if (backlogTimer !== undefined) clearInterval(backlogTimer);
    await reconcileWorker?.close().catch((error: unknown) => logger.warn({ err: error }, 'closing the reconcile worker failed'));
    await reconcileQueue?.close().catch((error: unknown) => logger.warn({ err: error }, 'closing the reconcile queue failed'));
    await worker?.close().catch((error: unknown) => logger.warn({ err: error }, 'closing the BullMQ worker failed'));
    await queue?.close().catch((error: unknown) => logger.warn({ err: error }, 'closing the BullMQ queue failed'));
    await app?.close().catch(() => undefined);
    await keyUses.stop().catch((error: unknown) => logger.warn({ err: error }, 'closing the key-use recorder failed'));
    await Promise.allSettled([workerConnection, queueConnection, data, reconcileConnection].map(closeRedisClient));
    await db.close();
  };

  try {
    const jobOptions = {
      attempts: 5,
      backoff: { type: 'exponential', delay: 500 },
      removeOnComplete: true,
      removeOnFail: { count: 100 },
    };
    queue = new Queue<LedgerJobPayload, unknown, LedgerJobName>(LEDGER_QUEUE, { connection: queueConnection, prefix: QUEUE_PREFIX });
    const ledgerQueue = queue;
    const scheduleLedgerJobs = async (): Promise<void> => {
      await ledgerQueue.upsertJobScheduler(DRAIN_SCHEDULER, { every: config.LEDGER_DRAIN_INTERVAL_MS }, { name: LEDGER_JOBS.drain, data: {}, opts: jobOptions });
      await ledgerQueue.upsertJobScheduler(SWEEP_SCHEDULER, { every: config.LEDGER_SWEEP_INTERVAL_MS }, { name: LEDGER_JOBS.sweep, data: {}, opts: jobOptions });
    };
    await scheduleLedgerJobs();

    const process = async (job: Job<LedgerJobPayload, unknown, LedgerJobName>): Promise<unknown> => {
      switch (job.name) {
        case LEDGER_JOBS.drain: {
          const result = await drain.drain();
          if (result.accounts > 0) logger.debug({ accounts: result.accounts, written: result.written, skipped: result.skipped, dead_lettered: result.deadLettered }, 'drain done');
          await backlog.recordDrained(result.written + result.skipped).catch(() => undefined);
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
    worker = new Worker<LedgerJobPayload, unknown, LedgerJobName>(LEDGER_QUEUE, process, { connection: workerConnection, prefix: QUEUE_PREFIX, concurrency: 1 });
    worker.on('failed', (job, error) => logger.warn({ job: job?.name, attempts: job?.attemptsMade, err: error }, 'ledger job failed; it will be retried'));
    worker.on('error', (error) => logger.error({ err: error }, 'ledger worker error'));

    const readiness: Readiness = {
      async check(): Promise<Record<string, boolean>> {
        const [postgres, redisUp] = await Promise.all([database.ping(), data.ping().then((r) => r === 'PONG', () => false)]);
        return { postgres, redis: redisUp };
      },
    };
    const reconcileJobs = new Queue(RECONCILE_QUEUE, { connection: queueConnection, prefix: QUEUE_PREFIX });
    reconcileQueue = reconcileJobs;
    const scheduleReconcile = async (): Promise<void> => {
      await reconcileJobs.upsertJobScheduler(RECONCILE_JOB, { every: config.RECONCILE_INTERVAL_MS }, {
        name: RECONCILE_JOB, data: {}, opts: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 20 } },
      });
    };
    await scheduleReconcile();
    webhooks = await startWebhookProcessor({ prisma, redis: target, logger, accountAdminGrpcUrl: config.ACCOUNT_ADMIN_GRPC_URL });
    reconcileWorker = new Worker(RECONCILE_QUEUE, async () => reconciliation.run(), { connection: reconcileConnection, prefix: QUEUE_PREFIX, concurrency: 1 });
    reconcileWorker.on('failed', (_job, error) => logger.warn({ err: error }, 'reconciliation failed; it runs again at the next interval'));
    reconcileWorker.on('error', (error) => logger.error({ err: error }, 'reconcile worker error'));
    backlogTimer = setInterval(() => {
      logBacklog().catch((error: unknown) => logger.warn({ err: error }, 'measuring the backlog failed'));
    }, config.BACKLOG_LOG_INTERVAL_MS);
    const status: WorkerStatus = {
      async snapshot(): Promise<Record<string, unknown>> {
        return { backlog: backlogView(await backlog.measure()), reconciliation: { ...reconciliation.counters } };
      },
    };
    app = await createListener({ module: WorkerHealthModule.register(readiness, status), logger: logger.child({ listener: 'health' }), requestIds: freshRequestIds, requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS, http: metrics.http });
    await app.listen(config.PORT, config.HOST);
    metricsServer = await startMetricsServer({ registry: metrics.registry, port: config.METRICS_PORT, host: config.HOST, log: logger });
    // Recovery from a Redis that lost its data: cold accounts are rebuilt from the ledger, and
    // the job schedulers (kept in Redis by BullMQ) are created again.
    hydration = new HydrationLoop(
      new HydrationService(new HydrationRepository(prisma), recovery, logger.child({ component: 'hydration' }), { graceMs: hydrationConfig.HYDRATION_GRACE_MS }),
      recovery,
      logger.child({ component: 'hydration' }),
      {
        intervalMs: hydrationConfig.HYDRATION_INTERVAL_MS,
        batch: 50,
        onEpochChange: async () => {
          await scheduleLedgerJobs();
          await scheduleReconcile();
          await webhooks?.schedule();
        },
      },
    );
    hydration.start();
    // A crash between a grant's commit and its Redis apply is repaired at start too.
    await outbox.applyPending().catch((error: unknown) => logger.warn({ err: error }, 'outbox apply at start failed; the sweep retries'));
    return { url: urlOf(app), metricsUrl: metricsServer?.url ?? null, close };
  } catch (error) {
    await close();
    throw error;
  }
}
