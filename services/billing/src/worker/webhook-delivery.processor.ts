import { WEBHOOK_QUEUE } from '@svc/contracts';
import { DelayedError } from 'bullmq';
import type { JobsOptions } from 'bullmq';
import type { Logger } from 'pino';
import { AccountSlots } from '../services/outbound-webhooks/account-slots';
import { DeliveryRetry } from '../services/outbound-webhooks/delivery.service';
import type { WebhookDeliveries } from '../services/outbound-webhooks/delivery.service';
import type { QueueProcessor } from './queue-processor';

export const DELIVER_JOB = 'deliver';
/**
 * A repeating job that does nothing: the watch of the queue's worker (watched-worker.ts,
 * decision 30) sees a worker that stopped taking jobs by a scheduler's overdue run, and a queue
 * whose jobs only producers add has none.
 */
const WATCH_JOB = 'watch';

/** A `deliver` job: one delivery at one generation; its account (jobs an earlier build queued have none: read from the delivery). */
export interface DeliverJobData {
  deliveryId: string;
  generation: number;
  accountId?: string;
}

/** Far more than the retry window allows: the window, not BullMQ's count, ends a delivery. */
const DELIVER_ATTEMPTS = 100_000;
/** How long a delivery whose account holds its share waits before it looks for a slot again. */
const WAIT_FOR_SLOT_MS = 500;

/** A deliver job's options: retried with the webhook backoff (30 s doubling to an hour) until the delivery's window ends. */
export function deliverJobOptions(jobId: string): JobsOptions {
  return { jobId, attempts: DELIVER_ATTEMPTS, backoff: { type: 'webhook' }, removeOnComplete: true, removeOnFail: { count: 1_000 } };
}

export interface DeliveryParts {
  deliveries: WebhookDeliveries;
  /** WEBHOOK_CONCURRENCY: deliveries in flight at once in this process. */
  concurrency: number;
  /** WEBHOOK_ACCOUNT_CONCURRENCY: of those, at most this many of one account. */
  perAccount: number;
  /** The delay before retry `attemptsMade` (retryDelayMs with the worker's settings). */
  retryDelayMs: (attemptsMade: number) => number;
  logger: Logger;
  /** How often the watch job runs (WEBHOOK_DISPATCH_INTERVAL_MS). */
  watchEveryMs: number;
  /** Tests: when a delivery waits for its account's share (deferred without a slot). */
  onWait?: (accountId: string) => void;
}

/**
 * WEBHOOK_QUEUE: each `deliver` job POSTs one event to one endpoint, signed, and is retried
 * with exponential backoff until it succeeds or its window ends (docs/decisions/0028). Fair
 * between accounts (docs/webhooks.md, "Fairness"): of the WEBHOOK_CONCURRENCY slots, one
 * account holds at most WEBHOOK_ACCOUNT_CONCURRENCY; a further delivery of that account is put
 * back to wait (BullMQ's moveToDelayed, which is no attempt and no failure) and holds no slot,
 * so one account's slow or silent endpoints never hold up another account's deliveries.
 */
export function webhookDeliveryProcessor(parts: DeliveryParts): QueueProcessor<DeliverJobData, string> {
  const slots = new AccountSlots(parts.perAccount);
  const log = parts.logger;
  return {
    queue: WEBHOOK_QUEUE,
    label: 'webhook',
    schedules: [{ name: WATCH_JOB, everyMs: parts.watchEveryMs, options: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 20 } } }],
    // The dispatch tick of earlier builds ran on this queue; it has its own now.
    retiredSchedules: ['tick'],
    concurrency: parts.concurrency,
    backoff: parts.retryDelayMs,
    failedMessage: 'webhook job failed',
    logFailure(job, error) {
      if (error instanceof DeliveryRetry || error.name === 'DeliveryRetry') {
        log.info({ delivery_id: job?.data.deliveryId, attempts: job?.attemptsMade, err: error.message }, 'webhook attempt failed; retried later');
      } else log.warn({ job: job?.name, err: error }, 'webhook job failed');
    },
    async process(job, token) {
      // The watch job, or a tick an earlier build queued: nothing to do.
      if (job.name !== DELIVER_JOB) return job.name === WATCH_JOB ? 'watched' : 'superseded';
      const wait = async (accountId: string): Promise<never> => {
        parts.onWait?.(accountId);
        await job.moveToDelayed(Date.now() + WAIT_FOR_SLOT_MS, token);
        throw new DelayedError();
      };
      const now = new Date();
      const known = job.data.accountId;
      let release = known === undefined ? null : slots.take(known);
      if (known !== undefined && release === null) return wait(known);
      const work = await parts.deliveries.load(job.data.deliveryId, job.data.generation, now);
      if (work === 'stale') {
        release?.();
        return 'stale';
      }
      if (release === null) {
        release = slots.take(work.event.account_id);
        if (release === null) return wait(work.event.account_id);
      }
      try {
        return await parts.deliveries.attempt(work, now);
      } finally {
        release();
      }
    },
  };
}
