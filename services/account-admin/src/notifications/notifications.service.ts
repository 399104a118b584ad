import { Inject, Injectable } from '@nestjs/common';
import { ALERT_EVENT_TYPES, EMAIL_ALERT_DEFAULTS, isAlertEventType } from '@svc/contracts';
import type { AlertEventType, AuditActor } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { NotificationsRepository } from './notifications.repository';

/** One alert type as the dashboard shows it: whether it is mailed, and whether that is the default. */
export interface NotificationSettingView {
  event_type: AlertEventType;
  email: boolean;
  email_default: boolean;
}

/**
 * Which alerts the owner gets by email (docs/api.md, "Notifications"). Webhooks are chosen on
 * the webhook endpoints (each subscribes to event types); this chooses the mail to the owner's
 * address. A type never chosen has its default: mailed for a low balance and a failed top-up.
 */
@Injectable()
export class NotificationsService {
  constructor(@Inject(NotificationsRepository) private readonly repo: NotificationsRepository) {}

  async list(accountId: string): Promise<{ data: NotificationSettingView[] }> {
    const choices = await this.repo.choices(accountId);
    return { data: ALERT_EVENT_TYPES.map((type) => view(type, choices.get(type))) };
  }

  async setEmail(accountId: string, eventType: string, email: boolean, actor: AuditActor): Promise<NotificationSettingView> {
    if (!isAlertEventType(eventType)) throw new AppError('invalid_request', `event type must be one of ${ALERT_EVENT_TYPES.join(', ')}`);
    await this.repo.setEmail(accountId, eventType, email, EMAIL_ALERT_DEFAULTS[eventType], actor);
    return view(eventType, email);
  }
}

function view(type: AlertEventType, chosen: boolean | undefined): NotificationSettingView {
  return { event_type: type, email: chosen ?? EMAIL_ALERT_DEFAULTS[type], email_default: EMAIL_ALERT_DEFAULTS[type] };
}
