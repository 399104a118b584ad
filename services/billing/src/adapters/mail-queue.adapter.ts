import { alertJobId, MAIL_JOB_OPTIONS, MAIL_QUEUE, MAIL_QUEUE_PREFIX } from '@svc/contracts';
import type { AlertEvent, MailJobData, MailJobName } from '@svc/contracts';
import { closeRedisClient } from '@svc/redis-client';
import type { RedisClient } from '@svc/redis-client';
import { Queue } from 'bullmq';

/** Where alerts are handed over for mail (AlertMails' port). */
export interface AlertMailQueue {
  add(events: readonly AlertEvent[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * account-admin's mail queue (packages/contracts `mail.ts`), as billing adds to it: one `alert`
 * job per event, job id `alert-<event id>` (adding one twice while it waits is harmless, and
 * account-admin records each event once however often it arrives). account-admin runs the queue's
 * processor and decides whom to mail and whether.
 */
export class BullMqAlertMailQueue implements AlertMailQueue {
  private readonly queue: Queue<MailJobData, unknown, MailJobName>;

  constructor(private readonly connection: RedisClient) {
    this.queue = new Queue<MailJobData, unknown, MailJobName>(MAIL_QUEUE, { connection, prefix: MAIL_QUEUE_PREFIX });
  }

  async add(events: readonly AlertEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.queue.addBulk(events.map((event) => ({ name: 'alert' as const, data: { event }, opts: { ...MAIL_JOB_OPTIONS, jobId: alertJobId(event.id) } })));
  }

  async close(): Promise<void> {
    await this.queue.close();
    await closeRedisClient(this.connection);
  }
}
