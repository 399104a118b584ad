import { filterInstantMs, unsupportedFilters } from '@svc/contracts';
import type { ModelSpec, SearchFilters } from '@svc/contracts';

const DAY_MS = 86_400_000;

/**
 * A filter's date or date-time as an RFC 3339 UTC instant: a date stands for the start of its
 * UTC day (`start`, published_after) or its last millisecond (`end`, published_before).
 */
export function filterInstantIso(value: string, end: 'start' | 'end'): string {
  return new Date(filterInstantMs(value, end)).toISOString();
}

/**
 * A filter's date or date-time as a whole UTC day for a provider that takes days (Brave's
 * freshness range, Tavily's start_date and end_date), rounded inward so the range is never
 * wider than the one asked for: published_after 2025-01-01T12:00Z becomes 2025-01-02;
 * published_before 2025-01-31T12:00Z becomes 2025-01-30.
 */
export function filterDay(value: string, end: 'start' | 'end'): string {
  const ms = filterInstantMs(value, end);
  const dayStart = Math.floor(ms / DAY_MS) * DAY_MS;
  let day: number;
  if (end === 'start') day = ms === dayStart ? dayStart : dayStart + DAY_MS;
  else day = ms === dayStart + DAY_MS - 1 ? dayStart : dayStart - DAY_MS;
  return new Date(day).toISOString().slice(0, 10);
}

/** The gateway calls a model only with filters it honours (plan step): anything else is a bug, never a silent drop. */
export function assertHonoured(model: ModelSpec, filters: SearchFilters): void {
  const missing = unsupportedFilters(model.supportedFilters, filters);
  if (missing !== null) throw new Error(`model ${model.id} cannot honour the filters ${missing.join(', ')}`);
}
