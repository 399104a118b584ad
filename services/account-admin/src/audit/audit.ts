import type { AuditActor, AuditChange, AuditDraft, AuditValue } from '@svc/contracts';

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
