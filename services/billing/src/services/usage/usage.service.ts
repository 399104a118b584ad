import { AppError } from '@svc/errors';
import type { Micros } from '@svc/money';
import { DAY_MS } from '../../common/usage-query';
import type { DayRange, Grouping, UsageQuery } from '../../common/usage-query';
import type { UsageRepository, UsageRow } from '../../stores/usage.repository';


export interface UsageReport {
  range: DayRange;
  groupBy: Grouping;
  rows: UsageRow[];
  total: { searches: number; costMicros: Micros; byokFeeMicros: Micros; cacheHits: number; cacheSavedMicros: Micros };
}

/** Whose usage is asked for: the account, and the key that asks (an API key sees only its own). */
export interface UsageCaller {
  accountId: string;
  keyId: string;
  keyKind: 'api' | 'management';
}

/** GET /v1/usage: an API key sees only its own usage; a management key the account's (or one key's). */
export class UsageService {
  constructor(private readonly repository: UsageRepository) {}

  async report(caller: UsageCaller, query: UsageQuery): Promise<UsageReport> {
    let keyId = query.keyId;
    if (caller.keyKind === 'api') {
      if (keyId !== null && keyId !== caller.keyId) throw new AppError('not_found', `key ${keyId} does not exist`);
      keyId = caller.keyId;
    }
    const filter = { accountId: caller.accountId, start: new Date(query.range.from), end: new Date(query.range.to + DAY_MS), keyId };
    const [rows, total] = await Promise.all([
      query.groupBy === 'model' ? this.repository.byModel(filter) : this.repository.bySearch(filter, query.groupBy),
      this.repository.total(filter),
    ]);
    return { range: query.range, groupBy: query.groupBy, rows, total };
  }
}
