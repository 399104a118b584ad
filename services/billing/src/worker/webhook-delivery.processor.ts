import { QUEUE_PREFIX, WEBHOOK_QUEUE, WEBHOOK_RESPONSE_HEAD_BYTES, WEBHOOK_SIGNATURE_HEADER } from '@svc/contracts';
import { closeRedisClient } from '@svc/redis-client';
import { Queue } from 'bullmq';
import type { Job } from 'bullmq';
import type { Logger } from 'pino';
import type { PrismaClient } from '../generated/prisma/client';
import { BalanceThresholds } from '../services/outbound-webhooks/balance-thresholds';
import { GrpcKeyLimitSource, KeyLimitThresholds } from '../services/outbound-webhooks/key-limit-thresholds';
import type { KeyLimitSource } from '../services/outbound-webhooks/key-limit-thresholds';
import { postWebhook } from '../services/outbound-webhooks/deliver';
import type { Resolver } from '../services/outbound-webhooks/deliver';
import { DeliveryRepository } from '../stores/webhook-deliveries.repository';
import { signatureHeader } from '../services/outbound-webhooks/signature';
import { queueConnection, startWatchedWorker } from './watched-worker';
import { parseWebhookConfig, retryDelayMs } from '../services/outbound-webhooks/webhook-config';
import type { WebhookConfig } from '../services/outbound-webhooks/webhook-config';

/** The jobs of WEBHOOK_QUEUE: `tick` (a job scheduler: dispatch new deliveries, evaluate thresholds) and one `deliver` per delivery. */
type WebhookJob = { name: 'tick'; data: Record<string, never> } | { name: 'deliver'; data: { deliveryId: string; generation: number } };
type JobName = WebhookJob['name'];
type JobData = WebhookJob['data'];

const TICK_SCHEDULER = 'tick';
/** Far more than the retry window allows: the window, not BullMQ's count, ends a delivery. */
const DELIVER_ATTEMPTS = 100_000;
const DISPATCH_BATCH = 500;

export interface WebhookProcessorDeps {
  prisma: PrismaClient;
  redis: { url: string; cluster: boolean };
  logger: Logger;
  /** account-admin's gRPC address (key limits for key.limit.threshold). */
  accountAdminGrpcUrl: string;
  config?: WebhookConfig;
  /** Tests: where key limits come from (else GetKeyLimits at accountAdminGrpcUrl). */
  keyLimits?: KeyLimitSource;
  /** Tests: the DNS answers deliveries see. */
  resolver?: Resolver;
  /** Automatic top-up, evaluated at each tick after balance.low (src/auto-topup); none: no top-ups. */
  autoTopups?: { evaluate(): Promise<number> };
}

