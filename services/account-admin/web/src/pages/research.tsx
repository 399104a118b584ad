import { Fragment, useState } from 'react';
import type { ReactNode } from 'react';
import { api, qs } from '../api';
import type { ApiError, ResearchRun, ResearchRunList, ResearchRunSummary, ResearchStatus } from '../api';
import { ConfirmDialog, Empty, ErrorNote, Loading, RegionTable, UsageBar, asApiError, useLoad } from '../components';
import { dateTime, usd } from '../format';

const PAGE_SIZE = 25;
const STATUSES: readonly ResearchStatus[] = ['queued', 'running', 'completed', 'failed', 'cancelled'];
const STATUS_LABELS: Readonly<Record<ResearchStatus, string>> = { queued: 'Queued', running: 'Running', completed: 'Completed', failed: 'Failed', cancelled: 'Cancelled' };
const ended = (status: ResearchStatus): boolean => status === 'completed' || status === 'failed' || status === 'cancelled';

/**
 * The account's research runs, newest first: status, model, cost against the cap (what a run
 * in flight holds), and a run's output, sources and attempts on demand. A run in flight can be
 * cancelled; runs are started with an API key (POST /v1/research, the SDK, svc research, MCP).
 */
export function ResearchPage(): ReactNode {
  const [status, setStatus] = useState<ResearchStatus | ''>('');
  const first = useLoad(() => api<ResearchRunList>('GET', `/research${qs({ limit: PAGE_SIZE, status })}`), [status]);
  const [more, setMore] = useState<{ items: ResearchRunSummary[]; cursor: string | null } | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [moreError, setMoreError] = useState<ApiError | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [cancelling, setCancelling] = useState<ResearchRunSummary | null>(null);
  const [changed, setChanged] = useState<Record<string, ResearchRunSummary>>({});

  const reload = (): void => { setMore(null); setChanged({}); first.reload(); };
  if (first.loading && first.data === null) return <Loading what="research runs" />;
  if (first.error !== null) return <ErrorNote error={first.error} onRetry={first.reload} />;
  const items = [...(first.data?.data ?? []), ...(more?.items ?? [])].map((run) => changed[run.id] ?? run);
  const cursor = more === null ? first.data?.next_cursor ?? null : more.cursor;
  const loadMore = (): void => {
    if (cursor === null) return;
    setLoadingMore(true);
    setMoreError(null);
    api<ResearchRunList>('GET', `/research${qs({ limit: PAGE_SIZE, cursor, status })}`).then(
      (page) => { setMore({ items: [...(more?.items ?? []), ...page.data], cursor: page.next_cursor }); setLoadingMore(false); },
      (e: unknown) => { setMoreError(asApiError(e)); setLoadingMore(false); },
    );
  };

  return (
    <>
      <p className="lead">
        Research runs are started with an API key (<code>POST /v1/research</code>, the SDK, <code>svc research</code> or the MCP tool <code>deep_research</code>).
        Each holds its cap from the balance while it runs and is charged its metered cost, never more than the cap. <button type="button" className="link" onClick={reload}>Refresh</button>
      </p>
      <div className="filters">
        <div className="field">
          <label htmlFor="research-status">Status</label>
          <select id="research-status" value={status} onChange={(e) => { setMore(null); setChanged({}); setStatus(e.target.value as ResearchStatus | ''); }}>
            <option value="">All</option>
            {STATUSES.map((s) => <option key={s} value={s}>{STATUS_LABELS[s]}</option>)}
          </select>
        </div>
      </div>
      {items.length === 0 ? <Empty><p>{status === '' ? 'No research runs yet.' : `No ${STATUS_LABELS[status].toLowerCase()} runs.`}</p></Empty> : (
        <RegionTable label="Research runs" className="research stack" head={
          <tr><th scope="col">Created</th><th scope="col">Input</th><th scope="col">Model</th><th scope="col">Status</th><th scope="col">Cost against cap</th><th scope="col">Run</th><th scope="col" /></tr>
        }>
          {items.map((run) => {
            const expanded = open === run.id;
            const detailsId = `research-${run.id}`;
            return (
              <Fragment key={run.id}>
                <tr data-run-id={run.id}>
                  <td data-label="Created" className="wrap">{dateTime(run.created_at)}</td>
                  <td data-label="Input" className="research-input">{run.input}</td>
                  <td data-label="Model"><code>{run.model ?? '—'}</code></td>
                  <td data-label="Status"><StatusBadge run={run} /></td>
                  <td data-label="Cost against cap" data-testid="research-cost"><CostAgainstCap run={run} /></td>
                  <td data-label="Run" className="id-cell"><code className="small">{run.id}</code></td>
                  <td className="actions-cell">
                    <button type="button" className="link" aria-expanded={expanded} aria-controls={detailsId} onClick={() => setOpen(expanded ? null : run.id)}>
                      {expanded ? 'Hide details' : ended(run.status) && run.status === 'completed' ? 'Show output' : 'Details'}
                    </button>
                    {!ended(run.status) && run.cancel_requested_at === null && (
                      <button type="button" className="danger-text" onClick={() => setCancelling(run)}>Cancel</button>
                    )}
                  </td>
                </tr>
                <tr id={detailsId} className="details" hidden={!expanded}>
                  <td colSpan={7}>{expanded && <RunDetails id={run.id} />}</td>
                </tr>
              </Fragment>
            );
          })}
        </RegionTable>
      )}
      {moreError !== null && <ErrorNote error={moreError} />}
      {cursor !== null && <button type="button" className="secondary" onClick={loadMore} disabled={loadingMore}>{loadingMore ? 'Loading…' : 'Show older runs'}</button>}
      <ConfirmDialog
        title="Cancel this research run?"
        open={cancelling !== null}
        onCancel={() => setCancelling(null)}
        confirmLabel="Cancel the run"
        message={cancelling === null ? null : (
          <p>
            {cancelling.status === 'queued'
              ? 'It has not started: it ends now and costs nothing.'
              : 'It is stopped at the provider and charged what the provider reports for it so far (Tavily cannot stop a task: it is charged when it ends), never more than its cap.'}
          </p>
        )}
        onConfirm={async () => {
          if (cancelling === null) return;
          const run = await api<ResearchRun>('POST', `/research/${encodeURIComponent(cancelling.id)}/cancel`);
          setChanged((c) => ({ ...c, [run.id]: run }));
          setCancelling(null);
        }}
      />
    </>
  );
}

