import { Get, Inject, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Actor, onBoth, AccessController } from '../http/actor';
import { withRequestId } from '../http/reply';
import { AuditLogQueryDto, toAuditLogQuery } from '@svc/http-edge';
import { AuditService } from './audit.service';

/**
 * The audit log on both surfaces: GET /v1/audit-log (a management key, forwarded by the
 * gateway) and GET /dashboard/api/audit-log (a session). Read-only: nothing in the platform
 * updates or deletes an entry (the database refuses it; docs/api.md, "Audit log").
 */
@AccessController({ key: 'management' })
export class AuditController {
  constructor(@Inject(AuditService) private readonly audit: AuditService) {}

  @Get(onBoth('audit-log'))
  async list(@Actor() actor: Actor, @Req() req: FastifyRequest, @Query() query: AuditLogQueryDto): Promise<object> {
    return withRequestId(req, await this.audit.page(actor.accountId, toAuditLogQuery(query), req.id));
  }
}