export interface WebhookProcessor {
  /** Re-creates the job scheduler (after Redis lost its data). */
  schedule(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Outgoing webhooks in the ledger worker (docs/decisions/0028), on their own BullMQ queue
 * and connections so the ledger's jobs never wait behind a slow receiver: every
 * WEBHOOK_DISPATCH_INTERVAL_MS a `tick` puts pending deliveries on the queue, evaluates
 * the balance and key-limit thresholds and makes automatic top-ups; each `deliver` job POSTs one event to one endpoint, signed, and is
 * retried with exponential backoff until it succeeds or its window ends.
 */
export async function startWebhookProcessor(deps: WebhookProcessorDeps): Promise<WebhookProcessor> {
  const config = deps.config ?? parseWebhookConfig();
  const log = deps.logger.child({ component: 'webhooks' });
  const policy = { allowHttpAndLoopback: config.WEBHOOK_ALLOW_HTTP_AND_LOOPBACK };
  const deliveries = new DeliveryRepository(deps.prisma);
  const thresholds = new BalanceThresholds(deps.prisma);
  const limitSource = deps.keyLimits ?? new GrpcKeyLimitSource(deps.accountAdminGrpcUrl);
  const keyLimits = new KeyLimitThresholds(deps.prisma, limitSource);
  const connection = queueConnection(deps.redis, log);
  const queue = new Queue<JobData, unknown, JobName>(WEBHOOK_QUEUE, { connection, prefix: QUEUE_PREFIX });

  const dispatch = async (): Promise<number> => {
    // A pending delivery queued longer ago than the longest retry delay may have lost its job
    // (Redis lost its data): it is added again under the same job id, which BullMQ ignores
    // while the job exists; its queued_at moves, so each is re-checked once per such period.
    const due = await deliveries.toQueue(DISPATCH_BATCH, config.WEBHOOK_RETRY_MAX_DELAY_MS + 60_000);
    if (due.length === 0) return 0;
    await queue.addBulk(due.map((d) => ({
      name: 'deliver' as const,
      data: { deliveryId: d.id, generation: d.generation },
      opts: { jobId: `${d.id}-${d.generation}`, attempts: DELIVER_ATTEMPTS, backoff: { type: 'webhook' }, removeOnComplete: true, removeOnFail: { count: 1_000 } },
    })));
    await deliveries.markQueued(due);
    return due.length;
  };

  const deliver = async (deliveryId: string, generation: number): Promise<string> => {
    const now = new Date();
    const work = await deliveries.load(deliveryId, now);
    if (work === null || work.generation !== generation || work.status !== 'pending') return 'stale';
    if (work.endpoint === null) {
      await deliveries.close(work.id, generation, 'cancelled');
      return 'cancelled';
    }
    if (!work.endpoint.enabled) {
      await deliveries.close(work.id, generation, 'failed');
      return 'endpoint_disabled';
    }
    const body = JSON.stringify(work.event);
    const headers = { [WEBHOOK_SIGNATURE_HEADER]: signatureHeader(body, work.endpoint.secrets, now.getTime() / 1000), 'svc-event-id': work.event.id, 'svc-delivery-id': work.id };
    const result = await postWebhook(work.endpoint.url, body, headers, { policy, timeoutMs: config.WEBHOOK_TIMEOUT_MS, responseHeadBytes: WEBHOOK_RESPONSE_HEAD_BYTES, resolver: deps.resolver });
    const outcome = await deliveries.recordAttempt(work, now, result, config.WEBHOOK_RETRY_WINDOW_MS);
    if (outcome === 'endpoint_disabled') log.warn({ endpoint_id: work.endpoint.id, account_id: work.event.account_id }, 'webhook endpoint disabled after failing for the whole retry window');
    if (outcome === 'retry') throw new Error(`delivery ${work.id} failed: ${result.error ?? 'unknown'}`);
    return outcome;
  };

  const processJob = async (job: Job<JobData, unknown, JobName>): Promise<unknown> => {
    if (job.name === 'tick') {
      // Each part on its own: account-admin being down (key limits) must not stop deliveries.
      const part = async (name: string, run: () => Promise<number>): Promise<number | null> => run().catch((error: unknown) => {
        log.warn({ err: error instanceof Error ? error.message : String(error), part: name }, 'webhook tick part failed; it runs again at the next tick');
        return null;
      });
      const queued = await part('dispatch', dispatch);
      const low = await part('balance.low', () => thresholds.evaluate());
      const limits = await part('key.limit.threshold', () => keyLimits.evaluate());
      const autoTopups = deps.autoTopups;
      const topups = autoTopups === undefined ? 0 : await part('auto_topup', () => autoTopups.evaluate());
      return { queued, low, limits, topups };
    }
    const data = job.data as { deliveryId: string; generation: number };
    return deliver(data.deliveryId, data.generation);
  };

  const schedule = async (): Promise<void> => {
    await queue.upsertJobScheduler(TICK_SCHEDULER, { every: config.WEBHOOK_DISPATCH_INTERVAL_MS }, {
      name: 'tick', data: {}, opts: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 20 } },
    });
  };
  // Replaced when it stops taking its due ticks (src/queues/watched-worker.ts).
  const worker = startWatchedWorker<JobData, JobName>({
    queue,
    label: 'webhook',
    process: processJob,
    options: { prefix: QUEUE_PREFIX, concurrency: config.WEBHOOK_CONCURRENCY, settings: { backoffStrategy: (attemptsMade: number) => retryDelayMs(attemptsMade, config) } },
    connect: () => queueConnection(deps.redis, log),
    onWorker(started) {
      started.on('failed', (job, error) => {
        if (job?.name === 'deliver') log.info({ delivery_id: (job.data as { deliveryId: string }).deliveryId, attempts: job.attemptsMade, err: error.message }, 'webhook attempt failed; retried later');
        else log.warn({ job: job?.name, err: error }, 'webhook job failed');
      });
      started.on('error', (error) => log.error({ err: error }, 'webhook worker error'));
    },
    schedules: [{ name: TICK_SCHEDULER, everyMs: config.WEBHOOK_DISPATCH_INTERVAL_MS }],
    reschedule: schedule,
    logger: log,
  });
  try {
    await schedule();
  } catch (error) {
    await worker.close().catch(() => undefined);
    await queue.close().catch(() => undefined);
    await closeRedisClient(connection).catch(() => undefined);
    limitSource.close();
    throw error;
  }
  return {
    schedule,
    async close() {
      await worker.close().catch((error: unknown) => log.warn({ err: error }, 'closing the webhook worker failed'));
      await queue.close().catch((error: unknown) => log.warn({ err: error }, 'closing the webhook queue failed'));
      await closeRedisClient(connection).catch(() => undefined);
      limitSource.close();
    },
  };
}
