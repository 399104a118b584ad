import type { LimitReset } from './key-record';

export interface Period {
  startMs: number;
  endMs: number;
}

const DAY_MS = 86_400_000;

/**
 * The UTC period that contains `nowMs`: daily from 00:00, weekly from Monday 00:00,
 * monthly from the 1st 00:00. `endMs` is exclusive: the first millisecond of the next period.
 */
export function periodOf(reset: LimitReset, nowMs: number): Period {
  const now = new Date(nowMs);
  const dayStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  switch (reset) {
    case 'daily':
      return { startMs: dayStart, endMs: dayStart + DAY_MS };
    case 'weekly': {
      const sinceMonday = (now.getUTCDay() + 6) % 7;
      const startMs = dayStart - sinceMonday * DAY_MS;
      return { startMs, endMs: startMs + 7 * DAY_MS };
    }
    case 'monthly':
      return {
        startMs: Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1),
        endMs: Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1),
      };
    default: {
      const unreachable: never = reset;
      return unreachable;
    }
  }
}

/** A key's period counter outlives its period by this much, so the period's usage stays readable (every writer sets it so). */
export const KEY_PERIOD_COUNTER_GRACE_MS = 7 * DAY_MS;
