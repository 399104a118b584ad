/** The dashboard's JSON API (/dashboard/api): the session cookie, plus x-csrf-token on every change. */

export interface ApiErrorBody {
  code: string;
  message: string;
  request_id?: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

const CSRF_STORE = 'svc_dashboard_csrf';

/** Dispatched on window when an API call shows the session is gone; the app returns to sign-in. */
export const SESSION_LOST = 'svc-session-lost';

export function setCsrf(token: string | null): void {
  if (token === null) window.localStorage.removeItem(CSRF_STORE);
  else window.localStorage.setItem(CSRF_STORE, token);
}

function csrf(): string {
  return window.localStorage.getItem(CSRF_STORE) ?? '';
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export async function api<T>(method: Method, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') headers['x-csrf-token'] = csrf();
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(`/dashboard/api${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, 'network', 'The server could not be reached. Check your connection and try again.', null);
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (!response.ok) {
    const error = (parsed as { error?: ApiErrorBody } | null)?.error;
    // The session ended (expired, signed out elsewhere) or this tab lost its CSRF token: back to sign-in.
    const sessionLost = (response.status === 401 && path !== '/login' && path !== '/signup' && path !== '/me')
      || (response.status === 400 && error?.message === 'missing or wrong x-csrf-token');
    if (sessionLost) window.dispatchEvent(new Event(SESSION_LOST));
    throw new ApiError(
      response.status,
      error?.code ?? 'http_error',
      error?.message ?? `The server answered ${response.status}.`,
      error?.request_id ?? response.headers.get('x-svc-request-id'),
    );
  }
  return parsed as T;
}

export function qs(params: Record<string, string | number | null | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== null && value !== undefined && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

export interface Me {
  account_id: string;
  email: string;
}

export interface SignedIn extends Me {
  csrf_token: string;
}

export type LimitReset = 'daily' | 'weekly' | 'monthly';

export interface ApiKey {
  id: string;
  name: string;
  label: string;
  limit_usd: number | null;
  limit_reset: LimitReset | null;
  limit_remaining_usd: number | null;
  usage_usd: number | null;
  limit_resets_at: string | null;
  usage_total_usd: number | null;
  expires_at: string | null;
  disabled: boolean;
  created_at: string;
  updated_at: string;
  last_used_at: string | null;
}

export interface ManagementKey {
  id: string;
  name: string;
  label: string;
  created_at: string;
  disabled: boolean;
  updated_at: string;
  last_used_at: string | null;
}

export interface List<T> {
  data: T[];
  next_cursor: string | null;
}

export interface ProviderKey {
  provider: Provider;
  label: string;
  created_at: string;
  updated_at: string;
}

export const PROVIDERS = ['brave', 'exa', 'tavily'] as const;
export type Provider = (typeof PROVIDERS)[number];

export interface Credits {
  balance_usd: number;
  reserved_usd: number;
  total_purchased_usd: number;
  total_spent_usd: number;
}

export interface Checkout {
  id: string;
  url: string;
  amount_usd: number;
  expires_at: string;
}

export interface Purchase {
  id: string;
  amount_usd: number;
  status: 'pending' | 'paid' | 'failed' | 'expired' | string;
  created_at: string;
  paid_at: string | null;
  refunded_usd: number;
  disputed_usd: number;
}

export type Grouping = 'day' | 'model' | 'key';

export interface UsageRow {
  date?: string;
  model?: string;
  key_id?: string;
  searches: number;
  failed_attempts: number;
  cost_usd: number;
  /** The part of cost_usd charged as the fee for searches with the account's own provider keys. */
  byok_fee_usd: number;
  /** Searches answered from the result cache (a stored answer, or an identical search's in flight). */
  cache_hits: number;
  /** What those searches saved against the provider's price. */
  cache_saved_usd: number;
}

export interface Usage {
  from: string;
  to: string;
  data: UsageRow[];
  total: { searches: number; cost_usd: number; byok_fee_usd: number; cache_hits: number; cache_saved_usd: number };
}

export interface DailySpend {
  from: string;
  to: string;
  data: { date: string; model: string; attempts: number; cost_usd: number }[];
}

export interface Attempt {
  model: string;
  provider: string;
  source: string;
  status: string;
  error: string | null;
  cost_usd: number;
  timed_out: boolean;
  results: number;
  /** The result cache's part in an answered attempt: hit, joined, miss or off; null otherwise. */
  cache: string | null;
  saved_usd: number;
}

export interface ActivityItem {
  request_id: string;
  created_at: string;
  key_id: string;
  model: string | null;
  status: 'success' | 'failed';
  cost_usd: number;
  attempts: Attempt[];
}
