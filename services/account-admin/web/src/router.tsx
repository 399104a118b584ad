import { createContext, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import type { ReactNode } from 'react';

export const BASE = '/dashboard';

interface Location {
  path: string;
  search: URLSearchParams;
}

const RouterContext = createContext<{ location: Location; navigate: (to: string) => void }>({
  location: { path: '/', search: new URLSearchParams() },
  navigate: () => undefined,
});

function current(): Location {
  const raw = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) : '/';
  const path = raw === '' ? '/' : raw.replace(/\/+$/, '') || '/';
  return { path, search: new URLSearchParams(window.location.search) };
}

/** Client-side pages under /dashboard (the server answers the app for each of them). */
export function Router({ children }: { children: ReactNode }): ReactNode {
  const [location, setLocation] = useState<Location>(current);
  useEffect(() => {
    const onPop = (): void => setLocation(current());
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const navigate = useCallback((to: string): void => {
    window.history.pushState(null, '', `${BASE}${to === '/' ? '' : to}`);
    setLocation(current());
    window.scrollTo(0, 0);
  }, []);
  const value = useMemo(() => ({ location, navigate }), [location, navigate]);
  return <RouterContext.Provider value={value}>{children}</RouterContext.Provider>;
}

export function useRouter(): { location: Location; navigate: (to: string) => void } {
  return useContext(RouterContext);
}

/** An in-app link: a real <a href> (keyboard, new tab), handled without a reload. */
export function Link({ to, children, className, current: isCurrent }: { to: string; children: ReactNode; className?: string; current?: boolean }): ReactNode {
  const { navigate } = useRouter();
  return (
    <a
      href={`${BASE}${to === '/' ? '' : to}`}
      className={className}
      aria-current={isCurrent === true ? 'page' : undefined}
      onClick={(event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}
