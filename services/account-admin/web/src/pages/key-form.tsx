import { LIMITS } from '@svc/contracts/limits';
import { useId, useState } from 'react';
import type { FormEvent, ReactNode } from 'react';
import type { ApiKey, CreateKeyRequest, LimitReset } from '../api';
import { ErrorNote, Field, FormActions, useSubmit } from '../components';
import { isoToLocalInput, localInputToIso } from '../format';

/** What the form sends: POST /v1/keys's body (PATCH takes the same fields). */
export type KeyFields = CreateKeyRequest;

/** A fence typed as one entry per line (or comma-separated): the list, or null when empty (no fence). */
export function fenceOf(text: string): string[] | null {
  const entries = text.split(/[\n,]/).map((entry) => entry.trim()).filter((entry) => entry !== '');
  return entries.length === 0 ? null : entries;
}

function sameList(a: readonly string[] | null, b: readonly string[] | null): boolean {
  return a === null || b === null ? a === b : a.length === b.length && a.every((value, i) => value === b[i]);
}

/**
 * Create or edit an API key: every field of POST /v1/keys. Editing sends only the fields
 * that changed, so an expired key can be renamed without re-sending its past expiry.
 */
export function KeyForm({ initial, submitLabel, onSubmit, onCancel }: {
  initial: ApiKey | null;
  submitLabel: string;
  onSubmit: (fields: KeyFields) => Promise<void>;
  onCancel: () => void;
}): ReactNode {
  const id = useId();
  const [name, setName] = useState(initial?.name ?? '');
  const [limit, setLimit] = useState(initial?.limit_usd === null || initial === null ? '' : String(initial.limit_usd));
  const [reset, setReset] = useState<LimitReset | ''>(initial?.limit_reset ?? '');
  const [expires, setExpires] = useState(isoToLocalInput(initial?.expires_at ?? null));
  const [disabled, setDisabled] = useState(initial?.disabled ?? false);
  const [models, setModels] = useState((initial?.allowed_models ?? []).join('\n'));
  const [addresses, setAddresses] = useState((initial?.allowed_ips ?? []).join('\n'));
  const form = useSubmit();

  /** Creating sends every field; editing only those that changed. */
  const changedFields = (): KeyFields => {
    const fields: KeyFields = {};
    const limitValue = limit.trim() === '' ? null : Number(limit);
    const resetValue = limitValue === null || reset === '' ? null : reset;
    const expiresValue = localInputToIso(expires);
    if (initial === null) {
      if (name !== '') fields.name = name;
      fields.limit_usd = limitValue;
      fields.limit_reset = resetValue;
      fields.expires_at = expiresValue;
      fields.disabled = disabled;
      fields.allowed_models = fenceOf(models);
      fields.allowed_ips = fenceOf(addresses);
    } else {
      if (name !== initial.name) fields.name = name;
      if (limitValue !== initial.limit_usd) fields.limit_usd = limitValue;
      if (resetValue !== initial.limit_reset) fields.limit_reset = resetValue;
      if (expiresValue !== (initial.expires_at === null ? null : localInputToIso(isoToLocalInput(initial.expires_at)))) fields.expires_at = expiresValue;
      if (disabled !== initial.disabled) fields.disabled = disabled;
      if (!sameList(fenceOf(models), initial.allowed_models)) fields.allowed_models = fenceOf(models);
      if (!sameList(fenceOf(addresses), initial.allowed_ips)) fields.allowed_ips = fenceOf(addresses);
    }
    return fields;
  };

  return (
    <form onSubmit={(event: FormEvent) => form.submit(event, () => onSubmit(changedFields()))} className="form">
      {form.error !== null && <ErrorNote error={form.error} />}
      <Field label="Name" id={`${id}-name`} hint={`${LIMITS.keyName.min} to ${LIMITS.keyName.max} characters, for you to recognise the key.`}>
        <input id={`${id}-name`} value={name} maxLength={LIMITS.keyName.max} onChange={(e) => setName(e.target.value)} aria-describedby={`${id}-name-hint`} data-autofocus="true" />
      </Field>
      <div className="row">
        <Field label="Spending limit (USD)" id={`${id}-limit`} hint="Empty: no limit.">
          <input id={`${id}-limit`} type="number" inputMode="decimal" min="0.000001" step="any" value={limit} onChange={(e) => setLimit(e.target.value)} aria-describedby={`${id}-limit-hint`} />
        </Field>
        <Field label="Limit resets" id={`${id}-reset`} hint={limit.trim() === '' ? 'Needs a limit.' : 'Periods start at 00:00 UTC.'}>
          <select id={`${id}-reset`} value={reset} disabled={limit.trim() === ''} onChange={(e) => setReset(e.target.value as LimitReset | '')} aria-describedby={`${id}-reset-hint`}>
            <option value="">Never (a total limit)</option>
            <option value="daily">Daily</option>
            <option value="weekly">Weekly (Monday)</option>
            <option value="monthly">Monthly (the 1st)</option>
          </select>
        </Field>
      </div>
      <Field label="Expires" id={`${id}-expires`} hint="Your local time. Empty: never expires.">
        <input id={`${id}-expires`} type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} aria-describedby={`${id}-expires-hint`} />
      </Field>
      <div className="row">
        <Field label="Allowed models" id={`${id}-models`} hint={`One per line: a model id (exa/fast) or a provider's models (exa/*), up to ${LIMITS.allowedModels.max}. Other models are skipped; empty: every model.`}>
          <textarea id={`${id}-models`} rows={3} value={models} onChange={(e) => setModels(e.target.value)} aria-describedby={`${id}-models-hint`} spellCheck={false} />
        </Field>
        <Field label="Allowed client addresses" id={`${id}-ips`} hint={`One per line: IPv4 or IPv6 CIDRs (203.0.113.0/24, 2001:db8::/32), up to ${LIMITS.allowedIps.max}. Other addresses are refused; empty: any address.`}>
          <textarea id={`${id}-ips`} rows={3} value={addresses} onChange={(e) => setAddresses(e.target.value)} aria-describedby={`${id}-ips-hint`} spellCheck={false} />
        </Field>
      </div>
      <div className="field checkbox">
        <input id={`${id}-disabled`} type="checkbox" checked={disabled} onChange={(e) => setDisabled(e.target.checked)} />
        <label htmlFor={`${id}-disabled`}>Disabled (searches with this key are refused)</label>
      </div>
      <FormActions onCancel={onCancel} busy={form.busy} label={submitLabel} />
    </form>
  );
}
