import { LIMITS } from '@svc/contracts/limits';
import { useId, useState } from 'react';
import type { ReactNode } from 'react';
import { api } from '../api';
import type { List, ManagementKey } from '../api';
import { ErrorNote, Field, FormActions, useSubmit } from '../components';
import { dateTime } from '../format';
import { ResourcePage } from '../resource-page';

function NameForm({ initial, submitLabel, onSubmit, onCancel }: { initial: string; submitLabel: string; onSubmit: (name: string) => Promise<void>; onCancel: () => void }): ReactNode {
  const id = useId();
  const [name, setName] = useState(initial);
  const form = useSubmit();
  return (
    <form onSubmit={(event) => form.submit(event, () => onSubmit(name))} className="form">
      {form.error !== null && <ErrorNote error={form.error} />}
      <Field label="Name" id={`${id}-name`} hint={`${LIMITS.keyName.min} to ${LIMITS.keyName.max} characters.`}>
        <input id={`${id}-name`} value={name} maxLength={LIMITS.keyName.max} onChange={(e) => setName(e.target.value)} aria-describedby={`${id}-name-hint`} data-autofocus="true" />
      </Field>
      <FormActions onCancel={onCancel} busy={form.busy} label={submitLabel} />
    </form>
  );
}

/** Management keys: for programs that manage keys, buy credits and read usage through /v1. */
export function ManagementKeysPage(): ReactNode {
  return (
    <ResourcePage<ManagementKey, { name?: string }, { name: string }>
      path="/management-keys"
      load={() => api<List<ManagementKey>>('GET', '/management-keys').then((list) => list.data)}
      text={{
        lead: 'Keys for programs that manage API keys, buy credits and read usage through the API. They cannot search.',
        create: 'Create management key',
        createTitle: 'Create a management key',
        createdTitle: 'Your new management key',
        loading: 'management keys',
        region: 'Management keys',
        empty: 'No management keys. The dashboard does not need one; create one for a program that manages your account.',
        edit: 'Rename',
        editTitle: () => 'Rename management key',
        deleteTitle: 'Delete this management key?',
      }}
      columns={[
        { header: 'Status', cell: (key) => <td data-label="Status"><span className={`badge ${key.disabled ? 'off' : 'on'}`}>{key.disabled ? 'Disabled' : 'Active'}</span></td> },
        { header: 'Created', cell: (key) => <td className="wrap" data-label="Created">{dateTime(key.created_at)}</td> },
        { header: 'Last used', cell: (key) => <td className="wrap" data-label="Last used">{dateTime(key.last_used_at, 'Never')}</td> },
      ]}
      createForm={({ onSubmit, onCancel }) => <NameForm initial="" submitLabel="Create key" onCancel={onCancel} onSubmit={(name) => onSubmit(name === '' ? {} : { name })} />}
      editForm={({ key, onSubmit, onCancel }) => <NameForm initial={key.name} submitLabel="Save" onCancel={onCancel} onSubmit={(name) => onSubmit({ name })} />}
    />
  );
}
