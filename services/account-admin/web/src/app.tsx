import { useEffect, useRef, useState } from 'react';
import type { ReactNode } from 'react';
import { api, SESSION_LOST, setCsrf } from './api';
import type { ApiError, Me } from './api';
import { ErrorNote, Loading, asApiError } from './components';
import { ActivityPage } from './pages/activity';
import { ApiKeysPage } from './pages/api-keys';
import { AuditLogPage } from './pages/audit-log';
import { ConfirmPage, ForgotPasswordPage, ResetPasswordPage } from './pages/account-links';
import { AuthPage } from './pages/auth';
import { NotificationsPage } from './pages/notifications';
import { ConnectedAppsPage } from './pages/connected-apps';
import { ConsentPage } from './pages/consent';
import { CreditsPage } from './pages/credits';
import { ManagementKeysPage } from './pages/management-keys';
import { OverviewPage } from './pages/overview';
import { ProviderKeysPage } from './pages/provider-keys';
import { ProviderStatusPage } from './pages/provider-status';
import { ResearchPage } from './pages/research';
import { UsagePage } from './pages/usage';
import { WebhooksPage } from './pages/webhooks';
import { BillingSettingsPage } from './pages/billing-settings';
import { Link, useRouter } from './router';

const PAGES: { path: string; title: string; render: (me: Me) => ReactNode; inNav?: false }[] = [
  { path: '/', title: 'Overview', render: () => <OverviewPage /> },
  { path: '/keys', title: 'API keys', render: () => <ApiKeysPage /> },
  { path: '/management-keys', title: 'Management keys', render: () => <ManagementKeysPage /> },
  { path: '/provider-keys', title: 'Provider keys', render: () => <ProviderKeysPage /> },
  { path: '/credits', title: 'Credits', render: () => <CreditsPage /> },
  { path: '/usage', title: 'Usage', render: () => <UsagePage /> },
  { path: '/activity', title: 'Activity', render: () => <ActivityPage /> },
  { path: '/research', title: 'Research', render: () => <ResearchPage /> },
  { path: '/audit-log', title: 'Audit log', render: () => <AuditLogPage /> },
  { path: '/status', title: 'Provider status', render: () => <ProviderStatusPage /> },
  { path: '/connected-apps', title: 'Connected apps', render: () => <ConnectedAppsPage /> },
  // Where an app's OAuth authorization request lands (GET /oauth/authorize); reached from the app, not the menu.
  { path: '/oauth/consent', title: 'Connect an app', render: () => <ConsentPage />, inNav: false },
  { path: '/webhooks', title: 'Webhooks', render: () => <WebhooksPage /> },
  { path: '/billing-settings', title: 'Billing settings', render: () => <BillingSettingsPage /> },
  { path: '/notifications', title: 'Notifications', render: (me) => <NotificationsPage email={me.email} /> },
];

/** Pages reached from a mailed link or from sign-in, shown signed in or out: their titles. */
const ACCOUNT_PAGES: Readonly<Record<string, string>> = {
  '/confirm': 'Confirm your email address',
  '/forgot-password': 'Reset your password',
  '/reset-password': 'Choose a new password',
};

type Auth = { state: 'loading' } | { state: 'out'; expired?: boolean } | { state: 'in'; me: Me } | { state: 'error'; error: ApiError };

export function App(): ReactNode {
  const { location, navigate } = useRouter();
  const [auth, setAuth] = useState<Auth>({ state: 'loading' });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    api<Me>('GET', '/me').then(
      (me) => setAuth({ state: 'in', me }),
      (error: unknown) => {
        const e = asApiError(error);
        setAuth(e.status === 401 ? { state: 'out' } : { state: 'error', error: e });
      },
    );
  }, [attempt]);

  useEffect(() => {
    const lost = (): void => {
      setCsrf(null);
      setAuth((current) => (current.state === 'in' ? { state: 'out', expired: true } : current));
    };
    window.addEventListener(SESSION_LOST, lost);
    return () => window.removeEventListener(SESSION_LOST, lost);
  }, []);

  // After moving to another page, focus its content, so keyboard and screen-reader users start there.
  const firstPath = useRef(location.path);
  useEffect(() => {
    if (location.path !== firstPath.current) {
      firstPath.current = '';
      document.getElementById('content')?.focus();
    }
  }, [location.path]);

  const page = PAGES.find((p) => p.path === location.path);
  const isAuthPage = location.path === '/login' || location.path === '/signup';
  const accountPage = ACCOUNT_PAGES[location.path];
  useEffect(() => {
    document.title = `${accountPage ?? (isAuthPage ? (location.path === '/signup' ? 'Create an account' : 'Sign in') : (page?.title ?? 'Not found'))} · Search gateway`;
  }, [page, isAuthPage, accountPage, location.path]);

  // A mailed link's page works signed in or out (a reset signs in; the others need no session).
  if (location.path === '/confirm') return <ConfirmPage />;
  if (location.path === '/forgot-password') return <ForgotPasswordPage />;
  if (location.path === '/reset-password') {
    return <ResetPasswordPage onSignedIn={(me) => { setAuth({ state: 'in', me }); navigate('/'); }} />;
  }

  if (auth.state === 'loading') return <main className="center"><Loading what="your account" /></main>;
  if (auth.state === 'error') return <main className="center"><ErrorNote error={auth.error} onRetry={() => setAttempt((a) => a + 1)} /></main>;
  if (auth.state === 'in' && isAuthPage) return <RedirectHome />;
  if (auth.state === 'out' || isAuthPage) {
    return (
      <AuthPage
        mode={location.path === '/signup' ? 'signup' : 'login'}
        expired={auth.state === 'out' && auth.expired === true}
        onSignedIn={(me) => {
          setAuth({ state: 'in', me });
          // Back to the page asked for, with its query (the consent page's ?request=).
          const query = location.search.toString();
          navigate(isAuthPage ? '/' : `${location.path}${query === '' ? '' : `?${query}`}`);
        }}
      />
    );
  }

  const signOut = (): void => {
    api('POST', '/logout').then(
      () => undefined,
      () => undefined,
    ).finally(() => {
      setCsrf(null);
      setAuth({ state: 'out' });
      navigate('/login');
    });
  };

  return (
    <div className="shell">
      <a className="skip" href="#content">Skip to content</a>
      <header className="top">
        <span className="brand">Search gateway</span>
        <span className="who"><span className="muted small">Signed in as</span> <span className="email">{auth.me.email}</span></span>
        <button type="button" className="secondary" onClick={signOut}>Sign out</button>
      </header>
      <nav className="side" aria-label="Dashboard">
        <ul>
          {PAGES.filter((p) => p.inNav !== false).map((p) => (
            <li key={p.path}><Link to={p.path} current={p.path === location.path}>{p.title}</Link></li>
          ))}
        </ul>
      </nav>
      <main id="content" tabIndex={-1}>
        {page === undefined ? (
          <section>
            <h1>Page not found</h1>
            <p>There is no dashboard page at this address. <Link to="/">Go to the overview</Link>.</p>
          </section>
        ) : (
          <section key={page.path}>
            <h1>{page.title}</h1>
            {page.render(auth.me)}
          </section>
        )}
      </main>
    </div>
  );
}

/** A signed-in user on the sign-in or sign-up page goes to the overview. */
function RedirectHome(): ReactNode {
  const { navigate } = useRouter();
  useEffect(() => navigate('/'), [navigate]);
  return null;
}
