import { ALERT_MAIL_QUEUE } from '@svc/contracts';
import type { AlertMails } from '../services/outbound-webhooks/alert-mails';
import type { QueueProcessor } from './queue-processor';

const HAND_OVER_JOB = 'hand-over';

/**
 * ALERT_MAIL_QUEUE: every WEBHOOK_DISPATCH_INTERVAL_MS, the alert events not handed over yet
 * become `alert` jobs on account-admin's mail queue (AlertMails). A queue of its own, beside
 * webhook dispatch: a mail queue that cannot be reached delays no webhook.
 */
export function alertMailProcessor(alerts: AlertMails, everyMs: number): QueueProcessor<unknown, typeof HAND_OVER_JOB> {
  return {
    queue: ALERT_MAIL_QUEUE,
    label: 'alert mail',
    schedules: [{ name: HAND_OVER_JOB, everyMs, options: { attempts: 1, removeOnComplete: true, removeOnFail: { count: 20 } } }],
    failedMessage: 'handing alerts to the mail queue failed; it runs again at the next interval',
    process: () => alerts.handOver(),
  };
}
