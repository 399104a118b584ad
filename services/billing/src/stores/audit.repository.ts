import { auditView } from '@svc/contracts';
import type { AuditActor, AuditDraft, AuditEntryView, AuditRow } from '@svc/contracts';
import { auditPageSql } from '@svc/http-edge';
import type { AuditFilters, AuditPosition } from '@svc/http-edge';
import { newId } from '@svc/ids';
import type { Tx } from '../db/transactions';
import type { PrismaClient } from '../generated/prisma/client';

/** Who made a change and from where, and one change to append. */
export type { AuditActor, AuditDraft };

/**
 * billing's part of the audit log (docs/decisions/0025): `append` writes an entry in the
 * change's own transaction (the one INSERT on audit_entries; the trigger refuses UPDATE and
 * DELETE), `list` reads the log's order (`at`, then ids byte by byte, newest first), the
 * order account-admin merges it in (GET /v1/audit-log).
 */
export class AuditRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async append(tx: Tx, draft: AuditDraft): Promise<void> {
    await tx.$executeRaw`
      INSERT INTO audit_entries (id, account_id, at, actor_kind, actor_id, client_address, action, target_id, changes)
      VALUES (${newId('auditEntry')}, ${draft.accountId}, clock_timestamp(), CAST(${draft.actor.kind} AS "audit_actor_kind"),
        ${draft.actor.id}, ${draft.actor.clientAddress}, ${draft.action}, ${draft.targetId}, CAST(${JSON.stringify(draft.changes)} AS jsonb))`;
  }

  async list(accountId: string, filters: AuditFilters, after: AuditPosition | null, limit: number): Promise<AuditEntryView[]> {
    const page = auditPageSql(accountId, filters, after, limit);
    const rows = await this.prisma.$queryRawUnsafe<AuditRow[]>(page.text, ...page.values);
    return rows.map(auditView);
  }
}
