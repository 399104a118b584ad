import { KEY_LIMIT_THRESHOLD_PERCENTS, periodOf } from '@svc/contracts';
import { microsToUsd } from '@svc/money';
import type { KeyLimit, KeyLimitSource } from '../../adapters/key-limits.adapter';
import type { Transactions } from '../../db/transactions';
import type { EventsRepository } from '../../stores/events.repository';
import type { ThresholdsRepository } from '../../stores/thresholds.repository';
import { formatDay } from '../../common/usage-query';

export type { KeyLimit, KeyLimitSource };

/** Keys read from the queue, and asked of account-admin, per call. */
const BATCH = 1_000;

export interface ThresholdStores {
  transactions: Transactions;
  thresholds: ThresholdsRepository;
  events: EventsRepository;
}

/**
 * key.limit.threshold (docs/decisions/0028, 0035): the keys that settled since their last
 * check (key_limit_checks, queued by a trigger on settlements in the drain's transaction) are
 * checked against their limits. A key's spend in its current period (its limit_reset's UTC
 * day, week or month; all time without a reset) is the sum of its days in key_spend_days, and
 * each of 80 % and 100 % reached is sent once per period: the key_limit_notices row and the
 * event are written in one transaction, and the row's primary key makes a second one (another
 * replica, a re-check) impossible. A key leaves the queue only at the version it was read at:
 * spend that landed while it was checked is checked again at the next evaluation.
 */
export class KeyLimitThresholds {
  constructor(
    private readonly stores: ThresholdStores,
    private readonly limits: KeyLimitSource,
  ) {}

  async evaluate(nowMs = Date.now()): Promise<number> {
    const { thresholds } = this.stores;
    let written = 0;
    let after = '';
    for (;;) {
      const queued = await thresholds.queuedKeyChecks(after, BATCH);
      if (queued.length === 0) return written;
      const limits = await this.limits.limitsOf(queued.map((q) => q.keyId));
      for (const limit of limits) written += await this.check(limit, nowMs);
      // Only once every key of the batch was checked: a failure leaves them for the next evaluation.
      await thresholds.deleteKeyChecks(queued);
      if (queued.length < BATCH) return written;
      after = queued[queued.length - 1]?.keyId ?? after;
    }
  }

  private async check(limit: KeyLimit, nowMs: number): Promise<number> {
    const { transactions, thresholds, events } = this.stores;
    const period = limit.limitReset === null ? { startMs: 0, endMs: null } : periodOf(limit.limitReset, nowMs);
    const end = period.endMs === null ? null : new Date(period.endMs);
    // Periods start and end on UTC midnights, so they are whole days of key_spend_days.
    const spent = await thresholds.keySpend(limit.keyId, limit.accountId, formatDay(period.startMs), period.endMs === null ? null : formatDay(period.endMs));
    let written = 0;
    for (const percent of KEY_LIMIT_THRESHOLD_PERCENTS) {
      if (spent * 100 < limit.limitMicros * percent) continue;
      written += await transactions.run(async (tx) => {
        if (!(await thresholds.claimKeyNotice(tx, { keyId: limit.keyId, accountId: limit.accountId, periodStart: new Date(period.startMs), percent }))) return 0;
        await events.emit(tx, {
          accountId: limit.accountId,
          type: 'key.limit.threshold',
          data: {
            key_id: limit.keyId, percent, limit_usd: microsToUsd(limit.limitMicros), usage_usd: microsToUsd(spent), limit_reset: limit.limitReset,
            period_start: limit.limitReset === null ? null : new Date(period.startMs).toISOString(), period_end: end?.toISOString() ?? null,
          },
        });
        return 1;
      });
    }
    return written;
  }
}
