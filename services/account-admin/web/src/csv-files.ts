import { csvDocument } from '@svc/csv';
import { AUDIT_CSV_COLUMNS } from '@svc/contracts/audit';
import type { AuditEntry, UsageGroupBy as Grouping, UsageRow } from '@svc/sdk/types';

/**
 * The dashboard's CSV files, written by the platform's one CSV writer (`@svc/csv`: RFC 4180,
 * text neutralised against spreadsheet formulas, numbers written as numbers).
 */

/** The usage page's file: the grouping's column (text), then the figures (numbers). */
export function usageCsv(rows: readonly UsageRow[], grouping: Grouping): string {
  const groupColumn = grouping === 'day' ? 'date' : grouping === 'model' ? 'model' : grouping === 'kind' ? 'kind' : 'key_id';
  const group = (row: UsageRow): string | undefined => (grouping === 'day' ? row.date : grouping === 'model' ? row.model : grouping === 'kind' ? row.kind : row.key_id);
  return csvDocument(
    [groupColumn, 'searches', 'failed_attempts', 'cost_usd', 'byok_fee_usd', 'cache_hits', 'cache_saved_usd'],
    rows.map((r) => [group(r), r.searches, r.failed_attempts, r.cost_usd, r.byok_fee_usd, r.cache_hits, r.cache_saved_usd]),
  );
}

/** The audit log's file: the columns of AUDIT_CSV_COLUMNS, every one text, `changes` as JSON. */
export function auditCsv(entries: readonly AuditEntry[]): string {
  const cells = (entry: AuditEntry): Record<(typeof AUDIT_CSV_COLUMNS)[number], string | null> => ({
    at: entry.at, actor_kind: entry.actor.kind, actor_id: entry.actor.id, client_address: entry.client_address,
    action: entry.action, target_id: entry.target_id, changes: JSON.stringify(entry.changes),
  });
  return csvDocument(AUDIT_CSV_COLUMNS, entries.map((entry) => {
    const row = cells(entry);
    return AUDIT_CSV_COLUMNS.map((column) => row[column]);
  }));
}
