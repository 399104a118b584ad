/**
 * The audit log's shapes (docs/api.md, "Audit log"), declared once: account-admin and
 * billing write entries of this shape, GET /v1/audit-log answers them, the SDK and the
 * dashboard read them. This file imports nothing (the dashboard's bundler takes it as it is).
 */

/**
 * Who made a change: a management key (its id), a dashboard session (the user's id), an
 * OAuth grant (its id: a change its client's request made, e.g. revoking the grant through
 * the revocation endpoint) or an operator (the operator tool's name for itself, `operator`
 * by default).
 */
export const AUDIT_ACTOR_KINDS = ['management_key', 'session', 'oauth_grant', 'operator'] as const;
export type AuditActorKind = (typeof AUDIT_ACTOR_KINDS)[number];

/** What was changed; `<resource>.<verb>`. */
export const AUDIT_ACTIONS = [
  'api_key.create',
  'api_key.update',
  'api_key.delete',
  'management_key.create',
  'management_key.update',
  'management_key.delete',
  'provider_key.set',
  'provider_key.delete',
  'oauth_grant.create',
  'oauth_grant.revoke',
  'purchase.start',
  'credits.grant',
  'webhook_endpoint.create',
  'webhook_endpoint.update',
  'webhook_endpoint.rotate_secret',
  'webhook_endpoint.delete',
  'billing_settings.update',
  'card_setup.start',
  'user.password_reset',
  'notification_settings.update',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export function isAuditAction(value: unknown): value is AuditAction {
  return typeof value === 'string' && (AUDIT_ACTIONS as readonly string[]).includes(value);
}

export function isAuditActorKind(value: unknown): value is AuditActorKind {
  return typeof value === 'string' && (AUDIT_ACTOR_KINDS as readonly string[]).includes(value);
}

/** A value an entry may record: never a secret, a key hash or a provider key (only what the API shows). */
export type AuditValue = string | number | boolean | null | readonly string[];

/** One changed field: its value before and after (null before on a creation, after on a deletion). */
export interface AuditChange {
  before: AuditValue;
  after: AuditValue;
}

/** An entry as GET /v1/audit-log shows it. */
export interface AuditEntryView {
  id: string;
  /** RFC 3339 with milliseconds, UTC. */
  at: string;
  actor: { kind: AuditActorKind; id: string };
  client_address: string | null;
  action: AuditAction;
  target_id: string;
  changes: Record<string, AuditChange>;
}

/** Who made a change and from where (the audit log's actor), in account-admin and in billing. */
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

/** A row of `audit_entries` as both services read it (`actor_kind` as text). */
export interface AuditRow {
  id: string;
  at: Date;
  actor_kind: AuditActorKind;
  actor_id: string;
  client_address: string | null;
  action: AuditAction;
  target_id: string;
  changes: Record<string, AuditChange>;
}

/** A stored row as GET /v1/audit-log shows it. */
export function auditView(row: AuditRow): AuditEntryView {
  return {
    id: row.id,
    at: row.at.toISOString(),
    actor: { kind: row.actor_kind, id: row.actor_id },
    client_address: row.client_address,
    action: row.action,
    target_id: row.target_id,
    changes: row.changes,
  };
}

/** The columns of the dashboard's CSV export, in order. */
export const AUDIT_CSV_COLUMNS = ['at', 'actor_kind', 'actor_id', 'client_address', 'action', 'target_id', 'changes'] as const;
