import { auditView } from '@svc/contracts';
import type { AuditActor, AuditDraft, AuditEntryView, AuditRow } from '@svc/contracts';
import { auditPageSql } from '@svc/http-edge';
import type { AuditFilters, AuditPosition } from '@svc/http-edge';
import { newId } from '@svc/ids';
import { Prisma } from '../generated/prisma/client';
import type { PrismaClient } from '../generated/prisma/client';

/** Who made a change and from where, and one change to append (a purchase started, an operator grant). */
export type { AuditActor, AuditDraft };

/**
 * The INSERT of one entry, for a change's own transaction or statement (billing writes its
 * entries with raw SQL, like the rest of its money paths). The only statement on
 * audit_entries besides the reads below; the trigger refuses UPDATE and DELETE.
 */
export function auditInsertSql(draft: AuditDraft): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO audit_entries (id, account_id, at, actor_kind, actor_id, client_address, action, target_id, changes)
    VALUES (${newId('auditEntry')}, ${draft.accountId}, clock_timestamp(), CAST(${draft.actor.kind} AS "audit_actor_kind"),
      ${draft.actor.id}, ${draft.actor.clientAddress}, ${draft.action}, ${draft.targetId}, CAST(${JSON.stringify(draft.changes)} AS jsonb))`;
}

/**
 * billing's part of the audit log, read in the log's order (`at`, then ids byte by byte,
 * newest first), the order account-admin merges it in (GET /v1/audit-log).
 */
export class AuditRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async list(accountId: string, filters: AuditFilters, after: AuditPosition | null, limit: number): Promise<AuditEntryView[]> {
    const page = auditPageSql(accountId, filters, after, limit);
    const rows = await this.prisma.$queryRawUnsafe<AuditRow[]>(page.text, ...page.values);
    return rows.map(auditView);
  }
}
