import { Inject, Injectable } from '@nestjs/common';
import { auditView } from '@svc/contracts';
import type { AuditDraft, AuditEntryView, AuditRow } from '@svc/contracts';
import { newId } from '@svc/ids';
import type { Prisma } from '../generated/prisma/client';
import { DatabaseRepository } from '../db/database.repository';
import { auditPageSql } from '@svc/http-edge';
import type { AuditFilters, AuditPosition } from '@svc/http-edge';

/**
 * The transaction's audit write: the one INSERT path into audit_entries (there is no other
 * statement on it). `at` is the database's clock (clock_timestamp(), as billing's entries),
 * so the two services' entries order by one kind of clock.
 */
export async function appendAudit(tx: Prisma.TransactionClient, draft: AuditDraft): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO audit_entries (id, account_id, at, actor_kind, actor_id, client_address, action, target_id, changes)
    VALUES (${newId('auditEntry')}, ${draft.accountId}, clock_timestamp(), CAST(${draft.actor.kind} AS "audit_actor_kind"),
      ${draft.actor.id}, ${draft.actor.clientAddress}, ${draft.action}, ${draft.targetId}, CAST(${JSON.stringify(draft.changes)} AS jsonb))`;
}

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
