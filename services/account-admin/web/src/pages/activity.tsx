import { LIMITS } from '@svc/contracts/limits';
import { Fragment, useMemo, useState } from 'react';
import type { ReactNode } from 'react';
import { api, qs } from '../api';
import type { FilterName } from '@svc/contracts/filters';
import type { ActivityItem, ApiError, ApiKey, List, SearchFilters } from '../api';
import { Empty, ErrorNote, Loading, RegionTable, asApiError, useLoad } from '../components';
import { dateTime, usd } from '../format';

/** The account's recent searches and page reads (extracts), newest first, each with its kind and its attempts (the fallback chain, or a fan-out's models). */
export function ActivityPage(): ReactNode {
  const first = useLoad(() => api<List<ActivityItem>>('GET', `/activity${qs({ limit: 25 })}`), []);
  const keys = useLoad(() => api<List<ApiKey>>('GET', `/keys${qs({ limit: LIMITS.pageSize.max })}`), []);
  const [more, setMore] = useState<{ items: ActivityItem[]; cursor: string | null } | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [moreError, setMoreError] = useState<ApiError | null>(null);
  const [open, setOpen] = useState<Set<string>>(new Set());
  const keyNames = useMemo(() => new Map((keys.data?.data ?? []).map((k) => [k.id, k.name === '' ? k.label : k.name])), [keys.data]);

  if (first.loading && first.data === null) return <Loading what="recent searches" />;
  if (first.error !== null) return <ErrorNote error={first.error} onRetry={first.reload} />;
  const items = [...(first.data?.data ?? []), ...(more?.items ?? [])];
  const cursor = more === null ? first.data?.next_cursor ?? null : more.cursor;
  const loadMore = (): void => {
    if (cursor === null) return;
    setLoadingMore(true);
    setMoreError(null);
    api<List<ActivityItem>>('GET', `/activity${qs({ limit: 25, cursor })}`).then(
      (page) => { setMore({ items: [...(more?.items ?? []), ...page.data], cursor: page.next_cursor }); setLoadingMore(false); },
      (e: unknown) => { setMoreError(asApiError(e)); setLoadingMore(false); },
    );
  };
  const toggle = (id: string): void => {
    const next = new Set(open);
    if (next.has(id)) next.delete(id); else next.add(id);
    setOpen(next);
  };

  return (
    <>
      <p className="lead">Searches and page reads (extracts) appear here a few seconds after they finish. <button type="button" className="link" onClick={() => { setMore(null); first.reload(); }}>Refresh</button></p>
      {items.length === 0 ? <Empty><p>No searches yet.</p></Empty> : (
        <RegionTable label="Recent searches" className="activity stack" head={<tr><th scope="col">Time</th><th scope="col">Key</th><th scope="col">Kind and model</th><th scope="col">Outcome</th><th scope="col" className="num">Cost</th><th scope="col">Filters</th><th scope="col">Cache</th><th scope="col">Attempts</th><th scope="col">Request id</th></tr>}>
          {items.map((item) => {
            const expanded = open.has(item.request_id);
            const detailsId = `attempts-${item.request_id}`;
            const fanout = isFanout(item);
            return (
              <Fragment key={item.request_id}>
                <tr data-request-id={item.request_id}>
                  <td data-label="Time" className="wrap">{dateTime(item.created_at)}</td>
                  <td data-label="Key">{keyNames.get(item.key_id) ?? <code className="small">{item.key_id}</code>}</td>
                  <td data-label="Kind and model" className="wrap">
                    <span className={`badge kind-${fanout ? 'fanout' : item.kind}`} data-testid="activity-kind">{item.kind === 'extract' ? 'Page read' : item.kind === 'research' ? 'Research' : fanout ? 'Fan-out' : 'Search'}</span>{' '}
                    {fanout
                      ? <ul className="fanout-models" data-testid="activity-models" aria-label="Models that answered">{item.attempts.filter((a) => a.status === 'success').map((a) => <li key={a.model}><code>{a.model}</code></li>)}</ul>
                      : <code>{item.model ?? '—'}</code>}
                  </td>
                  <td data-label="Outcome"><span className={`badge ${item.status === 'success' ? 'on' : 'off'}`}>{item.status === 'success' ? 'Answered' : 'Failed'}</span></td>
                  <td className="num" data-label="Cost">{usd(item.cost_usd, { precise: true })}</td>
                  <td data-label="Filters" data-testid="activity-filters">{item.filters === null ? (item.kind === 'search' ? 'None' : '—') : <FilterList filters={item.filters} />}</td>
                  <td data-label="Cache" data-testid="activity-cache" className="wrap">{cacheLabel(item.attempts.find((a) => a.status === 'success')?.cache ?? null)}</td>
                  <td data-label="Attempts">
                    <button type="button" className="link" aria-expanded={expanded} aria-controls={detailsId} onClick={() => toggle(item.request_id)}>
                      {item.attempts.length} {item.attempts.length === 1 ? 'attempt' : 'attempts'}
                    </button>
                  </td>
                  <td data-label="Request id" className="id-cell"><code className="small">{item.request_id}</code></td>
                </tr>
                <tr id={detailsId} className="details" hidden={!expanded}>
                  <td colSpan={9}>
                    <ol className="attempts">
                      {item.attempts.map((a, i) => (
                        <li key={i}>
                          <code>{a.model}</code> via {a.provider}{a.source === 'byok' ? ' (your key)' : ''}: <strong>{a.status}</strong>
                          {a.error !== null && <> ({a.error}{a.timed_out ? ', timed out' : ''})</>}
                          {a.status === 'success' && <>, {a.results} {item.kind === 'extract' ? (a.results === 1 ? 'page' : 'pages') : item.kind === 'research' ? (a.results === 1 ? 'source' : 'sources') : 'results'}</>}, {usd(a.cost_usd, { precise: true })}
                          {(a.cache === 'hit' || a.cache === 'joined') && <> ({cacheLabel(a.cache).toLowerCase()}, saved {usd(a.saved_usd, { precise: true })})</>}
                        </li>
                      ))}
                    </ol>
                  </td>
                </tr>
              </Fragment>
            );
          })}
        </RegionTable>
      )}
      {moreError !== null && <ErrorNote error={moreError} />}
      {cursor !== null && <button type="button" className="secondary" onClick={loadMore} disabled={loadingMore}>{loadingMore ? 'Loading…' : 'Show older searches'}</button>}
    </>
  );
}

