import { LIMITS } from '@svc/contracts/limits';
import { useCallback, useId, useState } from 'react';
import type { ReactNode } from 'react';
import { api, qs } from '../api';
import type { Checkout, Credits, List, Purchase } from '../api';
import { Empty, ErrorNote, Loading, RegionTable, useLoad, usePollWhile, useSubmit } from '../components';
import { dateTime, usd } from '../format';
import { useRouter } from '../router';

const { min: MIN, max: MAX } = LIMITS.purchaseUsd;
const PRESETS = [10, 25, 100];

const STATUS_TEXT: Record<string, string> = { pending: 'Waiting for payment', paid: 'Credited', failed: 'Payment failed', expired: 'Expired' };

function BuyForm(): ReactNode {
  const id = useId();
  const [amount, setAmount] = useState('25');
  const form = useSubmit();
  // Stripe's page comes next: the button stays busy until the browser leaves.
  const checkout = async (): Promise<void> => {
    const back = `${window.location.origin}/dashboard/credits`;
    const session = await api<Checkout>('POST', '/credits/checkout', { amount_usd: Number(amount), success_url: `${back}?checkout=paid`, cancel_url: `${back}?checkout=cancelled` });
    window.location.assign(session.url);
  };
  return (
    <form onSubmit={(event) => form.submit(event, checkout, { stayBusy: true })} className="form buy" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Buy credits</h2>
      {form.error !== null && <ErrorNote error={form.error} />}
      <div className="field">
        <label htmlFor={`${id}-amount`}>Amount (USD)</label>
        <div className="inline">
          <input id={`${id}-amount`} type="number" inputMode="decimal" min={MIN} max={MAX} step="0.01" required value={amount} onChange={(e) => setAmount(e.target.value)} aria-describedby={`${id}-hint`} />
          <button type="submit" className="primary" disabled={form.busy}>{form.busy ? 'Opening checkout…' : 'Continue to payment'}</button>
        </div>
        <p className="hint" id={`${id}-hint`}>From {usd(MIN)} to {usd(MAX)}. You pay on Stripe&apos;s checkout page and come back here.</p>
      </div>
      <div className="presets" role="group" aria-label="Quick amounts">
        {PRESETS.map((p) => <button key={p} type="button" className="secondary" onClick={() => setAmount(String(p))}>{usd(p)}</button>)}
      </div>
    </form>
  );
}

/** Balance, buying credits through Stripe Checkout, and the purchase history. */
export function CreditsPage(): ReactNode {
  const { location } = useRouter();
  const returned = location.search.get('checkout');
  const credits = useLoad(() => api<Credits>('GET', '/credits'), []);
  const purchases = useLoad(() => api<List<Purchase>>('GET', `/credits/purchases${qs({ limit: 50 })}`), []);
  const latest = purchases.data?.data[0];
  const waiting = returned === 'paid' && latest !== undefined && latest.status === 'pending';

  // Back from Stripe: the webhook credits the purchase a moment later; look again until it has.
  const { reload: reloadPurchases } = purchases;
  const { reload: reloadCredits } = credits;
  const reloadBoth = useCallback(() => { reloadPurchases(); reloadCredits(); }, [reloadPurchases, reloadCredits]);
  const polls = usePollWhile(waiting, reloadBoth);

  return (
    <>
      {returned === 'paid' && latest !== undefined && (
        latest.status === 'paid'
          ? <div className="note success" role="status"><p><strong>Thank you: {usd(latest.amount_usd)} has been credited to your balance.</strong></p></div>
          : latest.status === 'pending'
            ? <div className="note info" role="status"><p><span className="spinner" aria-hidden="true" />Payment received by Stripe; waiting for it to be credited…{polls >= 30 ? ' This is taking longer than usual: reload the page in a minute.' : ''}</p></div>
            : <div className="note warn" role="status"><p>Your last checkout is {STATUS_TEXT[latest.status] ?? latest.status}.</p></div>
      )}
      {returned === 'cancelled' && <div className="note info" role="status"><p>Checkout cancelled: nothing was charged.</p></div>}
      <div className="tiles">
        <div className="tile">
          <h2>Balance</h2>
          {credits.loading && credits.data === null ? <Loading what="balance" /> : credits.error !== null ? <ErrorNote error={credits.error} onRetry={credits.reload} /> : (
            <>
              <p className="big" data-testid="balance">{usd(credits.data?.balance_usd)}</p>
              <dl className="facts">
                <div><dt>Reserved</dt><dd>{usd(credits.data?.reserved_usd)}</dd></div>
                <div><dt>Purchased in total</dt><dd>{usd(credits.data?.total_purchased_usd)}</dd></div>
                <div><dt>Spent in total</dt><dd>{usd(credits.data?.total_spent_usd, { precise: true })}</dd></div>
              </dl>
            </>
          )}
        </div>
        <div className="tile"><BuyForm /></div>
      </div>
      <section className="panel" aria-labelledby="history-title">
        <h2 id="history-title">Purchase history</h2>
        {purchases.loading && purchases.data === null ? <Loading what="purchases" /> : purchases.error !== null ? <ErrorNote error={purchases.error} onRetry={purchases.reload} /> : purchases.data?.data.length === 0 ? (
          <Empty><p>No purchases yet.</p></Empty>
        ) : (
          <RegionTable label="Purchase history" head={<tr><th scope="col">Date</th><th scope="col">Amount</th><th scope="col">Status</th><th scope="col">Paid</th><th scope="col">Refunded</th><th scope="col">Reference</th></tr>}>
            {purchases.data?.data.map((p) => (
              <tr key={p.id}>
                <td data-label="Date">{dateTime(p.created_at)}</td>
                <td className="num" data-label="Amount">{usd(p.amount_usd)}</td>
                <td data-label="Status"><span className={`badge ${p.status === 'paid' ? 'on' : p.status === 'pending' ? 'warn' : 'off'}`}>{STATUS_TEXT[p.status] ?? p.status}</span></td>
                <td data-label="Paid">{dateTime(p.paid_at)}</td>
                <td className="num" data-label="Refunded">{p.refunded_usd + p.disputed_usd === 0 ? '—' : usd(p.refunded_usd + p.disputed_usd)}</td>
                <td data-label="Reference"><code className="small">{p.id}</code></td>
              </tr>
            ))}
          </RegionTable>
        )}
      </section>
    </>
  );
}
