import { Body, Get, Inject, Param, Put, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { auditActorOf } from '../audit/audit-actor';
import { AccessController, Actor, onDashboard } from '../http/actor';
import { withRequestId } from '../http/reply';
import { NotificationSettingDto } from './notifications.dto';
import { NotificationsService } from './notifications.service';

/**
 * The owner's choice of alerts by email, on the dashboard only (a session; x-csrf-token on a
 * change). A change is audited (`notification_settings.update`) with the session as the actor.
 */
@AccessController()
export class NotificationsController {
  constructor(@Inject(NotificationsService) private readonly notifications: NotificationsService) {}

  @Get(onDashboard('notifications'))
  async list(@Actor() actor: Actor, @Req() req: FastifyRequest): Promise<object> {
    return withRequestId(req, await this.notifications.list(actor.accountId));
  }

  @Put(onDashboard('notifications/:event_type'))
  async set(@Actor() actor: Actor, @Req() req: FastifyRequest, @Param('event_type') eventType: string, @Body() body: NotificationSettingDto): Promise<object> {
    return withRequestId(req, await this.notifications.setEmail(actor.accountId, eventType, body.email, auditActorOf(actor)));
  }
}
