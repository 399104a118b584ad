import { useState } from 'react';
import type { ReactNode } from 'react';
import { api } from '../api';
import type { ApiKey, ConnectedAppView } from '../api';
import { ConfirmDialog, Empty, ErrorNote, Loading, RegionTable, UsageBar, useLoad } from '../components';
import { dateTime, resetLabel, usd } from '../format';

/** GET /dashboard/api/connected-apps (tools/openapi ConnectedAppList). */
type ConnectedApp = ConnectedAppView<ApiKey>;

/**
 * Apps connected by OAuth (chat-app connectors): each has its own API key (listed under API
 * keys too), with the limit chosen at consent and its spend. Revoking ends the app's access
 * within the key propagation bound.
 */
export function ConnectedAppsPage(): ReactNode {
  const apps = useLoad(() => api<{ data: ConnectedApp[] }>('GET', '/connected-apps'), []);
  const [revoking, setRevoking] = useState<ConnectedApp | null>(null);

  if (apps.loading) return <Loading what="connected apps" />;
  if (apps.error !== null) return <ErrorNote error={apps.error} onRetry={apps.reload} />;
  const list = apps.data?.data ?? [];
  return (
    <>
      <p className="muted">Chat apps (claude.ai, ChatGPT and others) connected to your account through OAuth. Each uses its own API key with the limit you chose.</p>
      {list.length === 0 ? (
        <Empty>No app is connected. Add the connector URL <code>/mcp/oauth</code> in an app to connect one.</Empty>
      ) : (
        <RegionTable label="Connected apps" className="connected-apps stack" head={<tr><th scope="col">App</th><th scope="col">Returns to</th><th scope="col">Spend</th><th scope="col">Connected</th><th scope="col">Status</th><th scope="col"><span className="sr-only">Actions</span></th></tr>}>
          {list.map((app) => (
            <tr key={app.id} data-grant={app.id}>
              <th scope="row" className="app-name">{app.client_name}</th>
              <td data-label="Returns to">{app.redirect_host}</td>
              <td data-label="Spend" className="spend limit">
                {app.key === null ? '—' : (
                  <>
                    <span className="spend-text">{usd(app.key.usage_usd, { precise: true })}{app.key.limit_usd === null ? '' : ` of ${usd(app.key.limit_usd)} ${resetLabel(app.key.limit_reset)}`}</span>
                    {app.key.limit_usd !== null && <UsageBar used={app.key.usage_usd ?? 0} limit={app.key.limit_usd} label={`Spend of ${app.client_name} against its limit`} />}
                  </>
                )}
              </td>
              <td data-label="Connected">{dateTime(app.created_at)}</td>
              <td data-label="Status" className="status">{app.revoked_at === null ? 'Active' : `Revoked ${dateTime(app.revoked_at)}${app.revoked_reason === null ? '' : ` (${app.revoked_reason})`}`}</td>
              <td className="row-actions">{app.revoked_at === null && <button type="button" className="danger-text" onClick={() => setRevoking(app)} aria-label={`Revoke ${app.client_name}`}>Revoke</button>}</td>
            </tr>
          ))}
        </RegionTable>
      )}
      <ConfirmDialog
        title="Revoke this app?"
        message={<p>{revoking?.client_name} loses access: its key is deleted and its next call is refused.</p>}
        confirmLabel="Revoke"
        open={revoking !== null}
        onCancel={() => setRevoking(null)}
        onConfirm={async () => {
          if (revoking === null) return;
          await api('DELETE', `/connected-apps/${encodeURIComponent(revoking.id)}`);
          setRevoking(null);
          apps.reload();
        }}
      />
    </>
  );
}
