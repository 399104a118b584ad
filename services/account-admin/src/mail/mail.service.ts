import { Inject, Injectable } from '@nestjs/common';
import type { OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { alertJobId, isAlertEventType } from '@svc/contracts';
import type { AlertEvent, MailKind } from '@svc/contracts';
import { describeError } from '@svc/errors';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import { LOGGER } from '../logging/logger';
import type { Logger } from '../logging/logger';
import { PeriodicLoop } from '../periodic/periodic-loop';
import { dashboardUrlOf, MAIL_LINKS } from './mail-links';
import type { LinkKind, MailLinks } from './mail-links';
import { MailMessagesRepository } from './mail-messages.repository';
import type { MailDraft, MailMessageRow } from './mail-messages.repository';
import { MailQueueAdapter } from './mail-queue.adapter';
import type { MailJobRun, MailRunOutcome } from './mail-queue.adapter';
import { renderMail } from './mail-templates';
import type { MailContent } from './mail-templates';
import { SmtpAdapter } from './smtp.adapter';

/** A queued message is checked for a lost job once it has waited this long since it was put on the queue. */
const LOST_JOB_AFTER_MS = 60_000;
/** Messages the dispatcher checks per pass, and records deleted per statement. */
const DISPATCH_BATCH = 200;
const SWEEP_BATCH = 1_000;

const NO_SMTP = 'no SMTP server is set (SMTP_HOST)';

/**
 * Outgoing mail (docs/decisions/0054-mail-path.md). A message is recorded in `mail_messages`
 * with its cause and put on the mail queue; the queue's worker (every replica, when an SMTP
 * server is set) renders it from its template, makes its link if it carries one, sends it and
 * records the outcome. Alerts arrive from billing as `alert` jobs: recorded once per event, with
 * the owner's address and choice, then sent the same way.
 *
 * Every MAIL_DISPATCH_INTERVAL_MS each replica puts back on the queue the queued messages whose
 * job is gone (Redis was down when the request added it, or lost its data), deletes expired links
 * and sign-up requests, and the records older than MAIL_RECORD_RETENTION_DAYS.
 */
@Injectable()
export class MailService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly loop: PeriodicLoop;
  private readonly dashboardUrl: string;

  constructor(
    @Inject(MailMessagesRepository) private readonly messages: MailMessagesRepository,
    @Inject(SmtpAdapter) private readonly smtp: SmtpAdapter,
    @Inject(MailQueueAdapter) private readonly queue: MailQueueAdapter,
    @Inject(MAIL_LINKS) private readonly links: MailLinks,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.dashboardUrl = dashboardUrlOf(config.PUBLIC_BASE_URL);
    this.loop = new PeriodicLoop(
      async () => {
        await this.maintain();
      },
      config.MAIL_DISPATCH_INTERVAL_MS,
      (error) => this.logger.error({ err: describeError(error) }, 'mail dispatch failed; will retry'),
    );
  }

  /** A new message's record: queued, or skipped when no SMTP server is set. */
  draft(kind: MailKind, accountId: string | null, recipient: string): MailDraft {
    return this.smtp.configured
      ? { kind, accountId, recipient, status: 'queued', detail: null }
      : { kind, accountId, recipient, status: 'skipped', detail: NO_SMTP };
  }

  /**
   * Puts a recorded message on the queue (after its cause committed). A Redis that cannot take
   * it now only delays it: the record stays queued and the dispatcher adds it later.
   */
  async enqueue(messageId: string): Promise<void> {
    if (!this.smtp.configured) return;
    try {
      await this.queue.addMessage(messageId);
    } catch (error) {
      this.logger.warn({ message_id: messageId, err: describeError(error) }, 'mail queue unavailable; the dispatcher adds the message later');
    }
  }

  /**
   * The worker runs without an SMTP server too: billing's alerts are then recorded as skipped
   * rather than left on the queue.
   */
  onApplicationBootstrap(): void {
    if (!this.smtp.configured) this.logger.warn('no SMTP server is set (SMTP_HOST): no mail is sent');
    this.queue.startWorker((job) => this.run(job));
    this.loop.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }

  /** One attempt of one job of the queue. */
  async run(job: MailJobRun): Promise<MailRunOutcome> {
    switch (job.name) {
      case 'message':
        return this.send(await this.messages.load((job.data as { messageId: string }).messageId), job);
      case 'alert': {
        const event = (job.data as { event?: unknown }).event;
        if (!isAlertEvent(event)) {
          this.logger.error({ job: 'alert' }, 'mail queue: an alert job without a valid event; dropped');
          return { retry: false };
        }
        const row = await this.messages.recordAlert(event, (owner, email) => {
          if (owner === null) return { ...this.draft('alert', event.account_id, ''), status: 'skipped', detail: 'the account has no owner to mail' };
          if (!email) return { ...this.draft('alert', event.account_id, owner.email), status: 'skipped', detail: `email is off for ${event.type} in the owner's notification settings` };
          return this.draft('alert', event.account_id, owner.email);
        });
        return this.send(row, job);
      }
    }
  }

  private async send(row: MailMessageRow | null, job: MailJobRun): Promise<MailRunOutcome> {
    if (row === null || row.status !== 'queued' || row.recipient === null) return { retry: false };
    const content = await this.content(row);
    if (content === null) {
      await this.messages.markEnded(row.id, 'skipped', row.attempts, 'replaced by a newer request, or its link was already used');
      return { retry: false };
    }
    const attempts = row.attempts + 1;
    const outcome = await this.smtp.send({ to: row.recipient, ...content });
    if (outcome.sent) {
      await this.messages.markSent(row.id, attempts, outcome);
      this.logger.info({ message_id: row.id, kind: row.kind, attempts }, 'mail sent');
      return { retry: false };
    }
    if (outcome.permanent || job.lastAttempt) {
      await this.messages.markEnded(row.id, 'failed', attempts, outcome.detail);
      this.logger.warn({ message_id: row.id, kind: row.kind, attempts, permanent: outcome.permanent }, 'mail failed for good');
      return { retry: false };
    }
    await this.messages.markAttempt(row.id, attempts, outcome.detail);
    return { retry: true, detail: `message ${row.id}: ${outcome.detail}` };
  }

  /** The message's words, with a fresh link when it carries one; null when its link is gone. */
  private async content(row: MailMessageRow): Promise<MailContent | null> {
    const kind = row.kind as MailKind;
    switch (kind) {
      case 'signup.confirm':
      case 'password_reset.link': {
        const link = await this.links.linkFor(kind satisfies LinkKind, row.id);
        return link === null ? null : renderMail(kind, { dashboardUrl: this.dashboardUrl, link });
      }
      case 'alert':
        return row.event === null ? null : renderMail(kind, { dashboardUrl: this.dashboardUrl, event: row.event });
      case 'signup.registered':
      case 'password_reset.unknown':
      case 'password_reset.done':
        return renderMail(kind, { dashboardUrl: this.dashboardUrl });
    }
  }

  /** One pass of the dispatcher and the sweep. */
  async maintain(now: Date = new Date()): Promise<{ requeued: number; expiredLinks: number; records: number }> {
    let requeued = 0;
    if (this.smtp.configured) {
      const waiting = await this.messages.queuedBefore(new Date(now.getTime() - LOST_JOB_AFTER_MS), DISPATCH_BATCH);
      for (const message of waiting) {
        // An alert's first job is billing's (`alert-<event>`); a message job of the same row would send it twice.
        const lost = !(await this.queue.hasJob(message.id)) && (message.eventId === null || !(await this.queue.hasJob(alertJobId(message.eventId))));
        if (!lost) continue;
        await this.queue.addMessage(message.id);
        requeued += 1;
      }
      await this.messages.markQueued(waiting.map((m) => m.id), now);
      if (requeued > 0) this.logger.warn({ requeued }, 'mail dispatch: messages whose job was lost put back on the queue');
    }
    const expiredLinks = await this.links.deleteExpired(now);
    const before = new Date(now.getTime() - this.config.MAIL_RECORD_RETENTION_DAYS * 86_400_000);
    let records = 0;
    for (;;) {
      const deleted = await this.messages.deleteEndedBefore(before, SWEEP_BATCH);
      records += deleted;
      if (deleted < SWEEP_BATCH || this.loop.stopped) break;
    }
    return { requeued, expiredLinks, records };
  }
}

function isAlertEvent(value: unknown): value is AlertEvent {
  if (typeof value !== 'object' || value === null) return false;
  const event = value as Record<string, unknown>;
  return typeof event['id'] === 'string' && isAlertEventType(event['type']) && typeof event['account_id'] === 'string'
    && typeof event['created_at'] === 'string' && typeof event['data'] === 'object' && event['data'] !== null;
}
