import { LIMITS } from '@svc/contracts';
import type { RequestKind } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { microsToUsd } from '@svc/money';
import { CalendarDateField, EnumField, IdField } from '@svc/http-edge';
import { DAY_MS, dayOf, FIRST_DAY, formatDay, GROUPINGS } from '../../common/usage-query';
import type { DayRange, Grouping, UsageQuery } from '../../common/usage-query';
import type { UsageReport } from '../../services/usage/usage.service';

export const DEFAULT_RANGE_DAYS = LIMITS.usageRangeDays.default;
export const MAX_RANGE_DAYS = LIMITS.usageRangeDays.max;

/** `from` and `to`: UTC calendar days, `to` inclusive. */
export class DayRangeQueryDto {
  @CalendarDateField({ presence: 'optional', description: `First UTC day (YYYY-MM-DD); default ${DEFAULT_RANGE_DAYS - 1} days before \`to\`.` })
  from?: string;

  @CalendarDateField({ presence: 'optional', description: `Last UTC day (YYYY-MM-DD), inclusive; default today. At most ${MAX_RANGE_DAYS} days from \`from\`.` })
  to?: string;
}

/**
 * from/to (inclusive UTC days); defaults: to = today, from = 29 days before to (30 days), but
 * never before 0001-01-01: a default range ending in the first days of year 1 starts on its first.
 */
export function toRange(params: DayRangeQueryDto, now: Date): DayRange {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const to = params.to === undefined ? today : dayOf(params.to);
  const from = params.from === undefined ? Math.max(FIRST_DAY, to - (DEFAULT_RANGE_DAYS - 1) * DAY_MS) : dayOf(params.from);
  if (from > to) throw new AppError('invalid_request', `from (${formatDay(from)}) is after to (${formatDay(to)})`);
  if ((to - from) / DAY_MS + 1 > MAX_RANGE_DAYS) throw new AppError('invalid_request', `the range from..to is at most ${MAX_RANGE_DAYS} days`);
  return { from, to };
}

/** GET /v1/usage?from&to&group_by&key_id */
export class UsageQueryDto extends DayRangeQueryDto {
  @EnumField(GROUPINGS, { presence: 'optional', default: 'day', message: 'group_by must be one of day, model, key, kind' })
  group_by?: Grouping;

  @IdField('apiKey', { presence: 'optional', message: 'key_id must be an API key id (key_...)', description: 'Only this API key\'s usage.' })
  key_id?: string;
}

export function toUsageQuery(query: UsageQueryDto, now: Date = new Date()): UsageQuery {
  return { range: toRange(query, now), groupBy: query.group_by ?? 'day', keyId: query.key_id ?? null };
}

export interface UsageRowView {
  date?: string;
  model?: string;
  key_id?: string;
  /** search or extract (group_by=kind). */
  kind?: RequestKind;
  searches: number;
  failed_attempts: number;
  cost_usd: number;
  /** The part of cost_usd that was BYOK fees (attempts with the account's own provider key). */
  byok_fee_usd: number;
  /** Searches answered from the result cache (a stored answer, or an identical search's in flight). */
  cache_hits: number;
  /** What those searches saved against the provider's price of the same answers. */
  cache_saved_usd: number;
}

export interface UsageView {
  from: string;
  to: string;
  data: UsageRowView[];
  total: { searches: number; cost_usd: number; byok_fee_usd: number; cache_hits: number; cache_saved_usd: number };
  request_id: string;
}

export function usageView(report: UsageReport, requestId: string): UsageView {
  const field = report.groupBy === 'day' ? 'date' : report.groupBy === 'model' ? 'model' : report.groupBy === 'kind' ? 'kind' : 'key_id';
  return {
    from: formatDay(report.range.from),
    to: formatDay(report.range.to),
    data: report.rows.map((row) => ({
      [field]: row.group, searches: row.searches, failed_attempts: row.failedAttempts, cost_usd: microsToUsd(row.costMicros), byok_fee_usd: microsToUsd(row.byokFeeMicros),
      cache_hits: row.cacheHits, cache_saved_usd: microsToUsd(row.cacheSavedMicros),
    })),
    total: {
      searches: report.total.searches, cost_usd: microsToUsd(report.total.costMicros), byok_fee_usd: microsToUsd(report.total.byokFeeMicros),
      cache_hits: report.total.cacheHits, cache_saved_usd: microsToUsd(report.total.cacheSavedMicros),
    },
    request_id: requestId,
  };
}