function StatusBadge({ run }: { run: ResearchRunSummary }): ReactNode {
  const tone = run.status === 'completed' ? 'on' : run.status === 'failed' || run.status === 'cancelled' ? 'off' : 'warn';
  const label = run.cancel_requested_at !== null && !ended(run.status) ? 'Cancelling' : STATUS_LABELS[run.status];
  return <span className={`badge ${tone}`}>{label}</span>;
}

/** What a settled run cost against its cap (a bar), or what a run in flight holds of it. */
function CostAgainstCap({ run }: { run: ResearchRunSummary }): ReactNode {
  if (run.cost_usd === null) {
    return <span className="small">holds {usd(run.held_usd, { precise: true })} of a {usd(run.max_cost_usd, { precise: true })} cap</span>;
  }
  return (
    <div className="cost-cap">
      <span>{usd(run.cost_usd, { precise: true })} <span className="muted small">of {usd(run.max_cost_usd, { precise: true })}</span></span>
      <UsageBar used={run.cost_usd} limit={run.max_cost_usd} label={`Cost ${run.cost_usd} USD of a ${run.max_cost_usd} USD cap`} />
    </div>
  );
}

/** One run read whole: its output (text, structured), sources and every attempt. */
function RunDetails({ id }: { id: string }): ReactNode {
  const run = useLoad(() => api<ResearchRun>('GET', `/research/${encodeURIComponent(id)}`), [id]);
  if (run.loading && run.data === null) return <Loading what="the run" />;
  if (run.error !== null) return <ErrorNote error={run.error} onRetry={run.reload} />;
  const data = run.data;
  if (data === null) return null;
  return (
    <div className="research-details">
      {data.error !== null && <p className="note error">{data.error}</p>}
      {data.output === null ? (
        <p className="muted">{ended(data.status) ? 'No output: the run did not complete.' : 'The output appears here when the run completes.'}</p>
      ) : (
        <>
          <h2 className="small-heading">Output</h2>
          {data.output.text !== null && <div className="research-output" data-testid="research-output">{data.output.text}</div>}
          {data.output.structured !== null && <pre className="research-structured mono">{JSON.stringify(data.output.structured, null, 2)}</pre>}
          {data.sources.length > 0 && (
            <>
              <h2 className="small-heading">Sources</h2>
              <ol className="research-sources">
                {data.sources.map((source) => <li key={source.url}><a href={source.url} rel="noopener noreferrer" target="_blank">{source.title ?? source.url}</a> <span className="muted small">{source.url}</span></li>)}
              </ol>
            </>
          )}
        </>
      )}
      <h2 className="small-heading">Attempts</h2>
      <ol className="attempts">
        {data.attempts.map((a, i) => (
          <li key={i}>
            <code>{a.model}</code>: <strong>{a.status}</strong>{a.error !== null && <> ({a.error})</>}{a.cost_usd !== null && <>, {usd(a.cost_usd, { precise: true })}</>}
          </li>
        ))}
      </ol>
      <p className="muted small">
        Started {dateTime(data.started_at)} · ended {dateTime(data.completed_at)}
        {data.metadata !== null && <> · metadata {Object.entries(data.metadata).map(([k, v]) => `${k}=${v}`).join(', ')}</>}
      </p>
    </div>
  );
}
