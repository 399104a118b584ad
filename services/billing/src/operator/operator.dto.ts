import { AppError } from '@svc/errors';
import { isId } from '@svc/ids';
import { isUsdAmount, microsToUsd, usdToMicros } from '@svc/money';
import type { Micros } from '@svc/money';
import { jsonObject, queryParams } from '../http/json-object';
import type { LedgerEntryRecord } from '../ledger/ledger.repository';

export const MAX_GRANT_USD = 1_000_000;
export const MAX_REASON_LENGTH = 500;

export interface CreateAccountBody {
  email?: string;
  name?: string;
}

/** POST /operator/accounts: `{"email"?, "name"?}`, an absent body is `{}`. */
export function parseCreateAccountBody(body: unknown): CreateAccountBody {
  const fields = jsonObject(body, ['email', 'name'], { optional: true });
  const out: CreateAccountBody = {};
  if (fields.email !== undefined) {
    const email = fields.email;
    if (typeof email !== 'string' || email.length > 254 || !/^[^\s@]+@[^\s@]+$/.test(email)) {
      throw new AppError('invalid_request', 'email must be an email address (at most 254 characters)');
    }
    out.email = email;
  }
  if (fields.name !== undefined) {
    const name = fields.name;
    if (typeof name !== 'string' || name.trim().length === 0 || name.length > 200) {
      throw new AppError('invalid_request', 'name must be a string of 1 to 200 characters');
    }
    out.name = name.trim();
  }
  return out;
}

export interface GrantBody {
  amountMicros: Micros;
  reason: string;
}

/** POST /operator/accounts/{id}/grants: `{"amount_usd", "reason"}`. */
export function parseGrantBody(body: unknown): GrantBody {
  const fields = jsonObject(body, ['amount_usd', 'reason']);
  const amount = fields.amount_usd;
  if (amount === undefined) throw new AppError('invalid_request', 'amount_usd is required');
  if (typeof amount !== 'number' || !Number.isFinite(amount)) throw new AppError('invalid_request', 'amount_usd must be a number');
  if (amount <= 0) throw new AppError('invalid_request', 'amount_usd must be greater than 0');
  if (amount > MAX_GRANT_USD) throw new AppError('invalid_request', `amount_usd must be at most ${MAX_GRANT_USD}`);
  if (!isUsdAmount(amount)) throw new AppError('invalid_request', 'amount_usd must have at most 6 decimals');
  const reason = fields.reason;
  if (reason === undefined) throw new AppError('invalid_request', 'reason is required');
  if (typeof reason !== 'string' || reason.trim().length === 0 || reason.length > MAX_REASON_LENGTH) {
    throw new AppError('invalid_request', `reason must be a string of 1 to ${MAX_REASON_LENGTH} characters`);
  }
  return { amountMicros: usdToMicros(amount), reason: reason.trim() };
}

/** The Idempotency-Key header: absent, or 1..255 printable ASCII characters. */
export function parseIdempotencyKey(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  if (typeof value !== 'string' || !/^[\x20-\x7e]{1,255}$/.test(value)) {
    throw new AppError('invalid_request', 'Idempotency-Key must be 1 to 255 printable characters');
  }
  return value;
}

export interface ListQuery {
  limit: number;
  afterId: string | null;
}

/** `limit` (1..100, default 20) and an opaque `cursor` from a previous page. */
export function parseListQuery(query: unknown): ListQuery {
  const params = queryParams(query, ['limit', 'cursor']);
  let limit = 20;
  if (params.limit !== undefined) {
    if (!/^\d{1,3}$/.test(params.limit) || Number(params.limit) < 1 || Number(params.limit) > 100) {
      throw new AppError('invalid_request', 'limit must be an integer from 1 to 100');
    }
    limit = Number(params.limit);
  }
  let afterId: string | null = null;
  if (params.cursor !== undefined) afterId = decodeCursor(params.cursor);
  return { limit, afterId };
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
