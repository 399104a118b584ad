import type { AuditEntryView } from '@svc/contracts';
import type { AuditFilters, AuditPosition } from '@svc/http-edge';
import type { AuditRepository } from '../../stores/audit.repository';

/** billing's part of GET /v1/audit-log: the first `limit` entries after the cursor, and whether more follow. */
export class AuditLogService {
  constructor(private readonly audit: AuditRepository) {}

  async page(accountId: string, filters: AuditFilters, after: AuditPosition | null, limit: number): Promise<{ entries: AuditEntryView[]; more: boolean }> {
    const entries = await this.audit.list(accountId, filters, after, limit + 1);
    return { entries: entries.slice(0, limit), more: entries.length > limit };
  }
}