/**
 * A search that asked several models at once (strategy "fanout", docs/api.md 10.13): more than
 * one of its attempts answered, which a fallback never does (it stops at its first answer).
 * Its row names every model that answered; its attempts list each model with its own cost.
 */
function isFanout(item: ActivityItem): boolean {
  return item.kind === 'search' && item.attempts.filter((a) => a.status === 'success').length > 1;
}

/**
 * What each filter of POST /v1/search asked for, in the dashboard's words (keyed by the
 * declared filter names, so a filter added to packages/contracts without a label here fails
 * the type check); in the declaration's order.
 */
const FILTER_LABELS: { readonly [K in FilterName]-?: (value: NonNullable<SearchFilters[K]>) => string } = {
  include_domains: (domains) => `only ${domains.join(', ')}`,
  exclude_domains: (domains) => `not ${domains.join(', ')}`,
  country: (country) => `country ${country}`,
  language: (language) => `language ${language}`,
  published_after: (when) => `published after ${filterTime(when)}`,
  published_before: (when) => `published before ${filterTime(when)}`,
  safesearch: (level) => `safe search ${level}`,
};

/** A filter's date as sent (a whole UTC day), or its date-time in UTC to the second. */
function filterTime(value: string): string {
  return value.length === 10 ? value : `${value.slice(0, 10)} ${value.slice(11, 19)} UTC`;
}

function FilterList({ filters }: { filters: SearchFilters }): ReactNode {
  const shown: string[] = [];
  for (const name of Object.keys(FILTER_LABELS) as FilterName[]) {
    const value = filters[name];
    if (value !== undefined) shown.push((FILTER_LABELS[name] as (v: typeof value) => string)(value));
  }
  return <ul className="search-filters">{shown.map((label) => <li key={label}>{label}</li>)}</ul>;
}

/** How the result cache took part in an answer, in the dashboard's words. */
function cacheLabel(cache: string | null): string {
  switch (cache) {
    case 'hit':
      return 'From cache';
    case 'joined':
      return 'Shared with an identical search';
    case 'miss':
      return 'Provider (stored)';
    case 'off':
      return 'Provider';
    default:
      return '—';
  }
}
