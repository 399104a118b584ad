import { Inject, Injectable } from '@nestjs/common';
import { auditView } from '@svc/contracts';
import type { AuditEntryView, AuditRow } from '@svc/contracts';
import { DatabaseRepository } from '../db/database.repository';
import { auditPageSql } from '@svc/http-edge';
import type { AuditFilters, AuditPosition } from '@svc/http-edge';

/**
 * Reads audit_entries (the log's writes are appendAudit's, inside each change's transaction).
 * The order is `at` then `id`, newest first, with ids compared byte by byte (COLLATE "C"),
 * the order billing's log is read in too, so the two merge into one page.
 */
@Injectable()
export class AuditRepository {
  constructor(@Inject(DatabaseRepository) private readonly db: DatabaseRepository) {}

  async list(accountId: string, filters: AuditFilters, after: AuditPosition | null, limit: number): Promise<AuditEntryView[]> {
    const page = auditPageSql(accountId, filters, after, limit);
    const rows = await this.db.client.$queryRawUnsafe<AuditRow[]>(page.text, ...page.values);
    return rows.map(auditView);
  }
}
