import { LIMITS } from '@svc/contracts/limits';
import { useId, useState } from 'react';
import type { FormEvent, ReactNode } from 'react';
import { api } from '../api';
import type { ConsentView, LimitReset } from '../api';
import { ErrorNote, Field, Loading, useLoad, useSubmit } from '../components';
import { dateTime, localInputToIso } from '../format';
import { useRouter } from '../router';

/**
 * The consent page an app's authorization request lands on (/dashboard/oauth/consent?request=…):
 * the signed-in owner sees who asks and where the browser goes back to, sets the spend
 * limit, its reset period and an expiry for the app's own API key, and approves or denies.
 * Either way the browser then goes back to the app.
 */
export function ConsentPage(): ReactNode {
  const { location } = useRouter();
  const requestId = location.search.get('request') ?? '';
  const id = useId();
  const view = useLoad(() => api<ConsentView>('GET', `/oauth/requests/${encodeURIComponent(requestId)}`), [requestId]);
  const [limit, setLimit] = useState('1');
  const [reset, setReset] = useState<LimitReset | ''>('daily');
  const [expires, setExpires] = useState('');
  const decision = useSubmit();

  if (view.loading) return <Loading what="the request" />;
  if (view.error !== null || view.data === null) {
    return view.error === null ? null : <ErrorNote error={view.error} />;
  }
  const request = view.data;
  const go = (answer: { redirect_to: string }): void => window.location.assign(answer.redirect_to);
  const approve = (event: FormEvent): void =>
    decision.submit(event, async () => {
      const answer = await api<{ redirect_to: string }>('POST', `/oauth/requests/${encodeURIComponent(request.id)}/approve`, {
        limit_usd: Number(limit),
        limit_reset: reset === '' ? null : reset,
        expires_at: localInputToIso(expires),
      });
      go(answer);
    }, { stayBusy: true });
  const deny = (): void =>
    decision.submit(null, async () => go(await api<{ redirect_to: string }>('POST', `/oauth/requests/${encodeURIComponent(request.id)}/deny`)), { stayBusy: true });

  return (
    <div className="consent">
      <p>
        <strong className="client-name">{request.client_name}</strong> wants to search the web with your account&apos;s credits, through its own API key.
      </p>
      <dl className="facts">
        <div><dt>Returns you to</dt><dd className="redirect-host">{request.redirect_host}</dd></div>
        <div><dt>Client</dt><dd>{request.client_kind === 'metadata_document' ? <>published at <code>{request.client_id}</code></> : <>named by itself (registered without a published identity)</>}</dd></div>
        <div><dt>Request expires</dt><dd>{dateTime(request.expires_at)}</dd></div>
      </dl>
      <form onSubmit={approve} className="form">
        {decision.error !== null && <ErrorNote error={decision.error} />}
        <div className="row">
          <Field label="Spending limit (USD)" id={`${id}-limit`} hint="The most this app may spend per period.">
            <input id={`${id}-limit`} name="limit_usd" type="number" inputMode="decimal" min="0.000001" max={LIMITS.keyLimitUsd.max} step="any" required value={limit} onChange={(e) => setLimit(e.target.value)} aria-describedby={`${id}-limit-hint`} />
          </Field>
          <Field label="Limit resets" id={`${id}-reset`} hint="Periods start at 00:00 UTC.">
            <select id={`${id}-reset`} name="limit_reset" value={reset} onChange={(e) => setReset(e.target.value as LimitReset | '')} aria-describedby={`${id}-reset-hint`}>
              <option value="daily">Daily</option>
              <option value="weekly">Weekly (Monday)</option>
              <option value="monthly">Monthly (the 1st)</option>
              <option value="">Never (a total limit)</option>
            </select>
          </Field>
        </div>
        <Field label="Connection expires" id={`${id}-expires`} hint="Your local time. Empty: until you revoke it.">
          <input id={`${id}-expires`} name="expires_at" type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} aria-describedby={`${id}-expires-hint`} />
        </Field>
        <p className="hint">You can see its spend and revoke it at any time under Connected apps.</p>
        <div className="actions">
          <button type="button" className="secondary" onClick={deny} disabled={decision.busy}>Deny</button>
          <button type="submit" className="primary" disabled={decision.busy}>{decision.busy ? 'Working…' : 'Approve'}</button>
        </div>
      </form>
    </div>
  );
}
