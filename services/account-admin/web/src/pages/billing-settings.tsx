import { LIMITS } from '@svc/contracts/limits';
import { useEffect, useId, useState } from 'react';
import type { ReactNode } from 'react';
import { api } from '../api';
import type { AutoTopupSetup, BillingSettings } from '../api';
import { ErrorNote, Field, Loading, useLoad, usePollWhile, useSubmit } from '../components';
import { dateTime, usd } from '../format';
import { useRouter } from '../router';

const { min: MIN, max: MAX } = LIMITS.lowBalanceThresholdUsd;
const AMOUNT = LIMITS.autoTopupAmountUsd;
const THRESHOLD = LIMITS.autoTopupThresholdUsd;
const CAP = LIMITS.autoTopupMonthlyCapUsd;

const TOPUP_STATUS: Record<string, string> = {
  pending: 'in progress', succeeded: 'credited', failed: 'failed', skipped: 'not made: it would pass the monthly cap',
};

const text = (value: number | null | undefined): string => (value === null || value === undefined ? '' : String(value));
const brandName = (brand: string | null): string => (brand === null || brand === '' ? 'Card' : `${brand.charAt(0).toUpperCase()}${brand.slice(1)}`);

/** The low-balance threshold that sends balance.low. */
function LowBalanceForm({ settings, onSaved }: { settings: BillingSettings; onSaved: () => void }): ReactNode {
  const id = useId();
  const [threshold, setThreshold] = useState(text(settings.low_balance_threshold_usd));
  const [saved, setSaved] = useState(false);
  const form = useSubmit();
  const current = settings.low_balance_threshold_usd;
  useEffect(() => { setThreshold(text(current)); }, [current]);
  const save = async (): Promise<void> => {
    setSaved(false);
    await api<BillingSettings>('PATCH', '/billing/settings', { low_balance_threshold_usd: threshold.trim() === '' ? null : Number(threshold) });
    setSaved(true);
    onSaved();
  };
  return (
    <form className="form" onSubmit={(event) => form.submit(event, save)} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Low-balance alert</h2>
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

/** Automatic top-up: the saved card (Stripe Checkout in setup mode), its amounts, and what it did last. */
function AutoTopupForm({ settings, onSaved }: { settings: BillingSettings; onSaved: () => void }): ReactNode {
  const id = useId();
  const state = settings.auto_topup;
  const [enabled, setEnabled] = useState(state.enabled);
  const [threshold, setThreshold] = useState(text(state.threshold_usd));
  const [amount, setAmount] = useState(text(state.amount_usd));
  const [cap, setCap] = useState(text(state.monthly_cap_usd));
  const [saved, setSaved] = useState(false);
  const form = useSubmit();
  const card = useSubmit();
  useEffect(() => {
    setEnabled(state.enabled);
    setThreshold(text(state.threshold_usd));
    setAmount(text(state.amount_usd));
    setCap(text(state.monthly_cap_usd));
  }, [state.enabled, state.threshold_usd, state.amount_usd, state.monthly_cap_usd]);
  const save = async (): Promise<void> => {
    setSaved(false);
    const change: Record<string, unknown> = { enabled };
    if (threshold.trim() !== '') change.threshold_usd = Number(threshold);
    if (amount.trim() !== '') change.amount_usd = Number(amount);
    if (cap.trim() !== '') change.monthly_cap_usd = Number(cap);
    await api<BillingSettings>('PATCH', '/billing/settings', { auto_topup: change });
    setSaved(true);
    onSaved();
  };
  // Stripe's page comes next: the button stays busy until the browser leaves.
  const saveCard = async (): Promise<void> => {
    const back = `${window.location.origin}/dashboard/billing-settings`;
    const setup = await api<AutoTopupSetup>('POST', '/billing/auto-topup/setup', { success_url: `${back}?card=saved`, cancel_url: `${back}?card=cancelled` });
    window.location.assign(setup.url);
  };
  const method = state.payment_method;
  const last = state.last_topup;
  return (
    <form className="form" onSubmit={(event) => form.submit(event, save)} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Automatic top-up</h2>
      <p className="lead">When your balance falls below the threshold, your saved card is charged the amount and the credit is added, once each time it crosses, never more than the monthly cap in a calendar month (UTC). Each top-up sends <code>auto_topup.succeeded</code> or <code>auto_topup.failed</code> to your webhook endpoints.</p>
      {state.disabled_reason === 'payment_failed' && (
        <div className="note warn" role="alert"><p>Automatic top-up was turned off after {state.consecutive_failures} failed payments in a row. Check your card (or save another), then turn it on again and save.</p></div>
      )}
      {form.error !== null && <ErrorNote error={form.error} />}
      {card.error !== null && <ErrorNote error={card.error} />}
      {saved && <p className="note info" role="status">Saved.</p>}
      <div className="field">
        <div className="inline">
          <span><strong>Card:</strong> {method === null ? 'No card saved yet.' : `${brandName(method.brand)} ending in ${method.last4 ?? '····'} (saved ${dateTime(method.saved_at)})`}</span>
          <button type="button" className="secondary" disabled={card.busy} onClick={() => card.submit(null, saveCard, { stayBusy: true })}>
            {card.busy ? 'Opening Stripe…' : method === null ? 'Save a card' : 'Replace card'}
          </button>
        </div>
        <p className="hint">You enter the card on Stripe&apos;s page; only its brand and last four digits are shown here.</p>
      </div>
      <div className="field checkbox">
        <input id={`${id}-enabled`} type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} disabled={method === null && !enabled} />
        <label htmlFor={`${id}-enabled`}>Top up automatically</label>
      </div>
      <Field label="When the balance falls below (USD)" id={`${id}-threshold`} hint={`From ${usd(THRESHOLD.min)} to ${usd(THRESHOLD.max)}, in whole cents.`}>
        <input id={`${id}-threshold`} type="number" inputMode="decimal" min={THRESHOLD.min} max={THRESHOLD.max} step="0.01" value={threshold} onChange={(e) => setThreshold(e.target.value)} aria-describedby={`${id}-threshold-hint`} />
      </Field>
      <Field label="Top up by (USD)" id={`${id}-amount`} hint={`From ${usd(AMOUNT.min)} to ${usd(AMOUNT.max)}, in whole cents.`}>
        <input id={`${id}-amount`} type="number" inputMode="decimal" min={AMOUNT.min} max={AMOUNT.max} step="0.01" value={amount} onChange={(e) => setAmount(e.target.value)} aria-describedby={`${id}-amount-hint`} />
      </Field>
      <Field label="Monthly cap (USD)" id={`${id}-cap`} hint={`At least the top-up amount, at most ${usd(CAP.max)}. This month so far: ${usd(state.month_to_date_usd)}.`}>
        <input id={`${id}-cap`} type="number" inputMode="decimal" min={CAP.min} max={CAP.max} step="0.01" value={cap} onChange={(e) => setCap(e.target.value)} aria-describedby={`${id}-cap-hint`} />
      </Field>
      {last !== null && (
        <p className="hint" role="status">Last top-up: {usd(last.amount_usd)} on {dateTime(last.created_at)}, {TOPUP_STATUS[last.status] ?? last.status}{last.failure_code !== null && last.status === 'failed' ? ` (${last.failure_code.replace(/_/g, ' ')})` : ''}.</p>
      )}
      <div className="actions">
        <button type="submit" className="primary" disabled={form.busy}>{form.busy ? 'Saving…' : 'Save automatic top-up'}</button>
      </div>
    </form>
  );
}

/** Billing settings: the low-balance alert and automatic top-up. */
export function BillingSettingsPage(): ReactNode {
  const { location } = useRouter();
  const returned = location.search.get('card');
  const settings = useLoad(() => api<BillingSettings>('GET', '/billing/settings'), []);
  // Back from Stripe: the webhook stores the card a moment later; look again until it has.
  const waiting = returned === 'saved' && settings.data !== null && settings.data.auto_topup.payment_method === null;
  usePollWhile(waiting, settings.reload);
  if (settings.loading && settings.data === null) return <Loading what="billing settings" />;
  if (settings.error !== null || settings.data === null) return settings.error === null ? <Loading what="billing settings" /> : <ErrorNote error={settings.error} onRetry={settings.reload} />;
  return (
    <>
      {waiting && <p className="note info" role="status">Waiting for Stripe to confirm your card…</p>}
      {returned === 'cancelled' && <p className="note info" role="status">No card was saved.</p>}
      <LowBalanceForm settings={settings.data} onSaved={settings.reload} />
      <AutoTopupForm settings={settings.data} onSaved={settings.reload} />
    </>
  );
}
