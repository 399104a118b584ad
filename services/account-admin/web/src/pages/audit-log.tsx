import { AUDIT_ACTIONS, AUDIT_ACTOR_KINDS } from '@svc/contracts/audit';
import { LIMITS } from '@svc/contracts/limits';
import { useId, useState } from 'react';
import type { FormEvent, ReactNode } from 'react';
import { api, qs } from '../api';
import type { ApiError, AuditEntry, List } from '../api';
import { Empty, ErrorNote, Field, Loading, RegionTable, asApiError, useLoad } from '../components';
import { auditCsv } from '../csv-files';
import { dateTime } from '../format';

const PAGE = 50;
/** The most entries one CSV export fetches (page after page). */
const EXPORT_MAX = 10_000;

interface Filters {
  action: string;
  actor_kind: string;
  actor_id: string;
  target_id: string;
}

const NO_FILTERS: Filters = { action: '', actor_kind: '', actor_id: '', target_id: '' };

const ACTOR_LABELS: Record<string, string> = {
  management_key: 'Management key', session: 'Dashboard user', oauth_grant: 'OAuth grant', operator: 'Operator',
};

function show(value: unknown): string {
  if (value === null) return '—';
  if (Array.isArray(value)) return value.join(', ');
  return String(value);
}

/** Who changed what in the account, newest first: filters, pages and a CSV export of every matching entry. */
export function AuditLogPage(): ReactNode {
  const id = useId();
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const first = useLoad(() => api<List<AuditEntry>>('GET', `/audit-log${qs({ ...filters, limit: PAGE })}`), [filters]);
  const [more, setMore] = useState<{ items: AuditEntry[]; cursor: string | null } | null>(null);
  const [busy, setBusy] = useState<'more' | 'export' | null>(null);
  const [error, setError] = useState<ApiError | null>(null);

  const apply = (event: FormEvent): void => {
    event.preventDefault();
    setMore(null);
    setFilters({ ...draft });
  };
  const items = [...(first.data?.data ?? []), ...(more?.items ?? [])];
  const cursor = more === null ? first.data?.next_cursor ?? null : more.cursor;
  const loadMore = (): void => {
    if (cursor === null) return;
    setBusy('more');
    setError(null);
    api<List<AuditEntry>>('GET', `/audit-log${qs({ ...filters, limit: PAGE, cursor })}`).then(
      (page) => { setMore({ items: [...(more?.items ?? []), ...page.data], cursor: page.next_cursor }); setBusy(null); },
      (e: unknown) => { setError(asApiError(e)); setBusy(null); },
    );
  };
  const exportCsv = async (): Promise<void> => {
    setBusy('export');
    setError(null);
    try {
      const all: AuditEntry[] = [];
      let next: string | null = null;
      do {
        const page: List<AuditEntry> = await api<List<AuditEntry>>('GET', `/audit-log${qs({ ...filters, limit: LIMITS.pageSize.max, cursor: next })}`);
        all.push(...page.data);
        next = page.next_cursor;
      } while (next !== null && all.length < EXPORT_MAX);
      const url = URL.createObjectURL(new Blob([auditCsv(all)], { type: 'text/csv;charset=utf-8' }));
      const link = document.createElement('a');
      link.href = url;
      link.download = `audit-log-${new Date().toISOString().slice(0, 10)}.csv`;
      document.body.append(link);
      link.click();
      link.remove();
      URL.revokeObjectURL(url);
    } catch (e) {
      setError(asApiError(e));
    } finally {
      setBusy(null);
    }
  };

  return (
    <>
      <p className="lead">Every change to keys, provider keys, purchases and grants: who made it, from which address, and each field before and after. Secrets are never recorded.</p>
      <form className="form filters" onSubmit={apply} aria-label="Filter the audit log">
        <div className="row">
          <Field label="Action" id={`${id}-action`}>
            <select id={`${id}-action`} value={draft.action} onChange={(e) => setDraft({ ...draft, action: e.target.value })}>
              <option value="">Any</option>
              {AUDIT_ACTIONS.map((action) => <option key={action} value={action}>{action}</option>)}
            </select>
          </Field>
          <Field label="Actor" id={`${id}-actor-kind`}>
            <select id={`${id}-actor-kind`} value={draft.actor_kind} onChange={(e) => setDraft({ ...draft, actor_kind: e.target.value })}>
              <option value="">Any</option>
              {AUDIT_ACTOR_KINDS.map((kind) => <option key={kind} value={kind}>{ACTOR_LABELS[kind] ?? kind}</option>)}
            </select>
          </Field>
          <Field label="Actor id" id={`${id}-actor-id`}>
            <input id={`${id}-actor-id`} value={draft.actor_id} onChange={(e) => setDraft({ ...draft, actor_id: e.target.value.trim() })} spellCheck={false} />
          </Field>
          <Field label="Target id" id={`${id}-target`}>
            <input id={`${id}-target`} value={draft.target_id} onChange={(e) => setDraft({ ...draft, target_id: e.target.value.trim() })} spellCheck={false} />
          </Field>
        </div>
        <div className="actions">
          <button type="submit" className="secondary">Filter</button>
          <button type="button" className="primary" disabled={busy !== null || items.length === 0} onClick={() => void exportCsv()}>
            {busy === 'export' ? 'Exporting…' : 'Export CSV'}
          </button>
        </div>
      </form>
      {error !== null && <ErrorNote error={error} />}
      {first.loading && first.data === null ? <Loading what="the audit log" /> : first.error !== null ? <ErrorNote error={first.error} onRetry={first.reload} /> : items.length === 0 ? (
        <Empty><p>No changes recorded{filters === NO_FILTERS ? ' yet' : ' match these filters'}.</p></Empty>
      ) : (
        <RegionTable label="Audit log" className="audit stack" head={<tr><th scope="col">Time</th><th scope="col">Actor</th><th scope="col">Address</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Changes</th></tr>}>
          {items.map((entry) => (
            <tr key={entry.id} data-entry-id={entry.id}>
              <td data-label="Time" className="wrap">{dateTime(entry.at)}</td>
              <td data-label="Actor" className="id-cell">{ACTOR_LABELS[entry.actor.kind] ?? entry.actor.kind} <code className="small">{entry.actor.id}</code></td>
              <td data-label="Address"><code className="small">{entry.client_address ?? '—'}</code></td>
              <td data-label="Action"><code>{entry.action}</code></td>
              <td data-label="Target" className="id-cell"><code className="small">{entry.target_id}</code></td>
              <td data-label="Changes" className="wrap">
                <ul className="changes">
                  {Object.entries(entry.changes).map(([field, change]) => (
                    <li key={field}><code>{field}</code>: {show(change.before)} → {show(change.after)}</li>
                  ))}
                </ul>
              </td>
            </tr>
          ))}
        </RegionTable>
      )}
      {cursor !== null && (
        <p><button type="button" className="secondary" disabled={busy !== null} onClick={loadMore}>{busy === 'more' ? 'Loading…' : 'Show older changes'}</button></p>
      )}
    </>
  );
}
