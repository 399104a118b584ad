import { RECONCILE_QUEUE } from '@svc/contracts';
import type { ReconciliationJob } from '../services/reconciliation/reconciliation-job';
import type { QueueProcessor } from './queue-processor';

/** The reconciliation job's name, also its scheduler's id. */
const RECONCILE_JOB = 'reconcile';

/**
 * RECONCILE_QUEUE: one repeating job, a reconciliation pass over every account every
 * RECONCILE_INTERVAL_MS. A failed pass is not retried: the next interval runs it again.
 */
export function reconcileProcessor(job: ReconciliationJob, everyMs: number): QueueProcessor<unknown, typeof RECONCILE_JOB> {
  return {
    queue: RECONCILE_QUEUE,
    label: 'reconcile',
    schedules: [{ name: RECONCILE_JOB, everyMs, options: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 20 } } }],
    failedMessage: 'reconciliation failed; it runs again at the next interval',
    async process() {
      return job.run();
    },
  };
}
