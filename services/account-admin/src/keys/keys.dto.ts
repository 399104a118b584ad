import { LIMIT_RESETS } from '@svc/contracts';
import type { LimitReset } from '@svc/contracts';
import { IfPresent, IsFutureTimestamp, IsText, IsUsdAmount, PageQueryDto, pageLimit, parseRfc3339 } from '@svc/http-edge';
import { usdToMicros } from '@svc/money';
import { IsBoolean, IsIn, IsOptional } from 'class-validator';

export const NAME_MAX = 100;
/** The largest key limit accepted (USD). */
export const LIMIT_MAX_USD = 1_000_000_000;

/** Body of POST /v1/keys and PATCH /v1/keys/{id}; every field optional (docs/api.md section 9). */
export class KeyBodyDto {
  @IfPresent()
  @IsText(1, NAME_MAX)
  name?: string;

  @IsOptional()
  @IsUsdAmount({ min: 0, max: LIMIT_MAX_USD, exclusiveMin: true })
  limit_usd?: number | null;

  @IsOptional()
  @IsIn(LIMIT_RESETS, { message: 'limit_reset must be "daily", "weekly", "monthly" or null' })
  limit_reset?: LimitReset | null;

  @IsOptional()
  @IsFutureTimestamp()
  expires_at?: string | null;

  @IfPresent()
  @IsBoolean({ message: 'disabled must be true or false' })
  disabled?: boolean;
}

/** A parsed body: a property is present only when the body had that field. */
export interface KeyInput {
  name?: string;
  limitMicros?: number | null;
  limitReset?: LimitReset | null;
  expiresAt?: Date | null;
  disabled?: boolean;
}

/** The validated body in the service's terms (micro-USD, dates); cross-field rules are the service's. */
export function toKeyInput(body: KeyBodyDto): KeyInput {
  const input: KeyInput = {};
  if (body.name !== undefined) input.name = body.name;
  if (body.limit_usd !== undefined) input.limitMicros = body.limit_usd === null ? null : usdToMicros(body.limit_usd);
  if (body.limit_reset !== undefined) input.limitReset = body.limit_reset;
  if (body.expires_at !== undefined) input.expiresAt = body.expires_at === null ? null : new Date(parseRfc3339(body.expires_at) ?? Number.NaN);
  if (body.disabled !== undefined) input.disabled = body.disabled;
  return input;
}

/** `limit` 1..100 (default 20) and an opaque `cursor` (docs/api.md "Lists and cursors"). */
export class ListQueryDto extends PageQueryDto {}

export interface ListQuery {
  limit: number;
  cursor: string | null;
}

export function toListQuery(query: ListQueryDto): ListQuery {
  return { limit: pageLimit(query), cursor: query.cursor ?? null };
}
