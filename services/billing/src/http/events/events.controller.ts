import { Get, Inject, Param, Query, Req } from '@nestjs/common';
import { AppError } from '@svc/errors';
import { isId } from '@svc/ids';
import { EventsQueryDto } from './events.dto';
import type { FastifyRequest } from 'fastify';
import { encodeCursor, toHistoryPage } from '../../services/history/history-page';
import { Caller, InternalAuthController } from '../internal-auth.guard';
import type { CallerIdentity } from '../internal-auth.guard';
import { EventsRepository } from '../../stores/events.repository';
import { eventView } from '../../services/outbound-webhooks/events.view';
import type { EventView } from '../../services/outbound-webhooks/events.view';


export function requireManagement(caller: CallerIdentity, what: string): void {
  if (caller.keyKind !== 'management') throw new AppError('wrong_key_type', `${what} needs a management key`);
}

/** The account's events (docs/api.md, "Events and webhooks"), newest first. */
@InternalAuthController('v1/events')
export class EventsController {
  constructor(@Inject(EventsRepository) private readonly events: EventsRepository) {}

  @Get()
  async list(@Caller() caller: CallerIdentity, @Query() query: EventsQueryDto, @Req() request: FastifyRequest): Promise<{ data: EventView[]; next_cursor: string | null; request_id: string }> {
    const page = toHistoryPage({ limit: query.limit, cursor: query.cursor });
    requireManagement(caller, 'listing events');
    const rows = await this.events.list(caller.accountId, page.limit + 1, page.after, query.type ?? null);
    const shown = rows.slice(0, page.limit);
    const last = shown[shown.length - 1];
    return { data: shown.map(eventView), next_cursor: rows.length > page.limit && last !== undefined ? encodeCursor(last.mark) : null, request_id: request.id };
  }

  @Get(':id')
  async get(@Caller() caller: CallerIdentity, @Param('id') id: string, @Req() request: FastifyRequest): Promise<EventView & { request_id: string }> {
    requireManagement(caller, 'reading events');
    const row = isId('event', id) ? await this.events.get(caller.accountId, id) : null;
    if (row === null) throw new AppError('not_found', 'no such event');
    return { ...eventView(row), request_id: request.id };
  }
}
