import { WEBHOOK_DISPATCH_QUEUE } from '@svc/contracts';
import type { Queue } from 'bullmq';
import type { WebhookDeliveries } from '../services/outbound-webhooks/delivery.service';
import type { QueueProcessor } from './queue-processor';
import { DELIVER_JOB, deliverJobOptions } from './webhook-delivery.processor';
import type { DeliverJobData } from './webhook-delivery.processor';

const DISPATCH_JOB = 'dispatch';
const DISPATCH_BATCH = 500;

export interface DispatchParts {
  deliveries: WebhookDeliveries;
  /** WEBHOOK_QUEUE, where each pending delivery becomes one `deliver` job. */
  deliverQueue: Pick<Queue<DeliverJobData, unknown, typeof DELIVER_JOB>, 'addBulk'>;
  everyMs: number;
  /** A pending delivery queued longer ago than this (the longest retry delay and a margin) is added again. */
  requeueOlderThanMs: number;
}

/**
 * WEBHOOK_DISPATCH_QUEUE: every WEBHOOK_DISPATCH_INTERVAL_MS, the pending deliveries the
 * events' transactions wrote (the outbox) become `deliver` jobs on WEBHOOK_QUEUE (job id
 * `<delivery>-<generation>`, so adding one twice is harmless), each naming its account, whose
 * share of the delivery slots it takes. A queue of its own: dispatch never waits for a free
 * delivery slot.
 */
export function webhookDispatchProcessor(parts: DispatchParts): QueueProcessor<unknown, typeof DISPATCH_JOB> {
  return {
    queue: WEBHOOK_DISPATCH_QUEUE,
    label: 'webhook dispatch',
    schedules: [{ name: DISPATCH_JOB, everyMs: parts.everyMs, options: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 20 } } }],
    failedMessage: 'webhook dispatch failed; it runs again at the next interval',
    async process() {
      const due = await parts.deliveries.toQueue(DISPATCH_BATCH, parts.requeueOlderThanMs);
      if (due.length === 0) return 0;
      await parts.deliverQueue.addBulk(due.map((d) => ({
        name: DELIVER_JOB,
        data: { deliveryId: d.id, generation: d.generation, accountId: d.accountId },
        opts: deliverJobOptions(`${d.id}-${d.generation}`),
      })));
      await parts.deliveries.markQueued(due);
      return due.length;
    },
  };
}
