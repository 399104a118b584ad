import { AUDIT_ACTIONS, AUDIT_ACTOR_KINDS } from '@svc/contracts';
import type { AuditAction, AuditActorKind, AuditEntryView } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { EnumField, StringField, TimestampField } from './validation/fields';
import { isRepresentableTime, PageQueryDto, pageLimit, parseRfc3339 } from './validation/validators';

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
export interface AuditPosition {
  atMs: number;
  id: string;
}

export function encodeAuditCursor(position: AuditPosition): string {
  return Buffer.from(JSON.stringify({ t: position.atMs, i: position.id }), 'utf8').toString('base64url');
}

export function decodeAuditCursor(cursor: string): AuditPosition {
  const invalid = new AppError('invalid_request', 'cursor is not valid');
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw invalid;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid;
  }
  if (typeof value !== 'object' || value === null) throw invalid;
  const { t, i } = value as { t?: unknown; i?: unknown };
  if (!isRepresentableTime(t) || t < 0 || typeof i !== 'string' || !/^[A-Za-z0-9_]{1,64}$/.test(i)) throw invalid;
  return { atMs: t, id: i };
}

/** The log's order: newest first, then ids byte by byte, descending (as both services' SQL sorts). */
export function newestFirst(a: AuditEntryView, b: AuditEntryView): number {
  const at = Date.parse(b.at) - Date.parse(a.at);
  if (at !== 0) return at;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

