import { LIMITS } from '@svc/contracts/limits';
import { useId, useState } from 'react';
import type { ReactNode } from 'react';
import { api, qs, WEBHOOK_EVENT_TYPES } from '../api';
import type { List, WebhookDelivery, WebhookEndpoint, WebhookEventType } from '../api';
import { ConfirmDialog, Dialog, Empty, ErrorNote, Field, FormActions, Loading, RegionTable, SecretOnce, Switch, useLoad, useSubmit } from '../components';
import { dateTime } from '../format';

const EVENT_TEXT: Record<WebhookEventType, string> = {
  'balance.low': 'The balance fell below your threshold',
  'key.limit.threshold': 'An API key reached 80 % or 100 % of its limit',
  'credits.purchased': 'Credits were bought',
  'auto_topup.succeeded': 'An automatic top-up succeeded',
  'auto_topup.failed': 'An automatic top-up failed',
  'research.completed': 'A research run completed (with its output and cost)',
  'research.failed': 'A research run failed (charged by the catalog\'s rules)',
};

function EndpointForm({ onCreated, onCancel }: { onCreated: (created: WebhookEndpoint) => void; onCancel: () => void }): ReactNode {
  const id = useId();
  const [url, setUrl] = useState('https://');
  const [events, setEvents] = useState<WebhookEventType[]>(['balance.low']);
  const form = useSubmit();
  const toggle = (type: WebhookEventType, on: boolean): void => setEvents((now) => (on ? [...now, type] : now.filter((t) => t !== type)));
  return (
    <form className="form" onSubmit={(event) => form.submit(event, async () => onCreated(await api<WebhookEndpoint>('POST', '/webhook-endpoints', { url, events })))}>
      {form.error !== null && <ErrorNote error={form.error} />}
      <Field label="URL" id={`${id}-url`} hint="Where events are POSTed: an https address on the internet.">
        <input id={`${id}-url`} type="url" required maxLength={LIMITS.webhookUrl.max} value={url} onChange={(e) => setUrl(e.target.value)} aria-describedby={`${id}-url-hint`} data-autofocus="true" />
      </Field>
      <fieldset className="field">
        <legend>Events</legend>
        {WEBHOOK_EVENT_TYPES.map((type) => (
          <label key={type} className="check">
            <input type="checkbox" checked={events.includes(type)} onChange={(e) => toggle(type, e.target.checked)} /> <code>{type}</code> <span className="muted small">{EVENT_TEXT[type]}</span>
          </label>
        ))}
      </fieldset>
      <FormActions onCancel={onCancel} busy={form.busy} disabled={events.length === 0} busyLabel="Adding…" label="Add endpoint" />
    </form>
  );
}

