import { LIMITS, WEBHOOK_EVENT_TYPES } from '@svc/contracts';
import { BooleanField, EnumListField, UrlField } from '@svc/http-edge';

const URL_MESSAGE = `url must be an http(s) URL of at most ${LIMITS.webhookUrl.max} characters`;
const EVENTS_MESSAGE = `events must be a list of distinct event types, each one of ${WEBHOOK_EVENT_TYPES.join(', ')}`;

/** POST /v1/webhook-endpoints. */
export class CreateEndpointDto {
  @UrlField(LIMITS.webhookUrl.max, { message: URL_MESSAGE, missingMessage: 'url is required', description: 'Where events are POSTed: https (http and loopback only where the deployment allows them).' })
  url!: string;

  @EnumListField(WEBHOOK_EVENT_TYPES, { message: EVENTS_MESSAGE, missingMessage: 'events is required', description: 'The event types delivered to this endpoint.' })
  events!: string[];

  @BooleanField({ presence: 'optional', description: 'Default true.' })
  enabled?: boolean;
}

/** PATCH /v1/webhook-endpoints/{id}: any of the fields; enabling a disabled endpoint clears its failure state. */
export class UpdateEndpointDto {
  @UrlField(LIMITS.webhookUrl.max, { presence: 'optional', message: URL_MESSAGE })
  url?: string;

  @EnumListField(WEBHOOK_EVENT_TYPES, { presence: 'optional', message: EVENTS_MESSAGE })
  events?: string[];

  @BooleanField({ presence: 'optional' })
  enabled?: boolean;
}
