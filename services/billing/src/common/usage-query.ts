/** What a usage or date-range query means once validated (the DTOs in usage.dto.ts produce it). */

export const GROUPINGS = ['day', 'model', 'key', 'kind'] as const;
export type Grouping = (typeof GROUPINGS)[number];

/** A UTC calendar day as milliseconds at its 00:00. */
export type Day = number;

/** One UTC day in milliseconds. */
export const DAY_MS = 86_400_000;

export function formatDay(day: Day): string {
  return new Date(day).toISOString().slice(0, 10);
}

/** 0001-01-01, the first day a `YYYY-MM-DD` can name (IsCalendarDate); no range starts before it. */
export const FIRST_DAY: Day = -62_135_596_800_000;

/** A validated `YYYY-MM-DD` (IsCalendarDate) as its day. */
export function dayOf(value: string): Day {
  return Date.parse(`${value}T00:00:00Z`);
}

export interface DayRange {
  from: Day;
  /** Inclusive. */
  to: Day;
}

export interface UsageQuery {
  range: DayRange;
  groupBy: Grouping;
  keyId: string | null;
}
