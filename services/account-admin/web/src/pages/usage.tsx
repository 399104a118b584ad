import { LIMITS } from '@svc/contracts/limits';
import { useId, useMemo, useState } from 'react';
import type { FormEvent, ReactNode } from 'react';
import { api, qs } from '../api';
import type { ApiKey, Grouping, List, Usage, UsageRow } from '../api';
import { BarChart } from '../chart';
import { usageCsv } from '../csv-files';
import { Empty, ErrorNote, Loading, RegionTable, useLoad } from '../components';
import { daysBefore, usd, utcDay } from '../format';

const GROUP_NAMES: Record<Grouping, string> = { day: 'Day (UTC)', model: 'Model', key: 'API key', kind: 'Kind' };

/** What each kind of request is called on the page. */
const KIND_NAMES: Readonly<Record<string, string>> = { search: 'Searches', extract: 'Page reads (extract)' };

function groupOf(row: UsageRow, grouping: Grouping): string {
  switch (grouping) {
    case 'day': return row.date ?? '';
    case 'model': return row.model ?? '';
    case 'key': return row.key_id ?? '';
    case 'kind': return row.kind ?? '';
  }
}

function labelOf(row: UsageRow, grouping: Grouping, keyNames: ReadonlyMap<string, string>): string {
  if (grouping === 'kind') return KIND_NAMES[row.kind ?? ''] ?? row.kind ?? '';
  return grouping === 'key' ? keyNames.get(row.key_id ?? '') ?? `${row.key_id ?? ''} (deleted)` : groupOf(row, grouping);
}

/** Usage over a date range, grouped by day, model, key or kind (searches, extracts): a chart, a table and a CSV file. */
export function UsagePage(): ReactNode {
  const id = useId();
  const today = new Date();
  const [query, setQuery] = useState({ from: utcDay(daysBefore(today, 29)), to: utcDay(today), group_by: 'day' as Grouping });
  const [draft, setDraft] = useState(query);
  const usage = useLoad(() => api<Usage>('GET', `/usage${qs(query)}`), [query.from, query.to, query.group_by]);
  const keys = useLoad(() => api<List<ApiKey>>('GET', `/keys${qs({ limit: LIMITS.pageSize.max })}`), []);
  const keyNames = useMemo(() => new Map((keys.data?.data ?? []).map((k) => [k.id, k.name === '' ? k.label : `${k.name} (${k.label})`])), [keys.data]);
  const label = (row: UsageRow): string => labelOf(row, query.group_by, keyNames);

  const submit = (event: FormEvent): void => {
    event.preventDefault();
    setQuery(draft);
  };
  const rows = usage.data?.data ?? [];
  const chartSeries = useMemo(() => [{ label: 'Cost (USD)', values: rows.map((r) => r.cost_usd) }], [rows]);
  const chartLabels = useMemo(() => rows.map((r) => (query.group_by === 'day' ? (r.date ?? '').slice(5) : labelOf(r, query.group_by, keyNames))), [rows, query.group_by, keyNames]);

  const csvHref = useMemo(() => {
    if (usage.data === null) return null;
    return URL.createObjectURL(new Blob([usageCsv(usage.data.data, query.group_by)], { type: 'text/csv;charset=utf-8' }));
  }, [usage.data, query.group_by]);

  return (
    <>
      <form className="filters" onSubmit={submit} aria-label="Usage filters">
        <div className="field">
          <label htmlFor={`${id}-from`}>From</label>
          <input id={`${id}-from`} type="date" required value={draft.from} max={draft.to} onChange={(e) => setDraft({ ...draft, from: e.target.value })} />
        </div>
        <div className="field">
          <label htmlFor={`${id}-to`}>To</label>
          <input id={`${id}-to`} type="date" required value={draft.to} min={draft.from} onChange={(e) => setDraft({ ...draft, to: e.target.value })} />
        </div>
        <div className="field">
          <label htmlFor={`${id}-group`}>Group by</label>
          <select id={`${id}-group`} value={draft.group_by} onChange={(e) => setDraft({ ...draft, group_by: e.target.value as Grouping })}>
            <option value="day">Day</option>
            <option value="model">Model</option>
            <option value="key">API key</option>
            <option value="kind">Kind (search or extract)</option>
          </select>
        </div>
        <button type="submit" className="primary">Show</button>
      </form>
      {usage.loading && usage.data === null ? <Loading what="usage" /> : usage.error !== null ? <ErrorNote error={usage.error} onRetry={usage.reload} /> : (
        <>
          <div className="summary">
            <p><strong data-testid="usage-total">{usd(usage.data?.total.cost_usd, { precise: true })}</strong> for {usage.data?.total.searches ?? 0} requests (searches and page reads), {usage.data?.from} to {usage.data?.to} (UTC days)</p>
            {(usage.data?.total.cache_hits ?? 0) > 0 && <p data-testid="usage-cache">{usage.data?.total.cache_hits} answered from the cache, saving <strong>{usd(usage.data?.total.cache_saved_usd, { precise: true })}</strong></p>}
            {csvHref !== null && <a className="button secondary" href={csvHref} download={`usage-${query.from}-${query.to}-by-${query.group_by}.csv`}>Download CSV</a>}
          </div>
          {rows.length === 0 ? <Empty><p>No searches in this period.</p></Empty> : (
            <>
              <BarChart labels={chartLabels} series={chartSeries} stacked={false} summary={`Cost per ${query.group_by} from ${query.from} to ${query.to}; the table below lists every value.`} />
              <RegionTable
                label="Usage table"
                head={<tr><th scope="col">{GROUP_NAMES[query.group_by]}</th><th scope="col" className="num">Requests</th><th scope="col" className="num">Failed attempts</th><th scope="col" className="num">Cost</th><th scope="col" className="num">of which provider-key fee</th><th scope="col" className="num">From cache</th><th scope="col" className="num">Cache saved</th></tr>}
                foot={<tr><th scope="row">Total</th><td className="num" data-label="Requests">{usage.data?.total.searches}</td><td className="empty-cell" /><td className="num" data-label="Cost">{usd(usage.data?.total.cost_usd, { precise: true })}</td><td className="num" data-label="of which provider-key fee">{usd(usage.data?.total.byok_fee_usd, { precise: true })}</td><td className="num" data-label="From cache">{usage.data?.total.cache_hits}</td><td className="num" data-label="Cache saved">{usd(usage.data?.total.cache_saved_usd, { precise: true })}</td></tr>}
              >
                {rows.map((r) => (
                  <tr key={groupOf(r, query.group_by)}>
                    <th scope="row">{label(r)}</th>
                    <td className="num" data-label="Requests">{r.searches}</td>
                    <td className="num" data-label="Failed attempts">{r.failed_attempts}</td>
                    <td className="num" data-label="Cost">{usd(r.cost_usd, { precise: true })}</td>
                    <td className="num" data-label="of which provider-key fee">{usd(r.byok_fee_usd, { precise: true })}</td>
                    <td className="num" data-label="From cache">{r.cache_hits}</td>
                    <td className="num" data-label="Cache saved">{usd(r.cache_saved_usd, { precise: true })}</td>
                  </tr>
                ))}
              </RegionTable>
            </>
          )}
        </>
      )}
    </>
  );
}
