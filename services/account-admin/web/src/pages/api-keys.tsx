import type { ReactNode } from 'react';
import { LIMITS } from '@svc/contracts/limits';
import { api, qs } from '../api';
import type { ApiKey, List } from '../api';
import { UsageBar } from '../components';
import { dateTime, resetLabel, usd } from '../format';
import { ResourcePage } from '../resource-page';
import { KeyForm } from './key-form';
import type { KeyFields } from './key-form';

function status(key: ApiKey): { text: string; tone: string } {
  if (key.disabled) return { text: 'Disabled', tone: 'off' };
  if (key.expires_at !== null && Date.parse(key.expires_at) <= Date.now()) return { text: 'Expired', tone: 'off' };
  if (key.limit_usd !== null && key.limit_remaining_usd === 0) return { text: 'Limit reached', tone: 'warn' };
  return { text: 'Active', tone: 'on' };
}

/** All API keys of the account (pages of the largest size, followed to the end). */
async function allKeys(): Promise<ApiKey[]> {
  const keys: ApiKey[] = [];
  let cursor: string | null = null;
  do {
    const page: List<ApiKey> = await api<List<ApiKey>>('GET', `/keys${qs({ limit: LIMITS.pageSize.max, cursor })}`);
    keys.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor !== null);
  return keys;
}

export function ApiKeysPage(): ReactNode {
  return (
    <ResourcePage<ApiKey, KeyFields, KeyFields>
      path="/keys"
      load={allKeys}
      text={{
        lead: 'Keys your programs search with. A secret is shown once, when the key is created; the table shows only its start.',
        create: 'Create API key',
        createTitle: 'Create an API key',
        createdTitle: 'Your new API key',
        loading: 'API keys',
        region: 'API keys',
        empty: 'No API keys yet. Create one to start searching.',
        edit: 'Edit',
        editTitle: (key) => `Edit ${key?.name === '' ? 'key' : (key?.name ?? '')}`,
        deleteTitle: 'Delete this API key?',
      }}
      columns={[
        { header: 'Status', cell: (key) => { const s = status(key); return <td data-label="Status"><span className={`badge ${s.tone}`}>{s.text}</span></td>; } },
        {
          header: 'Limit',
          cell: (key, name) => (
            <td className="limit" data-label="Limit">
              {key.limit_usd === null ? <span>No limit <span className="muted small">({usd(key.usage_total_usd)} spent)</span></span> : (
                <>
                  <span>{usd(key.usage_usd)} of {usd(key.limit_usd)} {resetLabel(key.limit_reset)}</span>
                  <UsageBar used={key.usage_usd ?? 0} limit={key.limit_usd} label={`${name}: ${usd(key.usage_usd)} of ${usd(key.limit_usd)} used`} />
                </>
              )}
            </td>
          ),
        },
        { header: 'Limit resets at', cell: (key) => <td className="wrap" data-label="Limit resets at">{dateTime(key.limit_resets_at)}</td> },
        { header: 'Expires', cell: (key) => <td className="wrap" data-label="Expires">{dateTime(key.expires_at, 'Never')}</td> },
        { header: 'Last used', cell: (key) => <td className="wrap" data-label="Last used">{dateTime(key.last_used_at, 'Never')}</td> },
        {
          header: 'Fences',
          cell: (key) => (
            <td className="wrap" data-label="Fences">
              {key.allowed_models === null && key.allowed_ips === null ? <span className="muted">None</span> : (
                <>
                  {key.allowed_models !== null && <div>Models: {key.allowed_models.join(', ')}</div>}
                  {key.allowed_ips !== null && <div>Addresses: {key.allowed_ips.join(', ')}</div>}
                </>
              )}
            </td>
          ),
        },
      ]}
      createForm={({ onSubmit, onCancel }) => <KeyForm initial={null} submitLabel="Create key" onSubmit={onSubmit} onCancel={onCancel} />}
      editForm={({ key, onSubmit, onCancel }) => <KeyForm initial={key} submitLabel="Save changes" onSubmit={onSubmit} onCancel={onCancel} />}
    />
  );
}
