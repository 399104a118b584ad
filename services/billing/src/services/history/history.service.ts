import type { ActivityView, DailySpendView, PurchaseView } from '@svc/contracts';
import { microsToUsd } from '@svc/money';
import { formatDay } from '../../common/usage-query';
import type { DayRange } from '../../common/usage-query';
import { encodeCursor } from '../../common/pages';
import type { HistoryPage } from '../../common/pages';
import type { AttemptRow, HistoryRepository, SearchRow } from '../../stores/history.repository';

export type { ActivityView, DailySpendView, PurchaseView } from '@svc/contracts';

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

function finalAttempt(attempts: AttemptRow[]): AttemptRow | undefined {
  return attempts.find((a) => a.status === 'success') ?? [...attempts].reverse().find((a) => a.status !== 'skipped') ?? attempts[attempts.length - 1];
}

function activityView(row: SearchRow): ActivityView {
  return {
    request_id: row.requestId,
    created_at: row.settledAt.toISOString(),
    key_id: row.keyId,
    kind: row.kind,
    model: finalAttempt(row.attempts)?.model ?? null,
    status: row.attempts.some((a) => a.status === 'success') ? 'success' : 'failed',
    cost_usd: microsToUsd(row.chargedMicros),
    filters: row.filters,
    attempts: row.attempts.map((a) => ({
      model: a.model, provider: a.provider, source: a.source, status: a.status, error: a.error,
      cost_usd: microsToUsd(a.chargedMicros), timed_out: a.timedOut, results: a.results, cache: a.cache, saved_usd: microsToUsd(a.savedMicros),
    })),
  };
}

/** The dashboard's account history: recent searches (activity) and credit purchases. */
export class HistoryService {
  constructor(private readonly repository: HistoryRepository) {}

  async activity(accountId: string, page: HistoryPage): Promise<Page<ActivityView>> {
    const rows = await this.repository.searches(accountId, page.limit + 1, page.after);
    const shown = rows.slice(0, page.limit);
    const last = shown[shown.length - 1];
    return { data: shown.map(activityView), next_cursor: rows.length > page.limit && last !== undefined ? encodeCursor(last.mark) : null };
  }

  /** Spend per day and model over a range of UTC days (the dashboard's stacked chart). */
  async dailySpend(accountId: string, range: DayRange): Promise<DailySpendView> {
    const rows = await this.repository.dailyByModel(accountId, new Date(range.from), new Date(range.to + 86_400_000));
    return {
      from: formatDay(range.from),
      to: formatDay(range.to),
      data: rows.map((r) => ({ date: r.day, model: r.model, attempts: r.attempts, cost_usd: microsToUsd(r.costMicros) })),
    };
  }

  async purchases(accountId: string, page: HistoryPage): Promise<Page<PurchaseView>> {
    const rows = await this.repository.purchases(accountId, page.limit + 1, page.after);
    const shown = rows.slice(0, page.limit);
    const last = shown[shown.length - 1];
    return {
      data: shown.map((r) => ({
        id: r.id, amount_usd: microsToUsd(r.creditMicros), status: r.status, created_at: r.createdAt.toISOString(),
        paid_at: r.paidAt?.toISOString() ?? null, refunded_usd: microsToUsd(r.refundedMicros), disputed_usd: microsToUsd(r.disputedMicros),
      })),
      next_cursor: rows.length > page.limit && last !== undefined ? encodeCursor(last.mark) : null,
    };
  }
}
