import { Inject, Injectable, Optional } from '@nestjs/common';
import type { AuditEntryView } from '@svc/contracts';
import { decodeAuditCursor, encodeAuditCursor, newestFirst } from '@svc/http-edge';
import type { AuditFilters, AuditLogQuery, AuditPosition } from '@svc/http-edge';
import { AuditRepository } from './audit.repository';

/** Another service's part of the log, read in the same order with the same filters (billing's). */
export interface AuditSource {
  list(accountId: string, filters: AuditFilters, after: AuditPosition | null, limit: number, requestId: string): Promise<AuditEntryView[]>;
}
export const BILLING_AUDIT_SOURCE = Symbol('BILLING_AUDIT_SOURCE');

@Injectable()
export class AuditService {
  constructor(
    @Inject(AuditRepository) private readonly repository: AuditRepository,
    @Optional() @Inject(BILLING_AUDIT_SOURCE) private readonly billing: AuditSource | null = null,
  ) {}

  /**
   * One page of the account's log: account-admin's entries and billing's (purchases, grants),
   * merged in the log's order. Each source gives its first `limit + 1` after the cursor, so the
   * merged first `limit` are the page and one more says whether another follows.
   */
  async page(accountId: string, query: AuditLogQuery, requestId: string): Promise<{ data: AuditEntryView[]; next_cursor: string | null }> {
    const after = query.cursor === null ? null : decodeAuditCursor(query.cursor);
    const { filters, limit } = query;
    const [own, billing] = await Promise.all([
      this.repository.list(accountId, filters, after, limit + 1),
      this.billing === null ? Promise.resolve([]) : this.billing.list(accountId, filters, after, limit + 1, requestId),
    ]);
    const merged = [...own, ...billing].sort(newestFirst);
    const data = merged.slice(0, limit);
    const last = data[data.length - 1];
    const next = merged.length > limit && last !== undefined ? encodeAuditCursor({ atMs: Date.parse(last.at), id: last.id }) : null;
    return { data, next_cursor: next };
  }
}
