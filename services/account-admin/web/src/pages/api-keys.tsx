import { useState } from 'react';
import type { ReactNode } from 'react';
import { api, qs } from '../api';
import type { ApiError, ApiKey, List } from '../api';
import { ConfirmDialog, Dialog, Empty, ErrorNote, Loading, SecretOnce, Switch, UsageBar, asApiError, useLoad } from '../components';
import { dateTime, resetLabel, usd } from '../format';
import { KeyForm } from './key-form';
import type { KeyFields } from './key-form';

function status(key: ApiKey): { text: string; tone: string } {
  if (key.disabled) return { text: 'Disabled', tone: 'off' };
  if (key.expires_at !== null && Date.parse(key.expires_at) <= Date.now()) return { text: 'Expired', tone: 'off' };
  if (key.limit_usd !== null && key.limit_remaining_usd === 0) return { text: 'Limit reached', tone: 'warn' };
  return { text: 'Active', tone: 'on' };
}

/** All API keys of the account (pages of 100, followed to the end). */
async function allKeys(): Promise<ApiKey[]> {
  const keys: ApiKey[] = [];
  let cursor: string | null = null;
  do {
    const page: List<ApiKey> = await api<List<ApiKey>>('GET', `/keys${qs({ limit: 100, cursor })}`);
    keys.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor !== null);
  return keys;
}

export function ApiKeysPage(): ReactNode {
  const keys = useLoad(allKeys, []);
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  const [editing, setEditing] = useState<ApiKey | null>(null);
  const [deleting, setDeleting] = useState<ApiKey | null>(null);
  const [rowError, setRowError] = useState<ApiError | null>(null);

  const create = async (fields: KeyFields): Promise<void> => {
    const created = await api<ApiKey & { secret: string }>('POST', '/keys', fields);
    setSecret(created.secret);
    keys.reload();
  };
  const update = async (key: ApiKey, fields: KeyFields): Promise<void> => {
    await api<ApiKey>('PATCH', `/keys/${encodeURIComponent(key.id)}`, fields);
    keys.reload();
  };
  const toggle = (key: ApiKey, enabled: boolean): void => {
    setRowError(null);
    update(key, { disabled: !enabled }).catch((e: unknown) => setRowError(asApiError(e)));
  };

  return (
    <>
      <p className="lead">Keys your programs search with. A secret is shown once, when the key is created; the table shows only its start.</p>
      <div className="toolbar">
        <button type="button" className="primary" onClick={() => { setSecret(null); setCreating(true); }}>Create API key</button>
      </div>
      {rowError !== null && <ErrorNote error={rowError} />}
      {keys.loading && keys.data === null ? <Loading what="API keys" /> : keys.error !== null ? <ErrorNote error={keys.error} onRetry={keys.reload} /> : keys.data?.length === 0 ? (
        <Empty><p>No API keys yet. Create one to start searching.</p></Empty>
      ) : (
        <div className="table-wrap" role="region" aria-label="API keys" tabIndex={0}>
          <table className="stack">
            <thead>
              <tr>
                <th scope="col">Name</th><th scope="col">Key</th><th scope="col">Status</th><th scope="col">Limit</th>
                <th scope="col">Limit resets at</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col">Enabled</th>
                <th scope="col"><span className="sr-only">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {keys.data?.map((key) => {
                const s = status(key);
                const name = key.name === '' ? '(no name)' : key.name;
                return (
                  <tr key={key.id} data-key-id={key.id}>
                    <th scope="row">{name}</th>
                    <td data-label="Key"><code>{key.label}</code></td>
                    <td data-label="Status"><span className={`badge ${s.tone}`}>{s.text}</span></td>
                    <td className="limit" data-label="Limit">
                      {key.limit_usd === null ? <span>No limit <span className="muted small">({usd(key.usage_total_usd)} spent)</span></span> : (
                        <>
                          <span>{usd(key.usage_usd)} of {usd(key.limit_usd)} {resetLabel(key.limit_reset)}</span>
                          <UsageBar used={key.usage_usd ?? 0} limit={key.limit_usd} label={`${name}: ${usd(key.usage_usd)} of ${usd(key.limit_usd)} used`} />
                        </>
                      )}
                    </td>
                    <td className="wrap" data-label="Limit resets at">{dateTime(key.limit_resets_at)}</td>
                    <td className="wrap" data-label="Expires">{dateTime(key.expires_at, 'Never')}</td>
                    <td className="wrap" data-label="Last used">{dateTime(key.last_used_at, 'Never')}</td>
                    <td data-label="Enabled"><Switch checked={!key.disabled} label={`${name} enabled`} onChange={(next) => toggle(key, next)} /></td>
                    <td className="row-actions">
                      <button type="button" className="secondary" onClick={() => setEditing(key)} aria-label={`Edit ${name}`}>Edit</button>
                      <button type="button" className="danger-text" onClick={() => setDeleting(key)} aria-label={`Delete ${name}`}>Delete</button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <Dialog title={secret === null ? 'Create an API key' : 'Your new API key'} open={creating} onClose={() => { setCreating(false); setSecret(null); }}>
        {secret === null
          ? <KeyForm initial={null} submitLabel="Create key" onSubmit={create} onCancel={() => setCreating(false)} />
          : <SecretOnce secret={secret} onDone={() => { setCreating(false); setSecret(null); }} />}
      </Dialog>
      <Dialog title={`Edit ${editing?.name === '' ? 'key' : (editing?.name ?? '')}`} open={editing !== null} onClose={() => setEditing(null)}>
        {editing !== null && (
          <KeyForm initial={editing} submitLabel="Save changes" onCancel={() => setEditing(null)} onSubmit={async (fields) => { await update(editing, fields); setEditing(null); }} />
        )}
      </Dialog>
      <ConfirmDialog
        title="Delete this API key?"
        open={deleting !== null}
        confirmLabel="Delete key"
        message={<p>Programs using <strong>{deleting?.name === '' ? deleting.label : deleting?.name}</strong> (<code>{deleting?.label}</code>) will be refused at once. This cannot be undone.</p>}
        onCancel={() => setDeleting(null)}
        onConfirm={async () => {
          if (deleting === null) return;
          await api('DELETE', `/keys/${encodeURIComponent(deleting.id)}`);
          setDeleting(null);
          keys.reload();
        }}
      />
    </>
  );
}
