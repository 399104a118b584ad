import { AUDIT_ACTIONS, AUDIT_ACTOR_KINDS } from '@svc/contracts';
import type { AuditAction, AuditActorKind, AuditEntryView } from '@svc/contracts';
import { EnumField, StringField, TimestampField } from './validation/fields';
import { decodeTimeIdCursor, encodeTimeIdCursor, PageQueryDto, pageLimit, parseRfc3339 } from './validation/validators';
import type { TimeIdPosition } from './validation/validators';

const ID_TEXT = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The audit log's query and cursor, shared by account-admin (GET /v1/audit-log) and billing
 * (its part of the log, read by account-admin with the same query): one declaration.
 */

/** GET /v1/audit-log's query (docs/api.md, "Audit log"): a page, and filters that all must hold. */
export class AuditLogQueryDto extends PageQueryDto {
  @EnumField(AUDIT_ACTIONS, { presence: 'optional', message: `action must be one of ${AUDIT_ACTIONS.join(', ')}`, description: 'Only entries of this action.' })
  action?: AuditAction;

  @EnumField(AUDIT_ACTOR_KINDS, { presence: 'optional', message: `actor_kind must be one of ${AUDIT_ACTOR_KINDS.join(', ')}`, description: 'Only entries made by this kind of actor.' })
  actor_kind?: AuditActorKind;

  @StringField({ presence: 'optional', max: 64, pattern: ID_TEXT, message: 'actor_id must be an id (letters, digits, _ and -, at most 64)', description: 'Only entries made by this actor (a management key id, a user id, an OAuth grant id or an operator name).' })
  actor_id?: string;

  @StringField({ presence: 'optional', max: 64, pattern: ID_TEXT, message: 'target_id must be an id (letters, digits, _ and -, at most 64)', description: 'Only entries about this target (a key id, a provider, a checkout id, a ledger entry id).' })
  target_id?: string;

  @TimestampField({ presence: 'optional', description: 'Only entries at or after this instant (RFC 3339).' })
  from?: string;

  @TimestampField({ presence: 'optional', description: 'Only entries before this instant (RFC 3339).' })
  to?: string;
}

/** The filters of a page (every one optional; `fromMs` inclusive, `toMs` exclusive). */
export interface AuditFilters {
  action?: AuditAction;
  actorKind?: AuditActorKind;
  actorId?: string;
  targetId?: string;
  fromMs?: number;
  toMs?: number;
}

export interface AuditLogQuery {
  limit: number;
  cursor: string | null;
  filters: AuditFilters;
}

export function toAuditLogQuery(query: AuditLogQueryDto): AuditLogQuery {
  const filters: AuditFilters = {};
  if (query.action !== undefined) filters.action = query.action;
  if (query.actor_kind !== undefined) filters.actorKind = query.actor_kind;
  if (query.actor_id !== undefined) filters.actorId = query.actor_id;
  if (query.target_id !== undefined) filters.targetId = query.target_id;
  if (query.from !== undefined) filters.fromMs = parseRfc3339(query.from) ?? undefined;
  if (query.to !== undefined) filters.toMs = parseRfc3339(query.to) ?? undefined;
  return { limit: pageLimit(query), cursor: query.cursor ?? null, filters };
}

/** Where a page starts: after the entry at (`atMs`, `id`) in the log's order (newest first). */
export type AuditPosition = TimeIdPosition;

export function encodeAuditCursor(position: AuditPosition): string {
  return encodeTimeIdCursor(position);
}

const isAuditEntryId = (id: unknown): id is string => typeof id === 'string' && /^[A-Za-z0-9_]{1,64}$/.test(id);

export function decodeAuditCursor(cursor: string): AuditPosition {
  return decodeTimeIdCursor(cursor, isAuditEntryId);
}

/**
 * The page query both services run on their own audit_entries (account-admin's part of the
 * log and billing's, merged by account-admin in newestFirst's order): the filters, the
 * position after the cursor, the log's order (`at`, then ids byte by byte, newest first) and
 * the limit, as SQL text with numbered parameters (`$queryRawUnsafe(text, ...values)`).
 */
export function auditPageSql(accountId: string, filters: AuditFilters, after: AuditPosition | null, limit: number): { text: string; values: unknown[] } {
  const values: unknown[] = [accountId];
  const conditions = ['account_id = $1'];
  /** The next parameter's placeholder, holding `value`. */
  const param = (value: unknown): string => `$${values.push(value)}`;
  if (filters.action !== undefined) conditions.push(`action = ${param(filters.action)}`);
  if (filters.actorKind !== undefined) conditions.push(`actor_kind = CAST(${param(filters.actorKind)} AS "audit_actor_kind")`);
  if (filters.actorId !== undefined) conditions.push(`actor_id = ${param(filters.actorId)}`);
  if (filters.targetId !== undefined) conditions.push(`target_id = ${param(filters.targetId)}`);
  if (filters.fromMs !== undefined) conditions.push(`at >= ${param(new Date(filters.fromMs))}`);
  if (filters.toMs !== undefined) conditions.push(`at < ${param(new Date(filters.toMs))}`);
  if (after !== null) {
    const at = param(new Date(after.atMs));
    const id = param(after.id);
    conditions.push(`(at < ${at} OR (at = ${at} AND id COLLATE "C" < ${id} COLLATE "C"))`);
  }
  const limitParam = param(limit);
  const text = `SELECT id, at, actor_kind::text AS actor_kind, actor_id, client_address, action, target_id, changes
    FROM audit_entries
    WHERE ${conditions.join(' AND ')}
    ORDER BY at DESC, id COLLATE "C" DESC
    LIMIT ${limitParam}`;
  return { text, values };
}

/** The log's order: newest first, then ids byte by byte, descending (as both services' SQL sorts). */
export function newestFirst(a: AuditEntryView, b: AuditEntryView): number {
  const at = Date.parse(b.at) - Date.parse(a.at);
  if (at !== 0) return at;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

