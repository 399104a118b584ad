import { periodOf, redisKeys } from '@svc/contracts';
import { countersOf } from './hydration.service';

const ACCOUNT = 'acct_counters';
const KEY = 'key_counters';

function pending(chargedMicros: number, settledAtMs: number, requestId: string) {
  return { requestId, chargedMicros, keyId: KEY, settledAtMs };
}

function counter(counters: ReturnType<typeof countersOf>, startMs: number) {
  return counters.filter((c) => c.key === redisKeys.keyPeriodUsage(ACCOUNT, KEY, startMs));
}

describe('countersOf: the usage counters hydration rebuilds', () => {
  it('on a Monday the day and the week share one counter: a pending charge counts once in it, and it lives until the week ends', () => {
    const monday = Date.UTC(2026, 10, 23, 10, 0, 0); // Monday 2026-11-23
    const day = periodOf('daily', monday);
    const week = periodOf('weekly', monday);
    expect(week.startMs).toBe(day.startMs);
    const counters = countersOf(ACCOUNT, [], [pending(30_000, monday - 60_000, 'req_a')], monday);
    const shared = counter(counters, day.startMs);
    expect(shared).toHaveLength(1);
    expect(shared[0]?.value).toBe(30_000);
    expect(shared[0]?.expireAtMs).toBeGreaterThan(week.endMs);
  });

  it('on the 1st the day and the month share one counter that lives until the month ends', () => {
    const first = Date.UTC(2026, 11, 1, 8, 0, 0); // Tuesday 2026-12-01
    const month = periodOf('monthly', first);
    expect(periodOf('daily', first).startMs).toBe(month.startMs);
    const counters = countersOf(ACCOUNT, [{ keyId: KEY, sinceMicros: new Map([[month.startMs, 5_000]]), allTimeMicros: 9_000 }], [pending(7_000, first - 1_000, 'req_b')], first);
    const shared = counter(counters, month.startMs);
    expect(shared).toHaveLength(1);
    expect(shared[0]?.value).toBe(12_000);
    expect(shared[0]?.expireAtMs).toBeGreaterThan(month.endMs);
    expect(counters.find((c) => c.key === redisKeys.keyTotalUsage(ACCOUNT, KEY))?.value).toBe(16_000);
  });

  it('on a day when every period starts apart, each counter counts a pending charge once', () => {
    const wednesday = Date.UTC(2026, 10, 25, 12, 0, 0);
    const counters = countersOf(ACCOUNT, [], [pending(4_000, wednesday - 1_000, 'req_c')], wednesday);
    for (const reset of ['daily', 'weekly', 'monthly'] as const) {
      const period = periodOf(reset, wednesday);
      const own = counter(counters, period.startMs);
      expect(own).toHaveLength(1);
      expect(own[0]?.value).toBe(4_000);
      expect(own[0]?.expireAtMs).toBeGreaterThan(period.endMs);
    }
  });
});
