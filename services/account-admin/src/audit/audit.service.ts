import { Inject, Injectable, Optional } from '@nestjs/common';
import type { AuditEntryView } from '@svc/contracts';
import { decodeAuditCursor, encodeAuditCursor, newestFirst } from '@svc/http-edge';
import type { AuditFilters, AuditLogQuery, AuditPosition } from '@svc/http-edge';
import { AuditRepository } from './audit.repository';

/** Another service's part of the log, read in the same order with the same filters (billing's). */
export interface AuditSource {
  /** Its first `limit` entries after `after`, and whether more follow. */
  list(accountId: string, filters: AuditFilters, after: AuditPosition | null, limit: number, requestId: string): Promise<{ entries: AuditEntryView[]; more: boolean }>;
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
   * merged in the log's order. Each source gives its first `limit` after the cursor and whether
   * more follow; the merged first `limit` are the page, and another page follows when the
   * merge left some out or either source has more.
   */
  async page(accountId: string, query: AuditLogQuery, requestId: string): Promise<{ data: AuditEntryView[]; next_cursor: string | null }> {
    const after = query.cursor === null ? null : decodeAuditCursor(query.cursor);
    const { filters, limit } = query;
    const [own, billing] = await Promise.all([
      this.repository.list(accountId, filters, after, limit + 1).then((rows) => ({ entries: rows.slice(0, limit), more: rows.length > limit })),
      this.billing === null ? Promise.resolve({ entries: [], more: false }) : this.billing.list(accountId, filters, after, limit, requestId),
    ]);
    const merged = [...own.entries, ...billing.entries].sort(newestFirst);
    const data = merged.slice(0, limit);
    const last = data[data.length - 1];
    const more = merged.length > limit || own.more || billing.more;
    return { data, next_cursor: more && last !== undefined ? encodeAuditCursor({ atMs: Date.parse(last.at), id: last.id }) : null };
  }
}
