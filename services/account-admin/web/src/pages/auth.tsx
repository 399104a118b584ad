import { LIMITS } from '@svc/contracts/limits';
import { useId, useState } from 'react';
import type { ReactNode } from 'react';
import { api, setCsrf } from '../api';
import type { CheckEmail, Me, SignedIn } from '../api';
import { ErrorNote, useSubmit } from '../components';
import { Link } from '../router';

/**
 * Sign in, or create an account (a password of at least 12 characters). A deployment that
 * confirms addresses answers a sign-up with "check your email" (the same for every address);
 * one that does not signs the new account in at once.
 */
export function AuthPage({ mode, onSignedIn, expired = false }: { mode: 'login' | 'signup'; onSignedIn: (me: Me) => void; expired?: boolean }): ReactNode {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [sentTo, setSentTo] = useState<string | null>(null);
  const form = useSubmit();
  const emailId = useId();
  const passwordId = useId();
  const signup = mode === 'signup';

  // Signed in, the app shows the dashboard: the button stays busy until then.
  const signIn = async (): Promise<void> => {
    const result = await api<SignedIn | CheckEmail>('POST', signup ? '/signup' : '/login', { email, password });
    if ('status' in result) {
      setSentTo(result.email);
      return;
    }
    setCsrf(result.csrf_token);
    onSignedIn({ account_id: result.account_id, email: result.email });
  };

  if (sentTo !== null) {
    return (
      <AccountCard title="Check your email">
        <CheckEmailNote email={sentTo}>
          If this address is new here, the message holds a link that confirms it and finishes your account. If the address already has an account, the message says how to sign in.
        </CheckEmailNote>
        <p className="switch-mode">Nothing arrived? Check your spam folder, or <button type="button" className="link" onClick={() => setSentTo(null)}>sign up again</button> for a new link.</p>
      </AccountCard>
    );
  }

  return (
    <main className="auth">
      <form className="card" onSubmit={(event) => form.submit(event, signIn, { stayBusy: !signup })} aria-labelledby="auth-title">
        <p className="brand">Search gateway</p>
        <h1 id="auth-title">{signup ? 'Create an account' : 'Sign in'}</h1>
        {expired && <p className="note info" role="status">Your session has ended. Sign in again to continue.</p>}
        {form.error !== null && <ErrorNote error={form.error} />}
        <div className="field">
          <label htmlFor={emailId}>Email</label>
          <input id={emailId} type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor={passwordId}>Password</label>
          <input
            id={passwordId}
            type="password"
            autoComplete={signup ? 'new-password' : 'current-password'}
            required
            minLength={signup ? LIMITS.password.min : undefined}
            aria-describedby={signup ? `${passwordId}-hint` : undefined}
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
          {signup && <p className="hint" id={`${passwordId}-hint`}>At least {LIMITS.password.min} characters.</p>}
        </div>
        <button type="submit" className="primary wide" disabled={form.busy}>{form.busy ? 'Please wait…' : signup ? 'Create account' : 'Sign in'}</button>
        {!signup && <p className="switch-mode"><Link to="/forgot-password">Forgot your password?</Link></p>}
        <p className="switch-mode">
          {signup ? <>Already have an account? <Link to="/login">Sign in</Link></> : <>New here? <Link to="/signup">Create an account</Link></>}
        </p>
      </form>
    </main>
  );
}

/** The signed-out pages' frame: the brand, a heading, the content. */
export function AccountCard({ title, children }: { title: string; children: ReactNode }): ReactNode {
  return (
    <main className="auth">
      <section className="card" aria-labelledby="account-card-title">
        <p className="brand">Search gateway</p>
        <h1 id="account-card-title">{title}</h1>
        {children}
      </section>
    </main>
  );
}

/** "We sent a message to …", announced to screen readers. */
export function CheckEmailNote({ email, children }: { email: string; children: ReactNode }): ReactNode {
  return (
    <div className="note success" role="status">
      <p>We sent a message to <strong>{email}</strong>.</p>
      <p>{children}</p>
    </div>
  );
}
