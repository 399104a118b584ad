import { LIMITS } from '@svc/contracts/limits';
import { useEffect, useId, useState } from 'react';
import type { ReactNode } from 'react';
import { api } from '../api';
import type { BillingSettings } from '../api';
import { ErrorNote, Field, Loading, useLoad, useSubmit } from '../components';
import { usd } from '../format';

const { min: MIN, max: MAX } = LIMITS.lowBalanceThresholdUsd;

/** Billing settings: the low-balance threshold that sends balance.low. */
export function BillingSettingsPage(): ReactNode {
  const id = useId();
  const settings = useLoad(() => api<BillingSettings>('GET', '/billing/settings'), []);
  const [threshold, setThreshold] = useState('');
  const [saved, setSaved] = useState(false);
  const form = useSubmit();
  const current = settings.data?.low_balance_threshold_usd;
  useEffect(() => { if (current !== undefined) setThreshold(current === null ? '' : String(current)); }, [current]);
  if (settings.loading && settings.data === null) return <Loading what="billing settings" />;
  if (settings.error !== null) return <ErrorNote error={settings.error} onRetry={settings.reload} />;
  const save = async (): Promise<void> => {
    setSaved(false);
    await api<BillingSettings>('PATCH', '/billing/settings', { low_balance_threshold_usd: threshold.trim() === '' ? null : Number(threshold) });
    setSaved(true);
    settings.reload();
  };
  return (
    <form className="form" onSubmit={(event) => form.submit(event, save)}>
      <p className="lead">When your balance falls below the threshold, a <code>balance.low</code> event is sent to your webhook endpoints, once each time it crosses.</p>
      {form.error !== null && <ErrorNote error={form.error} />}
      {saved && <p className="note info" role="status">Saved.</p>}
      <Field label="Low-balance threshold (USD)" id={`${id}-threshold`} hint={`From ${usd(MIN)} to ${usd(MAX)}, in whole cents. Leave empty to turn it off.`}>
        <input id={`${id}-threshold`} type="number" inputMode="decimal" min={MIN} max={MAX} step="0.01" value={threshold} onChange={(e) => setThreshold(e.target.value)} aria-describedby={`${id}-threshold-hint`} />
      </Field>
      <div className="actions">
        <button type="submit" className="primary" disabled={form.busy}>{form.busy ? 'Saving…' : 'Save'}</button>
      </div>
    </form>
  );
}
