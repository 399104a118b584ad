import { WEBHOOK_EVENT_TYPES } from '@svc/contracts';
import { EnumField, PageQueryDto } from '@svc/http-edge';

/** GET /v1/events: `limit`, `cursor` (the page query of every list) and an optional `type`. */
export class EventsQueryDto extends PageQueryDto {
  @EnumField(WEBHOOK_EVENT_TYPES, { presence: 'optional', message: `type must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}`, description: 'Only events of this type.' })
  type?: string;
}
