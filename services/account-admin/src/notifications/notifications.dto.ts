import { BooleanField } from '@svc/http-edge';

/** PUT /dashboard/api/notifications/{event_type}: whether the owner gets this alert by email. */
export class NotificationSettingDto {
  @BooleanField({ description: 'Mail the owner when an event of this type happens.' })
  email!: boolean;
}
