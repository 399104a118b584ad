import { useId, useState } from 'react';
import type { FormEvent, ReactNode } from 'react';
import { api } from '../api';
import type { ApiError, List, ManagementKey } from '../api';
import { ConfirmDialog, Dialog, Empty, ErrorNote, Field, Loading, SecretOnce, Switch, asApiError, useLoad } from '../components';
import { dateTime } from '../format';

function NameForm({ initial, submitLabel, onSubmit, onCancel }: { initial: string; submitLabel: string; onSubmit: (name: string) => Promise<void>; onCancel: () => void }): ReactNode {
  const id = useId();
  const [name, setName] = useState(initial);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const submit = (event: FormEvent): void => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    onSubmit(name).then(() => setBusy(false), (e: unknown) => { setBusy(false); setError(asApiError(e)); });
  };
  return (
    <form onSubmit={submit} className="form">
      {error !== null && <ErrorNote error={error} />}
      <Field label="Name" id={`${id}-name`} hint="1 to 100 characters.">
        <input id={`${id}-name`} value={name} maxLength={100} onChange={(e) => setName(e.target.value)} aria-describedby={`${id}-name-hint`} data-autofocus="true" />
      </Field>
      <div className="actions">
        <button type="button" className="secondary" onClick={onCancel}>Cancel</button>
        <button type="submit" className="primary" disabled={busy}>{busy ? 'Saving…' : submitLabel}</button>
      </div>
    </form>
  );
}

/** Management keys: for programs that manage keys, buy credits and read usage through /v1. */
export function ManagementKeysPage(): ReactNode {
  const keys = useLoad(() => api<List<ManagementKey>>('GET', '/management-keys'), []);
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  const [editing, setEditing] = useState<ManagementKey | null>(null);
  const [deleting, setDeleting] = useState<ManagementKey | null>(null);
  const [rowError, setRowError] = useState<ApiError | null>(null);

  const update = async (key: ManagementKey, fields: { name?: string; disabled?: boolean }): Promise<void> => {
    await api<ManagementKey>('PATCH', `/management-keys/${encodeURIComponent(key.id)}`, fields);
    keys.reload();
  };

  return (
    <>
      <p className="lead">Keys for programs that manage API keys, buy credits and read usage through the API. They cannot search.</p>
      <div className="toolbar">
        <button type="button" className="primary" onClick={() => { setSecret(null); setCreating(true); }}>Create management key</button>
      </div>
      {rowError !== null && <ErrorNote error={rowError} />}
      {keys.loading && keys.data === null ? <Loading what="management keys" /> : keys.error !== null ? <ErrorNote error={keys.error} onRetry={keys.reload} /> : keys.data?.data.length === 0 ? (
        <Empty><p>No management keys. The dashboard does not need one; create one for a program that manages your account.</p></Empty>
      ) : (
        <div className="table-wrap" role="region" aria-label="Management keys" tabIndex={0}>
          <table className="stack">
            <thead>
              <tr>
                <th scope="col">Name</th><th scope="col">Key</th><th scope="col">Status</th><th scope="col">Created</th>
                <th scope="col">Last used</th><th scope="col">Enabled</th><th scope="col"><span className="sr-only">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {keys.data?.data.map((key) => {
                const name = key.name === '' ? '(no name)' : key.name;
                return (
                  <tr key={key.id} data-key-id={key.id}>
                    <th scope="row">{name}</th>
                    <td data-label="Key"><code>{key.label}</code></td>
                    <td data-label="Status"><span className={`badge ${key.disabled ? 'off' : 'on'}`}>{key.disabled ? 'Disabled' : 'Active'}</span></td>
                    <td className="wrap" data-label="Created">{dateTime(key.created_at)}</td>
                    <td className="wrap" data-label="Last used">{dateTime(key.last_used_at, 'Never')}</td>
                    <td data-label="Enabled">
                      <Switch checked={!key.disabled} label={`${name} enabled`} onChange={(next) => {
                        setRowError(null);
                        update(key, { disabled: !next }).catch((e: unknown) => setRowError(asApiError(e)));
                      }} />
                    </td>
                    <td className="row-actions">
                      <button type="button" className="secondary" onClick={() => setEditing(key)} aria-label={`Rename ${name}`}>Rename</button>
                      <button type="button" className="danger-text" onClick={() => setDeleting(key)} aria-label={`Delete ${name}`}>Delete</button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <Dialog title={secret === null ? 'Create a management key' : 'Your new management key'} open={creating} onClose={() => { setCreating(false); setSecret(null); }}>
        {secret === null ? (
          <NameForm initial="" submitLabel="Create key" onCancel={() => setCreating(false)} onSubmit={async (name) => {
            const created = await api<ManagementKey & { secret: string }>('POST', '/management-keys', name === '' ? {} : { name });
            setSecret(created.secret);
            keys.reload();
          }} />
        ) : <SecretOnce secret={secret} onDone={() => { setCreating(false); setSecret(null); }} />}
      </Dialog>
      <Dialog title="Rename management key" open={editing !== null} onClose={() => setEditing(null)}>
        {editing !== null && <NameForm initial={editing.name} submitLabel="Save" onCancel={() => setEditing(null)} onSubmit={async (name) => { await update(editing, { name }); setEditing(null); }} />}
      </Dialog>
      <ConfirmDialog
        title="Delete this management key?"
        open={deleting !== null}
        confirmLabel="Delete key"
        message={<p>Programs using <strong>{deleting?.name === '' ? deleting.label : deleting?.name}</strong> (<code>{deleting?.label}</code>) will be refused at once. This cannot be undone.</p>}
        onCancel={() => setDeleting(null)}
        onConfirm={async () => {
          if (deleting === null) return;
          await api('DELETE', `/management-keys/${encodeURIComponent(deleting.id)}`);
          setDeleting(null);
          keys.reload();
        }}
      />
    </>
  );
}
