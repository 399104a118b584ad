import type { ReactNode } from 'react';
import { ApiError } from '../api';
// GET /v1/status (public, same origin: the gateway serves the dashboard); docs/api.md section 7.
import type { HealthWindow, ModelStatus, ServiceStatus } from '../api';
import { ErrorNote, Loading, useLoad } from '../components';

async function loadStatus(): Promise<ServiceStatus> {
  let response: Response;
  try {
    response = await fetch('/v1/status', { headers: { accept: 'application/json' }, cache: 'no-store' });
  } catch {
    throw new ApiError(0, 'network', 'The server could not be reached. Check your connection and try again.', null);
  }
  if (!response.ok) throw new ApiError(response.status, 'http_error', `The server answered ${response.status}.`, response.headers.get('x-svc-request-id'));
  return (await response.json()) as ServiceStatus;
}

const STATUS_TEXT: Readonly<Record<ModelStatus, string>> = { operational: 'Operational', degraded: 'Degraded', unavailable: 'Unavailable' };
const STATUS_CLASS: Readonly<Record<ModelStatus, string>> = { operational: 'on', degraded: 'warn', unavailable: 'off' };
const BREAKER_TEXT = { closed: 'Closed', open: 'Open', half_open: 'Open, probing' } as const;

function StatusBadge({ status }: { status: ModelStatus }): ReactNode {
  return <span className={`badge ${STATUS_CLASS[status]}`}>{STATUS_TEXT[status]}</span>;
}

const rate = (w: HealthWindow): string => (w.success_rate === null ? '–' : `${(w.success_rate * 100).toFixed(1)} %`);
const ms = (value: number | null): string => (value === null ? '–' : value >= 1000 ? `≤ ${value / 1000} s` : `≤ ${value} ms`);

/** One window in one cell: calls and success rate, then the latency quantiles. */
function WindowCell({ w, label }: { w: HealthWindow; label: string }): ReactNode {
  return (
    <td className="num" data-label={label}>
      {w.calls === 0 ? <span className="muted">no calls</span> : (
        // One child, so the phone layout (a flex row: the label, then this) keeps it together.
        <span>
          {w.calls} {w.calls === 1 ? 'call' : 'calls'} · {rate(w)} answered
          <br />
          <span className="muted small">p50 {ms(w.p50_ms)} · p95 {ms(w.p95_ms)}</span>
        </span>
      )}
    </td>
  );
}

/**
 * The providers' health as the platform sees it (GET /v1/status): each provider's breaker
 * and every model's status, success rate and latency over the last 5 minutes and hour.
 */
export function ProviderStatusPage(): ReactNode {
  const status = useLoad(loadStatus, []);
  if (status.loading && status.data === null) return <Loading what="provider status" />;
  if (status.error !== null) return <ErrorNote error={status.error} onRetry={status.reload} />;
  const data = status.data;
  if (data === null) return null;
  return (
    <>
      <p className="muted">
        How each provider answers searches made with the platform&apos;s keys, from every gateway.
        A provider whose breaker is open is skipped (nothing charged) and your search moves on to its next model.
        Updated {new Date(data.updated_at).toLocaleTimeString()}.{' '}
        <button type="button" className="secondary" onClick={status.reload}>Refresh</button>
      </p>
      {!data.breaker_enabled && <div className="note warn"><p>The breaker is off on this deployment: failing providers are still called.</p></div>}
      <section className="panel" aria-labelledby="providers-title">
        <h2 id="providers-title">Providers</h2>
        <div className="table-wrap">
          <table className="stack" data-testid="provider-status">
            <thead>
              <tr><th scope="col">Provider</th><th scope="col">Status</th><th scope="col">Breaker</th><th scope="col" className="num">Last 5 minutes</th><th scope="col" className="num">Last hour</th></tr>
            </thead>
            <tbody>
              {data.providers.map((p) => (
                <tr key={p.provider}>
                  <th scope="row">{p.provider}</th>
                  <td data-label="Status"><StatusBadge status={p.status} /></td>
                  <td data-label="Breaker">
                    {BREAKER_TEXT[p.breaker.state]}{p.breaker.forced !== null ? ` (held ${p.breaker.forced} by an operator)` : ''}
                    {p.breaker.reason !== null && <span className="muted small"> · {p.breaker.reason}</span>}
                    {p.breaker.retry_after_seconds !== null && <span className="muted small"> · retry in {p.breaker.retry_after_seconds} s</span>}
                  </td>
                  <WindowCell w={p.last_5m} label="Last 5 minutes" />
                  <WindowCell w={p.last_1h} label="Last hour" />
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <section className="panel" aria-labelledby="models-title">
        <h2 id="models-title">Models</h2>
        <div className="table-wrap">
          <table className="stack" data-testid="model-status">
            <thead>
              <tr><th scope="col">Model</th><th scope="col">Status</th><th scope="col" className="num">Last 5 minutes</th><th scope="col" className="num">Last hour</th></tr>
            </thead>
            <tbody>
              {data.models.map((m) => (
                <tr key={m.id}>
                  <th scope="row">{m.id}</th>
                  <td data-label="Status"><StatusBadge status={m.status} /></td>
                  <WindowCell w={m.last_5m} label="Last 5 minutes" />
                  <WindowCell w={m.last_1h} label="Last hour" />
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
    </>
  );
}
