import { LIMITS } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { isId } from '@svc/ids';
import { PageQueryDto, pageLimit, StringField, UsdField } from '@svc/http-edge';
import { microsToUsd, usdToMicros } from '@svc/money';
import type { Micros } from '@svc/money';
import type { LedgerEntryRecord } from '../../stores/ledger.repository';

export const MAX_GRANT_USD = LIMITS.grantUsd.max;
export const MAX_REASON_LENGTH = LIMITS.grantReason.max;
const EMAIL_MESSAGE = `email must be an email address (at most ${LIMITS.email.max} characters)`;
const NAME_MESSAGE = `name must be a string of ${LIMITS.accountName.min} to ${LIMITS.accountName.max} characters`;
const REASON_MESSAGE = `reason must be a string of ${LIMITS.grantReason.min} to ${LIMITS.grantReason.max} characters`;

/** POST /operator/accounts: `{"email"?, "name"?}`, an absent body is `{}`. */
export class CreateAccountDto {
  @StringField({ presence: 'optional', max: LIMITS.email.max, pattern: /^[^\s@]+@[^\s@]+$/, message: EMAIL_MESSAGE })
  email?: string;

  @StringField({ presence: 'optional', max: LIMITS.accountName.max, pattern: /\S/, message: NAME_MESSAGE })
  name?: string;
}

export interface CreateAccountBody {
  email?: string;
  name?: string;
}

export function toCreateAccountBody(body: CreateAccountDto): CreateAccountBody {
  const out: CreateAccountBody = {};
  if (body.email !== undefined) out.email = body.email;
  if (body.name !== undefined) out.name = body.name.trim();
  return out;
}

/** POST /operator/accounts/{id}/grants: `{"amount_usd", "reason"}`. */
export class GrantDto {
  @UsdField({ min: 0, max: MAX_GRANT_USD, exclusiveMin: true }, { missingMessage: 'amount_usd is required' })
  amount_usd!: number;

  @StringField({ max: MAX_REASON_LENGTH, pattern: /\S/, missingMessage: 'reason is required', message: REASON_MESSAGE })
  reason!: string;
}

export interface GrantBody {
  amountMicros: Micros;
  reason: string;
}

export function toGrantBody(body: GrantDto): GrantBody {
  return { amountMicros: usdToMicros(body.amount_usd), reason: body.reason.trim() };
}

/** The Idempotency-Key header: absent, or 1..255 printable ASCII characters. */
export function parseIdempotencyKey(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  if (typeof value !== 'string' || !/^[\x20-\x7e]{1,255}$/.test(value)) {
    throw new AppError('invalid_request', 'Idempotency-Key must be 1 to 255 printable characters');
  }
  return value;
}

/** `limit` (1..100, default 20) and an opaque `cursor` from a previous page. */
export class LedgerListQueryDto extends PageQueryDto {}

export interface ListQuery {
  limit: number;
  afterId: string | null;
}

export function toListQuery(query: LedgerListQueryDto): ListQuery {
  return { limit: pageLimit(query), afterId: query.cursor === undefined ? null : decodeCursor(query.cursor) };
}

const CURSOR_PREFIX = 'l1.';

export function encodeCursor(entryId: string): string {
  return Buffer.from(CURSOR_PREFIX + entryId, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  const text = /^[A-Za-z0-9_-]{1,200}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const id = text.startsWith(CURSOR_PREFIX) ? text.slice(CURSOR_PREFIX.length) : '';
  if (!isId('ledgerEntry', id)) throw new AppError('invalid_request', 'cursor is not valid for this list');
  return id;
}

/** The operator API's ledger entry JSON. */
export interface LedgerEntryView {
  id: string;
  account_id: string;
  kind: string;
  amount_usd: number;
  balance_after_usd: number;
  reason: string | null;
  created_at: string;
}

export function ledgerEntryView(entry: LedgerEntryRecord): LedgerEntryView {
  return {
    id: entry.id,
    account_id: entry.accountId,
    kind: entry.kind,
    amount_usd: microsToUsd(entry.amountMicros),
    balance_after_usd: microsToUsd(entry.balanceAfterMicros),
    reason: entry.reason,
    created_at: entry.createdAt.toISOString(),
  };
}
