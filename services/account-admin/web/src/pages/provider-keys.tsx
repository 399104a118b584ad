import { useId, useState } from 'react';
import type { ReactNode } from 'react';
import { api, PROVIDERS } from '../api';
import type { Provider, ProviderKey } from '../api';
import { ConfirmDialog, Dialog, ErrorNote, Field, FormActions, Loading, RegionTable, useLoad, useSubmit } from '../components';
import { dateTime } from '../format';

const NAMES: Record<Provider, string> = { brave: 'Brave Search', exa: 'Exa', tavily: 'Tavily' };

function KeyInputForm({ provider, onSubmit, onCancel }: { provider: Provider; onSubmit: (key: string) => Promise<void>; onCancel: () => void }): ReactNode {
  const id = useId();
  const [key, setKey] = useState('');
  const form = useSubmit();
  return (
    <form onSubmit={(event) => form.submit(event, () => onSubmit(key))} className="form">
      {form.error !== null && <ErrorNote error={form.error} />}
      <Field label={`${NAMES[provider]} API key`} id={`${id}-key`} hint="Stored encrypted; only its last 4 characters are shown again.">
        <input id={`${id}-key`} type="password" autoComplete="off" spellCheck={false} required value={key} onChange={(e) => setKey(e.target.value)} aria-describedby={`${id}-key-hint`} data-autofocus="true" />
      </Field>
      <FormActions onCancel={onCancel} busy={form.busy} disabled={key === ''} label="Save key" />
    </form>
  );
}

/** Your own provider keys (BYOK): searches on that provider use your key and its account. */
export function ProviderKeysPage(): ReactNode {
  const keys = useLoad(() => api<{ data: ProviderKey[] }>('GET', '/provider-keys'), []);
  const [editing, setEditing] = useState<Provider | null>(null);
  const [deleting, setDeleting] = useState<Provider | null>(null);

  if (keys.loading && keys.data === null) return <Loading what="provider keys" />;
  if (keys.error !== null) {
    if (keys.error.code === 'byok_disabled') {
      return (
        <div className="note info" role="status">
          <p><strong>Provider keys are turned off on this deployment.</strong> Searches use the platform&apos;s own provider accounts and are paid from your credits.</p>
          <p className="muted small">{keys.error.message}</p>
        </div>
      );
    }
    return <ErrorNote error={keys.error} onRetry={keys.reload} />;
  }
  const byProvider = new Map((keys.data?.data ?? []).map((k) => [k.provider, k]));
  const current = editing === null ? undefined : byProvider.get(editing);
  return (
    <>
      <p className="lead">Add your own key for a provider and searches on that provider run on your account with it. Without one, the platform&apos;s key is used.</p>
      <RegionTable label="Provider keys" head={<tr><th scope="col">Provider</th><th scope="col">Key</th><th scope="col">Added</th><th scope="col">Updated</th><th scope="col"><span className="sr-only">Actions</span></th></tr>}>
        {PROVIDERS.map((provider) => {
          const key = byProvider.get(provider);
          return (
            <tr key={provider} data-provider={provider}>
              <th scope="row">{NAMES[provider]}</th>
              <td data-label="Key">{key === undefined ? <span className="muted">Not set (platform key)</span> : <code>{key.label}</code>}</td>
              <td data-label="Added">{dateTime(key?.created_at)}</td>
              <td data-label="Updated">{dateTime(key?.updated_at)}</td>
              <td className="row-actions">
                <button type="button" className="secondary" onClick={() => setEditing(provider)} aria-label={`${key === undefined ? 'Add' : 'Replace'} ${NAMES[provider]} key`}>{key === undefined ? 'Add' : 'Replace'}</button>
                {key !== undefined && <button type="button" className="danger-text" onClick={() => setDeleting(provider)} aria-label={`Delete ${NAMES[provider]} key`}>Delete</button>}
              </td>
            </tr>
          );
        })}
      </RegionTable>
      <Dialog title={editing === null ? '' : `${current === undefined ? 'Add' : 'Replace'} the ${NAMES[editing]} key`} open={editing !== null} onClose={() => setEditing(null)}>
        {editing !== null && (
          <KeyInputForm provider={editing} onCancel={() => setEditing(null)} onSubmit={async (key) => {
            await api<ProviderKey>('PUT', `/provider-keys/${editing}`, { key });
            setEditing(null);
            keys.reload();
          }} />
        )}
      </Dialog>
      <ConfirmDialog
        title="Delete this provider key?"
        open={deleting !== null}
        confirmLabel="Delete key"
        message={<p>Searches on {deleting === null ? '' : NAMES[deleting]} will use the platform&apos;s key again and be paid from your credits.</p>}
        onCancel={() => setDeleting(null)}
        onConfirm={async () => {
          if (deleting === null) return;
          await api('DELETE', `/provider-keys/${deleting}`);
          setDeleting(null);
          keys.reload();
        }}
      />
    </>
  );
}
