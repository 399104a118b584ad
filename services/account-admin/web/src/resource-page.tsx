import { Fragment, useState } from 'react';
import type { ReactNode } from 'react';
import { api } from './api';
import type { ApiError } from './api';
import { ConfirmDialog, Dialog, Empty, ErrorNote, Loading, RegionTable, SecretOnce, Switch, asApiError, useLoad } from './components';

/** What the table of a kind of key needs of each row. */
export interface KeyRow {
  id: string;
  name: string;
  label: string;
  disabled: boolean;
}

/** A column between "Key" and "Enabled": its header and its cell (the row's display name given). */
export interface Column<T> {
  header: string;
  cell: (key: T, name: string) => ReactNode;
}

export interface ResourcePageProps<T extends KeyRow, C, U> {
  /** The resource's path under /dashboard/api ('/keys'): GET lists, POST creates, PATCH and DELETE /{id} change. */
  path: string;
  load: () => Promise<T[]>;
  columns: Column<T>[];
  text: {
    lead: string;
    create: string;
    createTitle: string;
    createdTitle: string;
    loading: string;
    region: string;
    empty: string;
    edit: string;
    editTitle: (key: T | null) => string;
    deleteTitle: string;
  };
  /** The create form; it calls onSubmit with the body to POST. */
  createForm: (props: { onSubmit: (body: C) => Promise<void>; onCancel: () => void }) => ReactNode;
  /** The edit form; it calls onSubmit with the fields to PATCH. */
  editForm: (props: { key: T; onSubmit: (fields: U) => Promise<void>; onCancel: () => void }) => ReactNode;
}

/**
 * The page of one kind of key (API keys, management keys): the table with an enable switch,
 * edit and delete on each row, create with its secret shown once, and the dialogs.
 */
export function ResourcePage<T extends KeyRow, C, U>({ path, load, columns, text, createForm, editForm }: ResourcePageProps<T, C, U>): ReactNode {
  const keys = useLoad(load, []);
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  const [editing, setEditing] = useState<T | null>(null);
  const [deleting, setDeleting] = useState<T | null>(null);
  const [rowError, setRowError] = useState<ApiError | null>(null);
  const at = (key: T): string => `${path}/${encodeURIComponent(key.id)}`;

  const create = async (body: C): Promise<void> => {
    const created = await api<T & { secret: string }>('POST', path, body);
    setSecret(created.secret);
    keys.reload();
  };
  const update = async (key: T, fields: U | { disabled: boolean }): Promise<void> => {
    await api<T>('PATCH', at(key), fields);
    keys.reload();
  };
  const toggle = (key: T, enabled: boolean): void => {
    setRowError(null);
    update(key, { disabled: !enabled }).catch((e: unknown) => setRowError(asApiError(e)));
  };
  const close = (): void => {
    setCreating(false);
    setSecret(null);
  };

  return (
    <>
      <p className="lead">{text.lead}</p>
      <div className="toolbar">
        <button type="button" className="primary" onClick={() => { setSecret(null); setCreating(true); }}>{text.create}</button>
      </div>
      {rowError !== null && <ErrorNote error={rowError} />}
      {keys.loading && keys.data === null ? <Loading what={text.loading} /> : keys.error !== null ? <ErrorNote error={keys.error} onRetry={keys.reload} /> : keys.data?.length === 0 ? (
        <Empty><p>{text.empty}</p></Empty>
      ) : (
        <RegionTable
          label={text.region}
          head={(
            <tr>
              <th scope="col">Name</th><th scope="col">Key</th>{columns.map((c) => <th key={c.header} scope="col">{c.header}</th>)}
              <th scope="col">Enabled</th><th scope="col"><span className="sr-only">Actions</span></th>
            </tr>
          )}
        >
          {keys.data?.map((key) => {
            const name = key.name === '' ? '(no name)' : key.name;
            return (
              <tr key={key.id} data-key-id={key.id}>
                <th scope="row">{name}</th>
                <td data-label="Key"><code>{key.label}</code></td>
                {columns.map((c) => <Fragment key={c.header}>{c.cell(key, name)}</Fragment>)}
                <td data-label="Enabled"><Switch checked={!key.disabled} label={`${name} enabled`} onChange={(next) => toggle(key, next)} /></td>
                <td className="row-actions">
                  <button type="button" className="secondary" onClick={() => setEditing(key)} aria-label={`${text.edit} ${name}`}>{text.edit}</button>
                  <button type="button" className="danger-text" onClick={() => setDeleting(key)} aria-label={`Delete ${name}`}>Delete</button>
                </td>
              </tr>
            );
          })}
        </RegionTable>
      )}
      <Dialog title={secret === null ? text.createTitle : text.createdTitle} open={creating} onClose={close}>
        {secret === null ? createForm({ onSubmit: create, onCancel: () => setCreating(false) }) : <SecretOnce secret={secret} onDone={close} />}
      </Dialog>
      <Dialog title={text.editTitle(editing)} open={editing !== null} onClose={() => setEditing(null)}>
        {editing !== null && editForm({ key: editing, onCancel: () => setEditing(null), onSubmit: async (fields) => { await update(editing, fields); setEditing(null); } })}
      </Dialog>
      <ConfirmDialog
        title={text.deleteTitle}
        open={deleting !== null}
        confirmLabel="Delete key"
        message={<p>Programs using <strong>{deleting?.name === '' ? deleting.label : deleting?.name}</strong> (<code>{deleting?.label}</code>) will be refused at once. This cannot be undone.</p>}
        onCancel={() => setDeleting(null)}
        onConfirm={async () => {
          if (deleting === null) return;
          await api('DELETE', at(deleting));
          setDeleting(null);
          keys.reload();
        }}
      />
    </>
  );
}
