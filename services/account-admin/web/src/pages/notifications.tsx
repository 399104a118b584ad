import { LIMITS } from '@svc/contracts/limits';
import { ALERT_EVENT_TYPES } from '@svc/contracts/mail';
import type { ReactNode } from 'react';
import { api, qs } from '../api';
import type { AlertEventType, List, NotificationSetting, WebhookEndpoint } from '../api';
import { ErrorNote, Loading, RegionTable, Switch, useLoad, useSubmit } from '../components';
import { Link } from '../router';

const ALERT_TEXT: Record<AlertEventType, string> = {
  'balance.low': 'The balance fell below your low-balance threshold',
  'key.limit.threshold': 'An API key reached 80 % or 100 % of its limit',
  'auto_topup.failed': 'An automatic top-up failed or was not made',
  'auto_topup.succeeded': 'An automatic top-up succeeded',
};

/**
 * Per alert type: whether it is mailed to the owner (a switch, saved at once) and which webhook
 * endpoints receive it (chosen on the Webhooks page). Either, both or neither.
 */
export function NotificationsPage({ email }: { email: string }): ReactNode {
  const settings = useLoad(() => api<{ data: NotificationSetting[] }>('GET', '/notifications'), []);
  const endpoints = useLoad(() => api<List<WebhookEndpoint>>('GET', `/webhook-endpoints${qs({ limit: LIMITS.webhookEndpoints.max })}`), []);
  const change = useSubmit();
  if (settings.loading && settings.data === null) return <Loading what="notification settings" />;
  if (settings.error !== null) return <ErrorNote error={settings.error} onRetry={settings.reload} />;
  const byType = new Map((settings.data?.data ?? []).map((s) => [s.event_type, s]));
  const hooks = endpoints.data?.data ?? [];
  return (
    <>
      <p className="lead">Choose how you hear about your money: by email to <strong>{email}</strong>, by webhook to your endpoints, or both. Email is on by default for a low balance and a failed top-up.</p>
      {change.error !== null && <ErrorNote error={change.error} />}
      {endpoints.error !== null && <p className="note warn" role="status">The webhook endpoints could not be read ({endpoints.error.message}); the email switches still work.</p>}
      <RegionTable label="Notification settings" head={<tr><th scope="col">Event</th><th scope="col">Email</th><th scope="col">Webhooks</th></tr>}>
        {ALERT_EVENT_TYPES.map((type) => {
          const setting = byType.get(type);
          const subscribed = hooks.filter((h) => h.enabled && h.events.includes(type));
          return (
            <tr key={type} data-event-type={type}>
              <th scope="row"><code>{type}</code><br /><span className="muted small">{ALERT_TEXT[type]}</span></th>
              <td data-label="Email">
                <Switch checked={setting?.email ?? false} label={`Email me: ${ALERT_TEXT[type]}`} disabled={change.busy || setting === undefined} onChange={(next) => change.submit(null, async () => {
                  await api('PUT', `/notifications/${type}`, { email: next });
                  settings.reload();
                })} />
                {setting !== undefined && setting.email === setting.email_default ? <span className="muted small"> default</span> : null}
              </td>
              <td data-label="Webhooks">
                {endpoints.loading && endpoints.data === null ? 'Loading…' : subscribed.length === 0 ? <span className="muted">None</span> : subscribed.map((h) => <code key={h.id} className="block">{h.url}</code>)}
              </td>
            </tr>
          );
        })}
      </RegionTable>
      <p className="muted small">Webhook endpoints and the events each receives are set on the <Link to="/webhooks">Webhooks</Link> page; the low-balance threshold and automatic top-up on <Link to="/billing-settings">Billing settings</Link>.</p>
    </>
  );
}
