import { AUTO_TOPUP_QUEUE } from '@svc/contracts';
import type { QueueProcessor } from './queue-processor';

const EVALUATE_JOB = 'evaluate';

/**
 * AUTO_TOPUP_QUEUE: every WEBHOOK_DISPATCH_INTERVAL_MS, automatic top-up's one pass (src/
 * services/purchases/auto-topup.service.ts): rearm, open crossings under the monthly cap,
 * charge what is due. A failed pass is not retried: the next interval runs it again.
 */
export function autoTopupProcessor(autoTopups: { evaluate(): Promise<number> }, everyMs: number): QueueProcessor<unknown, typeof EVALUATE_JOB> {
  return {
    queue: AUTO_TOPUP_QUEUE,
    label: 'auto-topup',
    schedules: [{ name: EVALUATE_JOB, everyMs, options: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 20 } } }],
    failedMessage: 'automatic top-up pass failed; it runs again at the next interval',
    async process() {
      return autoTopups.evaluate();
    },
  };
}
