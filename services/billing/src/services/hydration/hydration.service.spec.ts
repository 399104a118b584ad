import { periodOf, redisKeys } from '@svc/contracts';
import { countersOf } from './hydration.service';

const ACCOUNT = 'acct_counters';
const KEY = 'key_counters';

function pending(chargedMicros: number, settledAtMs: number, requestId: string) {
  return { requestId, chargedMicros, keyId: KEY, settledAtMs };
}

function counter(counters: ReturnType<typeof countersOf>, reset: 'daily' | 'weekly' | 'monthly', startMs: number) {
  return counters.filter((c) => c.key === redisKeys.keyPeriodUsage(ACCOUNT, KEY, reset, startMs));
}

describe('countersOf: the usage counters hydration rebuilds', () => {
  it('on a Monday the day and the week start together, each with a counter of its own counting a pending charge once', () => {
    const monday = Date.UTC(2026, 10, 23, 10, 0, 0); // Monday 2026-11-23
    const day = periodOf('daily', monday);
    const week = periodOf('weekly', monday);
    expect(week.startMs).toBe(day.startMs);
    const counters = countersOf(ACCOUNT, [], [pending(30_000, monday - 60_000, 'req_a')], monday);
    const daily = counter(counters, 'daily', day.startMs);
    const weekly = counter(counters, 'weekly', week.startMs);
    expect([daily.length, weekly.length]).toEqual([1, 1]);
    expect([daily[0]?.value, weekly[0]?.value]).toEqual([30_000, 30_000]);
    expect(weekly[0]?.expireAtMs).toBeGreaterThan(week.endMs);
    expect(daily[0]?.expireAtMs).toBeGreaterThan(day.endMs);
  });

  it('on the 1st the day and the month start together; the month\'s counter lives until the month ends', () => {
    const first = Date.UTC(2026, 11, 1, 8, 0, 0); // Tuesday 2026-12-01
    const month = periodOf('monthly', first);
    expect(periodOf('daily', first).startMs).toBe(month.startMs);
    const counters = countersOf(ACCOUNT, [{ keyId: KEY, sinceMicros: new Map([[month.startMs, 5_000]]), allTimeMicros: 9_000 }], [pending(7_000, first - 1_000, 'req_b')], first);
    const monthly = counter(counters, 'monthly', month.startMs);
    expect(monthly).toHaveLength(1);
    expect(monthly[0]?.value).toBe(12_000);
    expect(monthly[0]?.expireAtMs).toBeGreaterThan(month.endMs);
    expect(counter(counters, 'daily', month.startMs)[0]?.value).toBe(12_000);
    expect(counters.find((c) => c.key === redisKeys.keyTotalUsage(ACCOUNT, KEY))?.value).toBe(16_000);
  });

  it('on a day when every period starts apart, each counter counts a pending charge once', () => {
    const wednesday = Date.UTC(2026, 10, 25, 12, 0, 0);
    const counters = countersOf(ACCOUNT, [], [pending(4_000, wednesday - 1_000, 'req_c')], wednesday);
    for (const reset of ['daily', 'weekly', 'monthly'] as const) {
      const period = periodOf(reset, wednesday);
      const own = counter(counters, reset, period.startMs);
      expect(own).toHaveLength(1);
      expect(own[0]?.value).toBe(4_000);
      expect(own[0]?.expireAtMs).toBeGreaterThan(period.endMs);
    }
  });
});
