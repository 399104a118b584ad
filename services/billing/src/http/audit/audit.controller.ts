import { Get, Inject, Query, Req } from '@nestjs/common';
import type { AuditEntryView } from '@svc/contracts';
import { AuditLogQueryDto, decodeAuditCursor, toAuditLogQuery } from '@svc/http-edge';
import type { FastifyRequest } from 'fastify';
import { AuditLogService } from '../../services/audit/audit-log.service';
import { Caller, InternalAuthController } from '../internal-auth.guard';
import type { CallerIdentity } from '../internal-auth.guard';

/**
 * billing's part of the audit log, read by account-admin for GET /v1/audit-log with the same
 * query: its first `limit` entries after the cursor, and whether more follow. The gateway
 * does not forward this path.
 */
@InternalAuthController('internal', { key: 'management' })
export class AuditController {
  constructor(@Inject(AuditLogService) private readonly audit: AuditLogService) {}

  @Get('audit-log')
  async list(@Caller() caller: CallerIdentity, @Query() raw: AuditLogQueryDto, @Req() request: FastifyRequest): Promise<{ data: AuditEntryView[]; more: boolean; request_id: string }> {
    const query = toAuditLogQuery(raw);
    const after = query.cursor === null ? null : decodeAuditCursor(query.cursor);
    const page = await this.audit.page(caller.accountId, query.filters, after, query.limit);
    return { data: page.entries, more: page.more, request_id: request.id };
  }
}
