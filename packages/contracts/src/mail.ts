/**
 * Outgoing mail (docs/decisions/0054-mail-path.md): the BullMQ queue account-admin sends from,
 * its job names and payloads, and the alert event types an owner may have mailed. account-admin
 * owns the addresses and runs the queue's one processor; every producer (account-admin for its
 * own messages, billing for alerts) adds jobs of these shapes. This file imports nothing, so the
 * dashboard's bundler can take it as it is.
 */

/** The queue of outgoing mail. */
export const MAIL_QUEUE = 'mail';

/**
 * billing's ledger worker's queue (under its QUEUE_PREFIX) whose repeating job hands the alert
 * events not handed over yet to MAIL_QUEUE as `alert` jobs.
 */
export const ALERT_MAIL_QUEUE = 'alert-mail';

/**
 * The key prefix of the mail queue (Queue and Worker `prefix`). A hash tag of its own, so on a
 * Redis Cluster every key of the queue shares one slot (BullMQ's scripts need that) and the
 * mail queue does not sit in the ledger queues' slot.
 */
export const MAIL_QUEUE_PREFIX = '{mail}';

/**
 * The events an account's owner may receive by email as well as (or instead of) a webhook
 * (docs/api.md, "Notifications"). Each is also a webhook event type; `research.*` will join.
 */
export const ALERT_EVENT_TYPES = ['balance.low', 'key.limit.threshold', 'auto_topup.failed', 'auto_topup.succeeded'] as const;
export type AlertEventType = (typeof ALERT_EVENT_TYPES)[number];

export function isAlertEventType(value: unknown): value is AlertEventType {
  return typeof value === 'string' && (ALERT_EVENT_TYPES as readonly string[]).includes(value);
}

/** Whether an alert is mailed when the owner never chose: on for a low balance and a failed top-up. */
export const EMAIL_ALERT_DEFAULTS: Readonly<Record<AlertEventType, boolean>> = {
  'balance.low': true,
  'key.limit.threshold': false,
  'auto_topup.failed': true,
  'auto_topup.succeeded': false,
};

/** The messages account-admin writes itself (a row of its `mail_messages`, made with the cause). */
export const ACCOUNT_MAIL_KINDS = [
  /** A new address: the confirmation link of a sign-up. */
  'signup.confirm',
  /** A registered address: someone tried to sign up with it; sign in or reset. */
  'signup.registered',
  /** A registered address: the password-reset link. */
  'password_reset.link',
  /** An address with no account: someone asked to reset a password for it. */
  'password_reset.unknown',
  /** A registered address: its password was just changed with a reset link. */
  'password_reset.done',
] as const;
export type AccountMailKind = (typeof ACCOUNT_MAIL_KINDS)[number];

/** Every kind a `mail_messages` row may have: account-admin's own and `alert` (billing's events). */
export type MailKind = AccountMailKind | 'alert';

/**
 * An alert as billing hands it over: the event exactly as GET /v1/events and the webhooks show
 * it (docs/api.md 17.1). account-admin finds the owner's address and choice from `account_id`.
 */
export interface AlertEvent {
  id: string;
  type: AlertEventType;
  account_id: string;
  created_at: string;
  data: Readonly<Record<string, unknown>>;
}

/**
 * The jobs of MAIL_QUEUE, by name:
 * - `message`: one of account-admin's own messages, by its row id (`eml_…`); the row holds the
 *   recipient and the kind. Job id: the message id.
 * - `alert`: an event billing made; account-admin records it once per event id (a second job
 *   of the same event sends nothing) and mails it if the owner's choice says so. Job id:
 *   `alert-<event id>`.
 * No job carries a password, a token or a link: a link's token is made when the message is sent.
 */
export interface MailJobs {
  message: { messageId: string };
  alert: { event: AlertEvent };
}
export type MailJobName = keyof MailJobs;
export type MailJobData = MailJobs[MailJobName];

export const MAIL_JOB_NAMES: readonly MailJobName[] = ['message', 'alert'];

/** The job id of an alert's job: one job per event, however often billing adds it. */
export function alertJobId(eventId: string): string {
  return `alert-${eventId}`;
}

/**
 * The options every producer adds a mail job with: tried 8 times in all, the delays chosen by
 * the processor's `mail` backoff (MAIL_RETRY_BASE_DELAY_MS doubled each time: about an hour in
 * all with the default 30 s), and removed from Redis once done either way (the message's row in
 * account-admin's database is the record).
 */
export const MAIL_JOB_OPTIONS = {
  attempts: 8,
  backoff: { type: 'mail' },
  removeOnComplete: true,
  removeOnFail: true,
} as const;