function Deliveries({ endpoint }: { endpoint: WebhookEndpoint }): ReactNode {
  const deliveries = useLoad(() => api<List<WebhookDelivery>>('GET', `/webhook-endpoints/${endpoint.id}/deliveries${qs({ limit: 20 })}`), [endpoint.id]);
  const again = useSubmit();
  if (deliveries.loading && deliveries.data === null) return <Loading what="deliveries" />;
  if (deliveries.error !== null) return <ErrorNote error={deliveries.error} onRetry={deliveries.reload} />;
  const rows = deliveries.data?.data ?? [];
  if (rows.length === 0) return <Empty>No deliveries yet.</Empty>;
  return (
    <>
      {again.error !== null && <ErrorNote error={again.error} />}
      <RegionTable label="Deliveries" head={<tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col">Last attempt</th><th scope="col"><span className="sr-only">Actions</span></th></tr>}>
        {rows.map((d) => {
          const last = d.attempts.at(-1);
          return (
            <tr key={d.id} data-delivery={d.id}>
              <th scope="row"><code>{d.event_type}</code></th>
              <td data-label="Status">{d.status}</td>
              <td data-label="Attempts">{d.attempt_count}</td>
              <td data-label="Last answer">{last === undefined ? '—' : `${last.status_code ?? last.error ?? ''} (${last.duration_ms} ms)`}</td>
              <td data-label="Last attempt">{dateTime(d.last_attempt_at)}</td>
              <td className="row-actions">
                <button type="button" className="secondary" disabled={again.busy} onClick={() => again.submit(null, async () => {
                  await api('POST', `/webhook-endpoints/${endpoint.id}/deliveries/${d.id}/redeliver`);
                  deliveries.reload();
                })}>Send again</button>
              </td>
            </tr>
          );
        })}
      </RegionTable>
    </>
  );
}

/** The account's webhook endpoints: add, switch on and off, rotate the secret, see deliveries. */
export function WebhooksPage(): ReactNode {
  const endpoints = useLoad(() => api<List<WebhookEndpoint>>('GET', `/webhook-endpoints${qs({ limit: LIMITS.webhookEndpoints.max })}`), []);
  const [adding, setAdding] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<WebhookEndpoint | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const change = useSubmit();
  if (endpoints.loading && endpoints.data === null) return <Loading what="webhook endpoints" />;
  if (endpoints.error !== null) return <ErrorNote error={endpoints.error} onRetry={endpoints.reload} />;
  const rows = endpoints.data?.data ?? [];
  const disabled = rows.filter((e) => e.disabled_reason === 'failing');
  return (
    <>
      <p className="lead">Events about your money are POSTed to your endpoints, signed with the endpoint&apos;s secret (the <code>svc-signature</code> header). Verify them with the SDK&apos;s <code>verifyWebhook</code>.</p>
      {disabled.length > 0 && (
        <div className="note warn" role="alert">
          {disabled.map((e) => <p key={e.id}><strong>{e.url}</strong> was turned off: its deliveries failed for 24 hours (since {dateTime(e.failing_since)}). Fix the receiver, then switch it on again.</p>)}
        </div>
      )}
      {change.error !== null && <ErrorNote error={change.error} />}
      <div className="actions">
        <button type="button" className="primary" onClick={() => setAdding(true)} disabled={rows.length >= LIMITS.webhookEndpoints.max}>Add endpoint</button>
      </div>
      {rows.length === 0 ? <Empty>No webhook endpoints yet.</Empty> : (
        <RegionTable label="Webhook endpoints" head={<tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">On</th><th scope="col">Added</th><th scope="col"><span className="sr-only">Actions</span></th></tr>}>
          {rows.map((e) => (
            <tr key={e.id} data-endpoint={e.id}>
              <th scope="row"><code>{e.url}</code></th>
              <td data-label="Events">{e.events.join(', ')}</td>
              <td data-label="On">
                <Switch checked={e.enabled} label={`Deliver to ${e.url}`} disabled={change.busy} onChange={(next) => change.submit(null, async () => {
                  await api('PATCH', `/webhook-endpoints/${e.id}`, { enabled: next });
                  endpoints.reload();
                })} />
              </td>
              <td data-label="Added">{dateTime(e.created_at)}</td>
              <td className="row-actions">
                <button type="button" className="secondary" onClick={() => setOpen(open === e.id ? null : e.id)} aria-expanded={open === e.id}>Deliveries</button>
                <button type="button" className="secondary" disabled={change.busy} onClick={() => change.submit(null, async () => {
                  const rotated = await api<WebhookEndpoint>('POST', `/webhook-endpoints/${e.id}/rotate-secret`);
                  setSecret(rotated.secret ?? null);
                  endpoints.reload();
                })}>Rotate secret</button>
                <button type="button" className="danger-text" onClick={() => setDeleting(e)}>Delete</button>
              </td>
            </tr>
          ))}
        </RegionTable>
      )}
      {open !== null && rows.some((e) => e.id === open) && <Deliveries endpoint={rows.find((e) => e.id === open) as WebhookEndpoint} />}
      <Dialog title="Add a webhook endpoint" open={adding} onClose={() => setAdding(false)}>
        {adding && <EndpointForm onCancel={() => setAdding(false)} onCreated={(created) => { setAdding(false); setSecret(created.secret ?? null); endpoints.reload(); }} />}
      </Dialog>
      <Dialog title="The endpoint's signing secret" open={secret !== null} onClose={() => setSecret(null)}>
        {secret !== null && <SecretOnce secret={secret} onDone={() => setSecret(null)} />}
      </Dialog>
      <ConfirmDialog
        title="Delete this endpoint?"
        open={deleting !== null}
        confirmLabel="Delete endpoint"
        message={<p>Events will no longer be sent to {deleting?.url}; deliveries still pending are cancelled.</p>}
        onCancel={() => setDeleting(null)}
        onConfirm={async () => {
          if (deleting === null) return;
          await api('DELETE', `/webhook-endpoints/${deleting.id}`);
          setDeleting(null);
          endpoints.reload();
        }}
      />
    </>
  );
}
