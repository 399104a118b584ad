import type { AuditActor, AuditChange, AuditDraft, AuditValue } from '@svc/contracts';
import { newId } from '@svc/ids';
import type { Prisma } from '../generated/prisma/client';

/** Who makes a change and from where (resolved once per request, audit-actor.ts), and one change to append. */
export type { AuditActor, AuditDraft };

/** The fields a resource shows the audit log (never a secret, a key hash or a provider key). */
export type AuditFields = Record<string, AuditValue>;

function same(a: AuditValue, b: AuditValue): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((value, i) => value === b[i]);
  }
  return a === b;
}

/** Every field of a created resource: null before. */
export function created(after: AuditFields): Record<string, AuditChange> {
  const changes: Record<string, AuditChange> = {};
  for (const [name, value] of Object.entries(after)) changes[name] = { before: null, after: value };
  return changes;
}

/** The fields that differ between two views of a resource. */
export function changed(before: AuditFields, after: AuditFields): Record<string, AuditChange> {
  const changes: Record<string, AuditChange> = {};
  for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = before[name] ?? null;
    const now = after[name] ?? null;
    if (!same(was, now)) changes[name] = { before: was, after: now };
  }
  return changes;
}

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
