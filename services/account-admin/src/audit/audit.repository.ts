import { Inject, Injectable } from '@nestjs/common';
import { auditView } from '@svc/contracts';
import type { AuditEntryView, AuditRow } from '@svc/contracts';
import { DatabaseRepository } from '../db/database.repository';
import { Prisma } from '../generated/prisma/client';
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
    const conditions: Prisma.Sql[] = [Prisma.sql`account_id = ${accountId}`];
    if (filters.action !== undefined) conditions.push(Prisma.sql`action = ${filters.action}`);
    if (filters.actorKind !== undefined) conditions.push(Prisma.sql`actor_kind = ${filters.actorKind}::audit_actor_kind`);
    if (filters.actorId !== undefined) conditions.push(Prisma.sql`actor_id = ${filters.actorId}`);
    if (filters.targetId !== undefined) conditions.push(Prisma.sql`target_id = ${filters.targetId}`);
    if (filters.fromMs !== undefined) conditions.push(Prisma.sql`at >= ${new Date(filters.fromMs)}`);
    if (filters.toMs !== undefined) conditions.push(Prisma.sql`at < ${new Date(filters.toMs)}`);
    if (after !== null) {
      const at = new Date(after.atMs);
      conditions.push(Prisma.sql`(at < ${at} OR (at = ${at} AND id COLLATE "C" < ${after.id} COLLATE "C"))`);
    }
    const rows = await this.db.client.$queryRaw<AuditRow[]>`
      SELECT id, at, actor_kind::text AS actor_kind, actor_id, client_address, action, target_id, changes
      FROM audit_entries
      WHERE ${Prisma.join(conditions, ' AND ')}
      ORDER BY at DESC, id COLLATE "C" DESC
      LIMIT ${limit}`;
    return rows.map(auditView);
  }
}
