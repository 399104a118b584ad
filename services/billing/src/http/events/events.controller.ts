import { Get, Inject, Param, Query, Req } from '@nestjs/common';
import { AppError } from '@svc/errors';
import { isId } from '@svc/ids';
import type { FastifyRequest } from 'fastify';
import { EventsService } from '../../services/outbound-webhooks/events.service';
import { eventView } from '../../common/events.view';
import type { EventView } from '../../common/events.view';
import { encodeCursor, toHistoryPage } from '../../common/pages';
import { Caller, InternalAuthController } from '../internal-auth.guard';
import type { CallerIdentity } from '../internal-auth.guard';
import { EventsQueryDto } from './events.dto';

/** The account's events (docs/api.md, "Events and webhooks"), newest first; a management key. */
@InternalAuthController('v1/events', { key: 'management' })
export class EventsController {
  constructor(@Inject(EventsService) private readonly events: EventsService) {}

  @Get()
  async list(@Caller() caller: CallerIdentity, @Query() query: EventsQueryDto, @Req() request: FastifyRequest): Promise<{ data: EventView[]; next_cursor: string | null; request_id: string }> {
    const page = await this.events.list(caller.accountId, toHistoryPage({ limit: query.limit, cursor: query.cursor }), query.type ?? null);
    const last = page.rows[page.rows.length - 1];
    return { data: page.rows.map(eventView), next_cursor: page.more && last !== undefined ? encodeCursor(last.mark) : null, request_id: request.id };
  }

  @Get(':id')
  async get(@Caller() caller: CallerIdentity, @Param('id') id: string, @Req() request: FastifyRequest): Promise<EventView & { request_id: string }> {
    const row = isId('event', id) ? await this.events.get(caller.accountId, id) : null;
    if (row === null) throw new AppError('not_found', 'no such event');
    return { ...eventView(row), request_id: request.id };
  }
}
