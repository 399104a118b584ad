import type { AuditAction, AuditActorKind, AuditChange, AuditValue } from '@svc/contracts';
import { newId } from '@svc/ids';
import type { Prisma } from '../generated/prisma/client';

/**
 * Who makes a change and from where, resolved once per request from the actor
 * (src/http/actor.ts) and the client's address (src/http/client-address.ts).
 */
export interface AuditActor {
  kind: AuditActorKind;
  id: string;
  clientAddress: string | null;
}

/** One change to append: the account it belongs to, what, on which target, and its fields before → after. */
export interface AuditDraft {
  accountId: string;
  actor: AuditActor;
  action: AuditAction;
  targetId: string;
  changes: Record<string, AuditChange>;
}

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

/** The transaction's audit write: the one INSERT path into audit_entries (there is no other statement on it). */
export async function appendAudit(tx: Prisma.TransactionClient, draft: AuditDraft, at: Date = new Date()): Promise<void> {
  await tx.auditEntry.create({
    data: {
      id: newId('auditEntry'),
      accountId: draft.accountId,
      at,
      actorKind: draft.actor.kind,
      actorId: draft.actor.id,
      clientAddress: draft.actor.clientAddress,
      action: draft.action,
      targetId: draft.targetId,
      changes: draft.changes as unknown as Prisma.InputJsonValue,
    },
  });
}
