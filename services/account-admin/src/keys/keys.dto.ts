import { isModelFenceEntry, LIMITS, LIMIT_RESETS } from '@svc/contracts';
import type { LimitReset } from '@svc/contracts';
import { BooleanField, EnumField, FutureTimestampField, PageQueryDto, pageLimit, parseCidr, parseRfc3339, StringListField, TextField, UsdField } from '@svc/http-edge';
import { usdToMicros } from '@svc/money';
import type { KeyChanges } from './keys.repository';

/** Body of POST /v1/keys and PATCH /v1/keys/{id}; every field optional (docs/api.md section 9). */
export class KeyBodyDto {
  @TextField(LIMITS.keyName, { presence: 'optional', description: 'Not null; defaults to "" on create.' })
  name?: string;

  @UsdField({ min: 0, max: LIMITS.keyLimitUsd.max, exclusiveMin: true }, { presence: 'nullable', description: 'Credit limit in USD, greater than 0, at most 6 decimals; null removes the limit (and its reset period).' })
  limit_usd?: number | null;

  @EnumField(LIMIT_RESETS, { presence: 'nullable', message: 'limit_reset must be "daily", "weekly", "monthly" or null', description: 'Period after which the limit starts again; needs a limit.' })
  limit_reset?: LimitReset | null;

  @FutureTimestampField({ presence: 'nullable', description: 'A future RFC 3339 timestamp with an offset, or null for never.' })
  expires_at?: string | null;

  @BooleanField({ presence: 'optional' })
  disabled?: boolean;

  @StringListField(LIMITS.allowedModels, LIMITS.modelFenceEntry.max, isModelFenceEntry, 'a catalog model id or <provider>/*', {
    presence: 'nullable',
    description: `The models this key may search: catalog model ids or \`<provider>/*\`, ${LIMITS.allowedModels.min} to ${LIMITS.allowedModels.max} distinct entries; null: every model. A model outside it is skipped (\`model not allowed for this key\`); none allowed is 403 model_not_allowed.`,
  })
  allowed_models?: string[] | null;

  @StringListField(LIMITS.allowedIps, LIMITS.cidr.max, (value) => parseCidr(value) !== null, 'an IPv4 or IPv6 address or CIDR', {
    presence: 'nullable',
    description: `The client addresses this key may be used from: ${LIMITS.allowedIps.min} to ${LIMITS.allowedIps.max} distinct IPv4/IPv6 CIDRs (a bare address is one host); null: any address. Any other address is 403 ip_not_allowed.`,
  })
  allowed_ips?: string[] | null;
}

/** A parsed body, the changes the repository writes: a property is present only when the body had that field. */
export type KeyInput = KeyChanges;

/** The validated body in the service's terms (micro-USD, dates); cross-field rules are the service's. */
export function toKeyInput(body: KeyBodyDto): KeyInput {
  const input: KeyInput = {};
  if (body.name !== undefined) input.name = body.name;
  if (body.limit_usd !== undefined) input.limitMicros = body.limit_usd === null ? null : usdToMicros(body.limit_usd);
  if (body.limit_reset !== undefined) input.limitReset = body.limit_reset;
  if (body.expires_at !== undefined) input.expiresAt = body.expires_at === null ? null : new Date(parseRfc3339(body.expires_at) ?? Number.NaN);
  if (body.disabled !== undefined) input.disabled = body.disabled;
  if (body.allowed_models !== undefined) input.allowedModels = body.allowed_models ?? [];
  if (body.allowed_ips !== undefined) input.allowedIps = body.allowed_ips ?? [];
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
