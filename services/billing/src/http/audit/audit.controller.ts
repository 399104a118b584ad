import { Get, Inject, Query, Req } from '@nestjs/common';
import type { AuditEntryView } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { AuditLogQueryDto, decodeAuditCursor, toAuditLogQuery } from '@svc/http-edge';
import type { FastifyRequest } from 'fastify';
import { Caller, InternalAuthController } from '../internal-auth.guard';
import type { CallerIdentity } from '../internal-auth.guard';
import { AuditRepository } from '../../stores/audit.repository';

/**
 * billing's part of the audit log, read by account-admin for GET /v1/audit-log with the same
 * query: its first `limit` entries after the cursor, and whether more follow. The gateway
 * does not forward this path.
 */
@InternalAuthController('internal')
export class AuditController {
  constructor(@Inject(AuditRepository) private readonly audit: AuditRepository) {}

  @Get('audit-log')
  async list(@Caller() caller: CallerIdentity, @Query() raw: AuditLogQueryDto, @Req() request: FastifyRequest): Promise<{ data: AuditEntryView[]; more: boolean; request_id: string }> {
    const query = toAuditLogQuery(raw);
    if (caller.keyKind !== 'management') throw new AppError('wrong_key_type', 'the audit log needs a management key');
    const after = query.cursor === null ? null : decodeAuditCursor(query.cursor);
    const entries = await this.audit.list(caller.accountId, query.filters, after, query.limit + 1);
    return { data: entries.slice(0, query.limit), more: entries.length > query.limit, request_id: request.id };
  }
}
