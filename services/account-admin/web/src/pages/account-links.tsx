import { LIMITS } from '@svc/contracts/limits';
import { useId, useState } from 'react';
import type { ReactNode } from 'react';
import { api, setCsrf } from '../api';
import type { CheckEmail, Me, SignedIn } from '../api';
import { ErrorNote, useSubmit } from '../components';
import { Link } from '../router';
import { AccountCard, CheckEmailNote } from './auth';

/**
 * The token of a mailed link, read once from the address's fragment (`#token=…`, which the
 * browser never sends to a server) and then removed from the address bar and the history.
 */
function useLinkToken(): string {
  const [token] = useState(() => {
    const value = new URLSearchParams(window.location.hash.slice(1)).get('token') ?? '';
    if (window.location.hash !== '') window.history.replaceState(null, '', window.location.pathname + window.location.search);
    return value;
  });
  return token;
}

/** Where a confirmation mail's link lands: one button confirms the address (a mail scanner that opens the link confirms nothing). */
export function ConfirmPage(): ReactNode {
  const token = useLinkToken();
  const [confirmed, setConfirmed] = useState<string | null>(null);
  const form = useSubmit();
  if (confirmed !== null) {
    return (
      <AccountCard title="Your address is confirmed">
        <p className="note success" role="status">Your account for <strong>{confirmed}</strong> is ready. Sign in with the password you chose.</p>
        <p><Link to="/login" className="button primary wide">Sign in</Link></p>
      </AccountCard>
    );
  }
  return (
    <AccountCard title="Confirm your email address">
      {token === '' ? (
        <p className="note error" role="alert">This page needs the link from the confirmation message. Open the link in the message again, or <Link to="/signup">sign up again</Link> for a new one.</p>
      ) : (
        <form onSubmit={(event) => form.submit(event, async () => setConfirmed((await api<{ email: string }>('POST', '/signup/confirm', { token })).email))}>
          {form.error !== null && <ErrorNote error={form.error} />}
          <p>Confirm that this address is yours to finish creating your account.</p>
          <button type="submit" className="primary wide" disabled={form.busy}>{form.busy ? 'Confirming…' : 'Confirm email address'}</button>
        </form>
      )}
      <p className="switch-mode">Already confirmed? <Link to="/login">Sign in</Link></p>
    </AccountCard>
  );
}

/** Asks for a reset link: the page says the same whichever address is entered. */
export function ForgotPasswordPage(): ReactNode {
  const [email, setEmail] = useState('');
  const [sentTo, setSentTo] = useState<string | null>(null);
  const form = useSubmit();
  const emailId = useId();
  if (sentTo !== null) {
    return (
      <AccountCard title="Check your email">
        <CheckEmailNote email={sentTo}>
          If an account uses this address, the message holds a link to choose a new password; it works once, for a limited time. Otherwise the message says that no account uses it.
        </CheckEmailNote>
        <p className="switch-mode"><Link to="/login">Back to sign in</Link></p>
      </AccountCard>
    );
  }
  return (
    <AccountCard title="Reset your password">
      <form onSubmit={(event) => form.submit(event, async () => setSentTo((await api<CheckEmail>('POST', '/password-reset', { email })).email))}>
        {form.error !== null && <ErrorNote error={form.error} />}
        <p>Enter the address of your account: we mail it a link to choose a new password.</p>
        <div className="field">
          <label htmlFor={emailId}>Email</label>
          <input id={emailId} type="email" autoComplete="email" required maxLength={LIMITS.email.max} value={email} onChange={(e) => setEmail(e.target.value)} />
        </div>
        <button type="submit" className="primary wide" disabled={form.busy}>{form.busy ? 'Please wait…' : 'Send the link'}</button>
      </form>
      <p className="switch-mode">Remembered it? <Link to="/login">Sign in</Link></p>
    </AccountCard>
  );
}

/** Where a reset mail's link lands: a new password, every other session signed out, then signed in here. */
export function ResetPasswordPage({ onSignedIn }: { onSignedIn: (me: Me) => void }): ReactNode {
  const token = useLinkToken();
  const [password, setPassword] = useState('');
  const [done, setDone] = useState<Me | null>(null);
  const form = useSubmit();
  const passwordId = useId();
  if (done !== null) {
    return (
      <AccountCard title="Your password is changed">
        <p className="note success" role="status">You are signed in as <strong>{done.email}</strong>. Every other session of your account was signed out.</p>
        <button type="button" className="primary wide" onClick={() => onSignedIn(done)}>Continue to the dashboard</button>
      </AccountCard>
    );
  }
  return (
    <AccountCard title="Choose a new password">
      {token === '' ? (
        <p className="note error" role="alert">This page needs the link from the password-reset message. Open the link in the message again, or <Link to="/forgot-password">ask for a new one</Link>.</p>
      ) : (
        <form onSubmit={(event) => form.submit(event, async () => {
          const result = await api<SignedIn>('POST', '/password-reset/confirm', { token, password });
          setCsrf(result.csrf_token);
          setDone({ account_id: result.account_id, email: result.email });
        })}>
          {form.error !== null && <ErrorNote error={form.error} />}
          <div className="field">
            <label htmlFor={passwordId}>New password</label>
            <input id={passwordId} type="password" autoComplete="new-password" required minLength={LIMITS.password.min} maxLength={LIMITS.password.max}
              aria-describedby={`${passwordId}-hint`} value={password} onChange={(e) => setPassword(e.target.value)} />
            <p className="hint" id={`${passwordId}-hint`}>At least {LIMITS.password.min} characters. Saving it signs out every other session of your account.</p>
          </div>
          <button type="submit" className="primary wide" disabled={form.busy}>{form.busy ? 'Saving…' : 'Save new password'}</button>
        </form>
      )}
      <p className="switch-mode"><Link to="/forgot-password">Ask for a new link</Link></p>
    </AccountCard>
  );
}
