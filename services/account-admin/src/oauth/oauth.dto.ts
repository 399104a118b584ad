import { LIMITS, LIMIT_RESETS } from '@svc/contracts';
import type { LimitReset } from '@svc/contracts';
import { EnumField, FutureTimestampField, parseRfc3339, UsdField } from '@svc/http-edge';
import { usdToMicros } from '@svc/money';
import type { ApproveInput } from './authorization.service';

/** Body of POST /dashboard/api/oauth/requests/{id}/approve: the grant key's limit, its reset period and expiry. */
export class ConsentDto {
  @UsdField({ min: 0, max: LIMITS.keyLimitUsd.max, exclusiveMin: true }, { presence: 'required', description: 'The most the app may spend, in USD, per reset period (all time without one).' })
  limit_usd!: number;

  @EnumField(LIMIT_RESETS, { presence: 'nullable', message: 'limit_reset must be "daily", "weekly", "monthly" or null', description: 'Period after which the limit starts again; null: never.' })
  limit_reset?: LimitReset | null;

  @FutureTimestampField({ presence: 'nullable', description: 'When the connection ends: a future RFC 3339 timestamp with an offset, or null for never.' })
  expires_at?: string | null;
}

export function toApproveInput(body: ConsentDto): ApproveInput {
  return {
    limitMicros: usdToMicros(body.limit_usd),
    limitReset: body.limit_reset ?? null,
    expiresAt: body.expires_at === undefined || body.expires_at === null ? null : new Date(parseRfc3339(body.expires_at) ?? Number.NaN),
  };
}
