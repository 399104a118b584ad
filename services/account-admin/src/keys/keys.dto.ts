import { AppError } from '@svc/errors';
import { LIMIT_RESETS } from '@svc/contracts';
import type { LimitReset } from '@svc/contracts';
import { isUsdAmount, usdToMicros } from '@svc/money';
import { has, parseRfc3339, rejectUnknownFields } from '../http/json-body';

/** Fields of POST /v1/keys and PATCH /v1/keys/{id} (CONTRACT.md "Keys"). */
export const KEY_FIELDS = ['name', 'limit_usd', 'limit_reset', 'expires_at', 'disabled'] as const;

/** A parsed body: a property is present only when the body had that field. */
export interface KeyInput {
  name?: string;
  limitMicros?: number | null;
  limitReset?: LimitReset | null;
  expiresAt?: Date | null;
  disabled?: boolean;
}

export const NAME_MAX = 100;

export function parseName(value: unknown): string {
  if (typeof value !== 'string') throw new AppError('invalid_request', 'name must be a string');
  const length = [...value].length;
  if (length < 1 || length > NAME_MAX) throw new AppError('invalid_request', `name must be 1 to ${NAME_MAX} characters`);
  return value;
}

/** Validates each present field; cross-field rules (limit_reset needs limit_usd) are the service's. */
export function parseKeyInput(body: Record<string, unknown>, nowMs: number): KeyInput {
  rejectUnknownFields(body, KEY_FIELDS);
  const input: KeyInput = {};
  if (has(body, 'name')) input.name = parseName(body.name);
  if (has(body, 'limit_usd')) {
    const value = body.limit_usd;
    if (value === null) input.limitMicros = null;
    else if (typeof value !== 'number' || !Number.isFinite(value)) throw new AppError('invalid_request', 'limit_usd must be a number or null');
    else if (value <= 0) throw new AppError('invalid_request', 'limit_usd must be greater than 0');
    else if (!isUsdAmount(value)) throw new AppError('invalid_request', 'limit_usd must have at most 6 decimals and be at most 1000000000');
    else input.limitMicros = usdToMicros(value);
  }
  if (has(body, 'limit_reset')) {
    const value = body.limit_reset;
    if (value === null) input.limitReset = null;
    else if (typeof value === 'string' && (LIMIT_RESETS as readonly string[]).includes(value)) input.limitReset = value as LimitReset;
    else throw new AppError('invalid_request', 'limit_reset must be "daily", "weekly", "monthly" or null');
  }
  if (has(body, 'expires_at')) {
    const value = body.expires_at;
    if (value === null) input.expiresAt = null;
    else {
      const ms = typeof value === 'string' ? parseRfc3339(value) : null;
      if (ms === null) throw new AppError('invalid_request', 'expires_at must be an RFC 3339 timestamp (e.g. 2030-01-01T00:00:00Z) or null');
      if (ms <= nowMs) throw new AppError('invalid_request', 'expires_at must be in the future');
      input.expiresAt = new Date(ms);
    }
  }
  if (has(body, 'disabled')) {
    if (typeof body.disabled !== 'boolean') throw new AppError('invalid_request', 'disabled must be true or false');
    input.disabled = body.disabled;
  }
  return input;
}

export interface ListQuery {
  limit: number;
  cursor: string | null;
}

const LIST_PARAMS = ['limit', 'cursor'];

/** `limit` 1..100 (default 20) and an opaque `cursor`; anything else is 400. */
export function parseListQuery(query: Record<string, unknown>): ListQuery {
  rejectUnknownQuery(query, LIST_PARAMS);
  let limit = 20;
  if (query.limit !== undefined) {
    if (typeof query.limit !== 'string' || !/^\d{1,3}$/.test(query.limit)) {
      throw new AppError('invalid_request', 'limit must be an integer from 1 to 100');
    }
    limit = Number(query.limit);
    if (limit < 1 || limit > 100) throw new AppError('invalid_request', 'limit must be an integer from 1 to 100');
  }
  let cursor: string | null = null;
  if (query.cursor !== undefined) {
    if (typeof query.cursor !== 'string' || query.cursor === '') throw new AppError('invalid_request', 'cursor is not valid');
    cursor = query.cursor;
  }
  return { limit, cursor };
}

function rejectUnknownQuery(query: Record<string, unknown>, allowed: readonly string[]): void {
  for (const name of Object.keys(query)) {
    if (!allowed.includes(name)) throw new AppError('invalid_request', `unknown query parameter "${name}"`);
  }
}
