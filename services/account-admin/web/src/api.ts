/** The dashboard's JSON API (/dashboard/api): the session cookie, plus x-csrf-token on every change. */
import type { AlertEventType } from '@svc/contracts/mail';

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

/** The API paths that need no session: a 401 there is their own answer, not a lost session. */
const PUBLIC_PATHS = new Set(['/login', '/signup', '/me', '/signup/confirm', '/password-reset', '/password-reset/confirm']);

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
    const sessionLost = (response.status === 401 && !PUBLIC_PATHS.has(path))
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

/** A sign-up that waits for its confirmation, and a password-reset request: the same answer whoever the address belongs to. */
export interface CheckEmail {
  status: 'check_email';
  email: string;
}

/** One alert type of the notification settings. */
export interface NotificationSetting {
  event_type: AlertEventType;
  email: boolean;
  email_default: boolean;
}

// The public API's shapes are the SDK's (packages/sdk/src/types.ts), and what only the
// dashboard shows is the services' (packages/contracts/src/dashboard-views.ts): none is
// restated here.
export type { ApiKey, CreateKeyRequest, Credits, LimitReset, Provider, ProviderKey, Usage, UsageRow } from '@svc/sdk/types';
export type { HealthWindow, ModelStatus, ServiceStatus } from '@svc/sdk/types';
export type { AuditEntry, AuditAction, AuditActorKind } from '@svc/sdk/types';
export type { CheckoutSession as Checkout, Page as List, UsageGroupBy as Grouping } from '@svc/sdk/types';
export { PROVIDERS, WEBHOOK_EVENT_TYPES } from '@svc/sdk/types';
export type { AlertEventType } from '@svc/contracts/mail';
export type { AutoTopupSetup, BillingSettings, WebhookDelivery, WebhookEndpoint, WebhookEventType } from '@svc/sdk/types';
export type { ResearchRun, ResearchRunList, ResearchRunSummary, ResearchStatus } from '@svc/sdk/types';

// What only the dashboard shows (no /v1 endpoint): the services' own view types.
export type {
  ManagementKeyView as ManagementKey, PurchaseView as Purchase, DailySpendView as DailySpend, ActivityAttemptView as Attempt, ActivityView as ActivityItem,
  ConsentView, ConnectedAppView,
} from '@svc/contracts/dashboard-views';
export type { SearchFilters } from '@svc/contracts/filters';
