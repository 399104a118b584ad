import type { ErrorCode } from '@svc/errors';
import { DASHBOARD_PAGES } from '../../../services/account-admin/src/dashboard/dashboard-web.controller';

/**
 * Every operation of the public edge (the gateway's own routes and the control-plane routes
 * it forwards), as data: who may call it, its body and query (a component name: a DTO's or
 * one of schemas.ts), its success answer and the error codes it can answer. document.ts
 * turns this into OpenAPI paths; a test checks that it names exactly the routes the gateway
 * serves.
 */

/** Who may call: no credential, an API key, a management key, either key, a dashboard session (with the CSRF token), or Stripe's signature. */
export type Access = 'none' | 'api' | 'management' | 'either' | 'session' | 'session+csrf' | 'stripe';

export type Tag = 'catalog' | 'search' | 'credits' | 'usage' | 'keys' | 'provider-keys' | 'audit' | 'dashboard' | 'meta';

export type HeaderName = 'RateLimitLimit' | 'RateLimitRemaining' | 'RetryAfter' | 'SetCookie' | 'Cache' | 'WwwAuthenticate' | 'ServerTiming';

export interface Operation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI form: `{id}`, `{provider}`. */
  path: string;
  /**
   * The server's route patterns this operation documents, when they are not the path itself:
   * a wildcard route (`/dashboard/assets/*`) or a list of literal routes behind one path
   * parameter with an enum (`/dashboard/{page}`). The document test compares these with the
   * control plane's controller routes.
   */
  routes?: readonly string[];
  operationId: string;
  tag: Tag;
  summary: string;
  description?: string;
  access: Access;
  servedBy: 'search-gateway' | 'account-admin' | 'billing';
  /** A component schema name; `optional` when an empty body is accepted as `{}`. */
  body?: { schema: string; optional?: boolean };
  /** A component schema name whose properties are the query parameters. */
  query?: string;
  /** Header parameters the operation reads. */
  headerParameters?: readonly ('IdempotencyKey' | 'StripeSignature')[];
  /** contentType: the media type of a body that is not JSON, or the list of those the route can answer (static files). */
  success: { status: number; description: string; schema?: string; contentType?: string | readonly string[]; headers?: readonly HeaderName[] };
  /** A second answer that is not an error body (readyz's 503). */
  alsoAnswers?: { status: number; description: string; schema: string };
  /** Error codes the operation can answer (their statuses follow from the code). */
  errors: readonly ErrorCode[];
  /** Headers of particular error statuses. */
  errorHeaders?: Readonly<Partial<Record<number, readonly HeaderName[]>>>;
  /** Part of the SDK's surface (packages/sdk ENDPOINTS); false for the dashboard, the Stripe webhook, health and the document itself. */
  sdk: boolean;
}

const KEY_ERRORS: readonly ErrorCode[] = ['invalid_api_key', 'key_disabled', 'key_expired'];
const ONE_KIND: readonly ErrorCode[] = [...KEY_ERRORS, 'wrong_key_type'];
/** A session read: 401 invalid_api_key without a live session. */
const SESSION_READ: readonly ErrorCode[] = ['invalid_api_key', 'internal'];
/** A session change: also 400 invalid_request without the right x-csrf-token (or with a bad body). */
const SESSION_CHANGE: readonly ErrorCode[] = ['invalid_request', 'invalid_api_key', 'internal'];

/** The media types of the web app's built files (account-admin's dashboard-assets.adapter.ts). */
const ASSET_TYPES = ['text/javascript', 'text/css', 'image/svg+xml', 'image/png', 'image/x-icon', 'font/woff2', 'application/json', 'application/octet-stream'] as const;

export const OPERATIONS: readonly Operation[] = [
  {
    method: 'get', path: '/v1/models', operationId: 'listModels', tag: 'catalog', access: 'none', servedBy: 'search-gateway', sdk: true,
    summary: 'Every model of the catalog, with prices',
    success: { status: 200, description: 'The catalog.', schema: 'ModelList' },
    errors: ['internal'],
  },
  {
    method: 'get', path: '/v1/credits/pricing', operationId: 'getPricing', tag: 'catalog', access: 'none', servedBy: 'search-gateway', sdk: true,
    summary: 'Prices, the checkout range and the BYOK fee',
    success: { status: 200, description: 'The price list.', schema: 'Pricing' },
    errors: ['internal'],
  },
  {
    method: 'get', path: '/v1/status', operationId: 'getStatus', tag: 'catalog', access: 'none', servedBy: 'search-gateway', sdk: true,
    summary: 'Health of every provider and model',
    description: 'Per provider and model: the breaker, the success rate and p50/p95 latency over the last 5 minutes and hour, as the platform sees them with its own keys.',
    success: { status: 200, description: 'The status.', schema: 'ServiceStatus' },
    errors: ['internal'],
  },
  {
    method: 'post', path: '/v1/search', operationId: 'search', tag: 'search', access: 'api', servedBy: 'search-gateway', sdk: true,
    summary: 'One web search, in fallback order over the models named',
    description:
      'Tries `model`, then each of `models`, and answers with the first that returns results. ' +
      '`query` is 1..2,000 characters after trimming; at least one of `model` and `models` is needed. ' +
      'Charged from the account balance; a repeat of an `Idempotency-Key` returns the first outcome.',
    body: { schema: 'SearchBody' },
    headerParameters: ['IdempotencyKey'],
    success: { status: 200, description: 'The first answer.', schema: 'SearchResponse', headers: ['RateLimitLimit', 'RateLimitRemaining', 'Cache', 'ServerTiming'] },
    errors: ['invalid_request', 'unknown_model', 'unsupported_filter', ...ONE_KIND, 'ip_not_allowed', 'model_not_allowed', 'insufficient_credits', 'key_limit_exceeded', 'rate_limited', 'too_many_concurrent_requests', 'internal', 'all_providers_failed', 'overloaded'],
    errorHeaders: { 429: ['RetryAfter'], 503: ['RetryAfter'] },
  },
  {
    method: 'get', path: '/v1/credits', operationId: 'getCredits', tag: 'credits', access: 'either', servedBy: 'billing', sdk: true,
    summary: "The account's balance",
    success: { status: 200, description: 'The balance.', schema: 'Credits' },
    errors: [...KEY_ERRORS, 'ip_not_allowed', 'internal'],
  },
  {
    method: 'post', path: '/v1/credits/checkout', operationId: 'createCheckout', tag: 'credits', access: 'management', servedBy: 'billing', sdk: true,
    summary: 'Starts a credit purchase (a Stripe Checkout session)',
    description: 'Credits arrive when Stripe reports the session paid (POST /v1/credits/webhook).',
    body: { schema: 'CheckoutBody' },
    success: { status: 201, description: 'The payment page to send the buyer to.', schema: 'CheckoutSession' },
    errors: ['invalid_request', ...ONE_KIND, 'internal', 'payment_error', 'payment_disabled'],
  },
  {
    method: 'post', path: '/v1/credits/webhook', operationId: 'stripeWebhook', tag: 'credits', access: 'stripe', servedBy: 'billing', sdk: false,
    summary: "Stripe's event deliveries",
    description: 'For Stripe only. Each paid checkout session is credited once, whatever the order or number of deliveries.',
    body: { schema: 'StripeEvent' },
    headerParameters: ['StripeSignature'],
    success: { status: 200, description: 'The event was handled (or ignored).', schema: 'WebhookReceived' },
    errors: ['invalid_request', 'internal', 'payment_error', 'payment_disabled'],
  },
  {
    method: 'get', path: '/v1/usage', operationId: 'getUsage', tag: 'usage', access: 'either', servedBy: 'billing', sdk: true,
    summary: 'Searches and spend per day, model or key',
    description: 'An API key sees only its own usage; other query parameters are refused.',
    query: 'UsageQuery',
    success: { status: 200, description: 'The usage of the period.', schema: 'Usage' },
    errors: ['invalid_request', ...KEY_ERRORS, 'ip_not_allowed', 'not_found', 'internal'],
  },
  {
    method: 'get', path: '/v1/key', operationId: 'getCurrentKey', tag: 'keys', access: 'either', servedBy: 'account-admin', sdk: true,
    summary: 'The calling key',
    success: { status: 200, description: 'The calling key, by kind.', schema: 'KeyInfo' },
    errors: [...KEY_ERRORS, 'ip_not_allowed', 'internal'],
  },
  {
    method: 'post', path: '/v1/keys', operationId: 'createKey', tag: 'keys', access: 'management', servedBy: 'account-admin', sdk: true,
    summary: 'Creates an API key',
    description: 'An empty body makes a key with no name, no limit and no expiry.',
    body: { schema: 'KeyBody', optional: true },
    success: { status: 201, description: 'The key and its secret, shown only here.', schema: 'CreatedApiKey' },
    errors: ['invalid_request', ...ONE_KIND, 'internal'],
  },
  {
    method: 'get', path: '/v1/keys', operationId: 'listKeys', tag: 'keys', access: 'management', servedBy: 'account-admin', sdk: true,
    summary: "The account's API keys, newest first",
    query: 'ListQuery',
    success: { status: 200, description: 'One page.', schema: 'ApiKeyList' },
    errors: ['invalid_request', ...ONE_KIND, 'internal'],
  },
  {
    method: 'get', path: '/v1/keys/{id}', operationId: 'getKey', tag: 'keys', access: 'management', servedBy: 'account-admin', sdk: true,
    summary: 'One API key',
    success: { status: 200, description: 'The key.', schema: 'ApiKeyResponse' },
    errors: [...ONE_KIND, 'not_found', 'internal'],
  },
  {
    method: 'patch', path: '/v1/keys/{id}', operationId: 'updateKey', tag: 'keys', access: 'management', servedBy: 'account-admin', sdk: true,
    summary: 'Changes the fields present in the body',
    description: '`limit_usd: null` also clears `limit_reset`. `{}` changes nothing.',
    body: { schema: 'KeyBody', optional: true },
    success: { status: 200, description: 'The whole key after the change.', schema: 'ApiKeyResponse' },
    errors: ['invalid_request', ...ONE_KIND, 'not_found', 'internal'],
  },
  {
    method: 'delete', path: '/v1/keys/{id}', operationId: 'deleteKey', tag: 'keys', access: 'management', servedBy: 'account-admin', sdk: true,
    summary: 'Deletes an API key for good',
    success: { status: 200, description: 'Deleted.', schema: 'DeletedApiKey' },
    errors: [...ONE_KIND, 'not_found', 'internal'],
  },
  {
    method: 'get', path: '/v1/provider-keys', operationId: 'listProviderKeys', tag: 'provider-keys', access: 'management', servedBy: 'account-admin', sdk: true,
    summary: "The account's own provider keys (BYOK)",
    success: { status: 200, description: 'The stored keys, as labels.', schema: 'ProviderKeyList' },
    errors: [...ONE_KIND, 'internal', 'byok_disabled'],
  },
  {
    method: 'get', path: '/v1/provider-keys/{provider}', operationId: 'getProviderKey', tag: 'provider-keys', access: 'management', servedBy: 'account-admin', sdk: true,
    summary: "The account's key for one provider",
    success: { status: 200, description: 'The stored key, as a label.', schema: 'ProviderKeyResponse' },
    errors: ['unknown_provider', ...ONE_KIND, 'not_found', 'internal', 'byok_disabled'],
  },
  {
    method: 'put', path: '/v1/provider-keys/{provider}', operationId: 'setProviderKey', tag: 'provider-keys', access: 'management', servedBy: 'account-admin', sdk: true,
    summary: "Stores (or replaces) the account's key for one provider",
    body: { schema: 'ProviderKeyBody' },
    success: { status: 200, description: 'The stored key, as a label.', schema: 'ProviderKeyResponse' },
    errors: ['invalid_request', 'unknown_provider', ...ONE_KIND, 'internal', 'byok_disabled'],
  },
  {
    method: 'delete', path: '/v1/provider-keys/{provider}', operationId: 'deleteProviderKey', tag: 'provider-keys', access: 'management', servedBy: 'account-admin', sdk: true,
    summary: "Deletes the account's key for one provider",
    success: { status: 200, description: 'Deleted.', schema: 'DeletedProviderKey' },
    errors: ['unknown_provider', ...ONE_KIND, 'not_found', 'internal', 'byok_disabled'],
  },
  {
    method: 'get', path: '/v1/audit-log', operationId: 'listAuditLog', tag: 'audit', access: 'management', servedBy: 'account-admin', sdk: true,
    summary: "The account's audit log, newest first",
    description:
      'Every change made by a management key, a dashboard session, an OAuth grant or an operator: keys, management keys, provider keys, ' +
      'purchases started and grants, with the fields before and after (never a secret). Cursor pages; filters by action, actor, target and time.',
    query: 'AuditLogQuery',
    success: { status: 200, description: 'One page of entries.', schema: 'AuditLogPage' },
    errors: ['invalid_request', ...ONE_KIND, 'internal'],
  },
  {
    method: 'get', path: '/dashboard', operationId: 'dashboardPage', tag: 'dashboard', access: 'none', servedBy: 'account-admin', sdk: false,
    summary: 'The dashboard web page',
    success: { status: 200, description: 'The page (HTML).', contentType: 'text/html' },
    errors: ['internal'],
  },
  {
    method: 'get', path: '/dashboard/{page}', routes: DASHBOARD_PAGES.map((page) => `/dashboard/${page}`), operationId: 'dashboardAppPage', tag: 'dashboard', access: 'none', servedBy: 'account-admin', sdk: false,
    summary: "One of the web app's pages (the same HTML as /dashboard; the app shows the page named)",
    success: { status: 200, description: 'The page (HTML).', contentType: 'text/html' },
    errors: ['internal'],
  },
  {
    method: 'get', path: '/dashboard/assets/{file}', routes: ['/dashboard/assets/*'], operationId: 'dashboardAsset', tag: 'dashboard', access: 'none', servedBy: 'account-admin', sdk: false,
    summary: "The web app's built files (scripts, styles, images), as the page links them",
    description: 'Hashed file names: cached for a year (`cache-control: public, max-age=31536000, immutable`). A name the build did not write is 404 not_found.',
    success: { status: 200, description: 'The file.', contentType: ASSET_TYPES },
    errors: ['not_found', 'internal'],
  },
  {
    method: 'post', path: '/dashboard/api/signup', operationId: 'dashboardSignup', tag: 'dashboard', access: 'none', servedBy: 'account-admin', sdk: false,
    summary: 'Creates an account and signs in',
    body: { schema: 'SignupBody' },
    success: { status: 201, description: 'Signed in; the session cookie is set.', schema: 'SignedIn', headers: ['SetCookie'] },
    errors: ['invalid_request', 'rate_limited', 'internal'],
    errorHeaders: { 429: ['RetryAfter'] },
  },
  {
    method: 'post', path: '/dashboard/api/login', operationId: 'dashboardLogin', tag: 'dashboard', access: 'none', servedBy: 'account-admin', sdk: false,
    summary: 'Signs in',
    body: { schema: 'LoginBody' },
    success: { status: 200, description: 'Signed in; the session cookie is set.', schema: 'SignedIn', headers: ['SetCookie'] },
    errors: ['invalid_request', 'rate_limited', 'internal'],
    errorHeaders: { 429: ['RetryAfter'] },
  },
  {
    method: 'post', path: '/dashboard/api/logout', operationId: 'dashboardLogout', tag: 'dashboard', access: 'session+csrf', servedBy: 'account-admin', sdk: false,
    summary: 'Ends this session',
    success: { status: 204, description: 'Signed out; the cookie is cleared.', headers: ['SetCookie'] },
    errors: ['invalid_request', 'invalid_api_key', 'internal'],
  },
  {
    method: 'get', path: '/dashboard/api/me', operationId: 'dashboardMe', tag: 'dashboard', access: 'session', servedBy: 'account-admin', sdk: false,
    summary: 'The signed-in user',
    success: { status: 200, description: 'The account and email.', schema: 'Me' },
    errors: ['invalid_api_key', 'internal'],
  },
  {
    method: 'post', path: '/dashboard/api/management-keys', operationId: 'dashboardCreateManagementKey', tag: 'dashboard', access: 'session+csrf', servedBy: 'account-admin', sdk: false,
    summary: 'Creates a management key',
    body: { schema: 'ManagementKeyCreateBody', optional: true },
    success: { status: 201, description: 'The key and its secret, shown only here.', schema: 'CreatedManagementKey' },
    errors: ['invalid_request', 'invalid_api_key', 'internal'],
  },
  {
    method: 'get', path: '/dashboard/api/management-keys', operationId: 'dashboardListManagementKeys', tag: 'dashboard', access: 'session', servedBy: 'account-admin', sdk: false,
    summary: "The account's management keys (one page, at most 1,000)",
    success: { status: 200, description: 'The keys, newest first.', schema: 'ManagementKeyList' },
    errors: ['invalid_api_key', 'internal'],
  },
  {
    method: 'delete', path: '/dashboard/api/management-keys/{id}', operationId: 'dashboardDeleteManagementKey', tag: 'dashboard', access: 'session+csrf', servedBy: 'account-admin', sdk: false,
    summary: 'Deletes a management key',
    success: { status: 200, description: 'Deleted.', schema: 'DeletedManagementKey' },
    errors: ['invalid_request', 'invalid_api_key', 'not_found', 'internal'],
  },
  {
    method: 'patch', path: '/dashboard/api/management-keys/{id}', operationId: 'dashboardUpdateManagementKey', tag: 'dashboard', access: 'session+csrf', servedBy: 'account-admin', sdk: false,
    summary: 'Renames, disables or enables a management key',
    description: '`{}` changes nothing. A disabled management key gets 401 key_disabled until enabled again.',
    body: { schema: 'ManagementKeyUpdateBody', optional: true },
    success: { status: 200, description: 'The whole key after the change.', schema: 'ManagementKeyResponse' },
    errors: [...SESSION_CHANGE, 'not_found'],
  },
  {
    method: 'post', path: '/dashboard/api/keys', operationId: 'dashboardCreateKey', tag: 'dashboard', access: 'session+csrf', servedBy: 'account-admin', sdk: false,
    summary: 'Creates an API key of the signed-in account (as POST /v1/keys)',
    description: 'An empty body makes a key with no name, no limit and no expiry.',
    body: { schema: 'KeyBody', optional: true },
    success: { status: 201, description: 'The key and its secret, shown only here.', schema: 'CreatedApiKey' },
    errors: SESSION_CHANGE,
  },
  {
    method: 'get', path: '/dashboard/api/keys', operationId: 'dashboardListKeys', tag: 'dashboard', access: 'session', servedBy: 'account-admin', sdk: false,
    summary: "The signed-in account's API keys, newest first (as GET /v1/keys)",
    query: 'ListQuery',
    success: { status: 200, description: 'One page.', schema: 'ApiKeyList' },
    errors: ['invalid_request', ...SESSION_READ],
  },
  {
    method: 'get', path: '/dashboard/api/keys/{id}', operationId: 'dashboardGetKey', tag: 'dashboard', access: 'session', servedBy: 'account-admin', sdk: false,
    summary: 'One API key of the signed-in account (as GET /v1/keys/{id})',
    success: { status: 200, description: 'The key.', schema: 'ApiKeyResponse' },
    errors: [...SESSION_READ, 'not_found'],
  },
  {
    method: 'patch', path: '/dashboard/api/keys/{id}', operationId: 'dashboardUpdateKey', tag: 'dashboard', access: 'session+csrf', servedBy: 'account-admin', sdk: false,
    summary: 'Changes the fields present in the body (as PATCH /v1/keys/{id})',
    description: '`limit_usd: null` also clears `limit_reset`. `{}` changes nothing.',
    body: { schema: 'KeyBody', optional: true },
    success: { status: 200, description: 'The whole key after the change.', schema: 'ApiKeyResponse' },
    errors: [...SESSION_CHANGE, 'not_found'],
  },
  {
    method: 'delete', path: '/dashboard/api/keys/{id}', operationId: 'dashboardDeleteKey', tag: 'dashboard', access: 'session+csrf', servedBy: 'account-admin', sdk: false,
    summary: 'Deletes an API key for good (as DELETE /v1/keys/{id})',
    success: { status: 200, description: 'Deleted.', schema: 'DeletedApiKey' },
    errors: [...SESSION_CHANGE, 'not_found'],
  },
  {
    method: 'get', path: '/dashboard/api/audit-log', operationId: 'dashboardListAuditLog', tag: 'dashboard', access: 'session', servedBy: 'account-admin', sdk: false,
    summary: "The signed-in account's audit log (as GET /v1/audit-log)",
    query: 'AuditLogQuery',
    success: { status: 200, description: 'One page of entries.', schema: 'AuditLogPage' },
    errors: ['invalid_request', ...SESSION_READ],
  },
  {
    method: 'get', path: '/dashboard/api/credits', operationId: 'dashboardGetCredits', tag: 'dashboard', access: 'session', servedBy: 'account-admin', sdk: false,
    summary: "The signed-in account's balance (as GET /v1/credits)",
    success: { status: 200, description: 'The balance.', schema: 'Credits' },
    errors: SESSION_READ,
  },
  {
    method: 'post', path: '/dashboard/api/credits/checkout', operationId: 'dashboardCreateCheckout', tag: 'dashboard', access: 'session+csrf', servedBy: 'account-admin', sdk: false,
    summary: 'Starts a credit purchase for the signed-in account (as POST /v1/credits/checkout)',
    body: { schema: 'CheckoutBody' },
    success: { status: 201, description: 'The payment page to send the buyer to.', schema: 'CheckoutSession' },
    errors: [...SESSION_CHANGE, 'payment_error', 'payment_disabled'],
  },
  {
    method: 'get', path: '/dashboard/api/credits/purchases', operationId: 'dashboardListPurchases', tag: 'dashboard', access: 'session', servedBy: 'account-admin', sdk: false,
    summary: "The signed-in account's credit purchases (checkouts), newest first",
    description: '`refunded_usd` and `disputed_usd` are what Stripe took back after the payment.',
    query: 'ListQuery',
    success: { status: 200, description: 'One page.', schema: 'PurchaseList' },
    errors: ['invalid_request', ...SESSION_READ],
  },
  {
    method: 'get', path: '/dashboard/api/usage', operationId: 'dashboardGetUsage', tag: 'dashboard', access: 'session', servedBy: 'account-admin', sdk: false,
    summary: "The signed-in account's searches and spend (as GET /v1/usage with a management key)",
    description: '`key_id` filters within the account: another account\'s key shows no usage.',
    query: 'UsageQuery',
    success: { status: 200, description: 'The usage of the period.', schema: 'Usage' },
    errors: ['invalid_request', ...SESSION_READ],
  },
  {
    method: 'get', path: '/dashboard/api/usage/daily-by-model', operationId: 'dashboardGetDailySpend', tag: 'dashboard', access: 'session', servedBy: 'account-admin', sdk: false,
    summary: 'Spend per UTC day and model (the dashboard chart)',
    description: 'Counted per attempt, as GET /v1/usage?group_by=model counts them; days and models without spend are left out.',
    query: 'DayRangeQuery',
    success: { status: 200, description: 'The rows of the period, by day then model.', schema: 'DailySpend' },
    errors: ['invalid_request', ...SESSION_READ],
  },
  {
    method: 'get', path: '/dashboard/api/activity', operationId: 'dashboardListActivity', tag: 'dashboard', access: 'session', servedBy: 'account-admin', sdk: false,
    summary: "The signed-in account's searches, newest first, with their attempts",
    description: 'One item per settled search; it appears once the ledger has written it (about a second after the search).',
    query: 'ListQuery',
    success: { status: 200, description: 'One page.', schema: 'Activity' },
    errors: ['invalid_request', ...SESSION_READ],
  },
  {
    method: 'get', path: '/dashboard/api/provider-keys', operationId: 'dashboardListProviderKeys', tag: 'dashboard', access: 'session', servedBy: 'account-admin', sdk: false,
    summary: "The signed-in account's provider keys (as GET /v1/provider-keys)",
    success: { status: 200, description: 'The stored keys, as labels.', schema: 'ProviderKeyList' },
    errors: ['invalid_api_key', 'internal', 'byok_disabled'],
  },
  {
    method: 'get', path: '/dashboard/api/provider-keys/{provider}', operationId: 'dashboardGetProviderKey', tag: 'dashboard', access: 'session', servedBy: 'account-admin', sdk: false,
    summary: "The signed-in account's key for one provider",
    success: { status: 200, description: 'The stored key, as a label.', schema: 'ProviderKeyResponse' },
    errors: ['unknown_provider', 'invalid_api_key', 'not_found', 'internal', 'byok_disabled'],
  },
  {
    method: 'put', path: '/dashboard/api/provider-keys/{provider}', operationId: 'dashboardSetProviderKey', tag: 'dashboard', access: 'session+csrf', servedBy: 'account-admin', sdk: false,
    summary: "Stores (or replaces) the signed-in account's key for one provider",
    body: { schema: 'ProviderKeyBody' },
    success: { status: 200, description: 'The stored key, as a label.', schema: 'ProviderKeyResponse' },
    errors: ['invalid_request', 'unknown_provider', 'invalid_api_key', 'internal', 'byok_disabled'],
  },
  {
    method: 'delete', path: '/dashboard/api/provider-keys/{provider}', operationId: 'dashboardDeleteProviderKey', tag: 'dashboard', access: 'session+csrf', servedBy: 'account-admin', sdk: false,
    summary: "Deletes the signed-in account's key for one provider",
    success: { status: 200, description: 'Deleted.', schema: 'DeletedProviderKey' },
    errors: ['invalid_request', 'unknown_provider', 'invalid_api_key', 'not_found', 'internal', 'byok_disabled'],
  },
  {
    method: 'get', path: '/healthz', operationId: 'healthz', tag: 'meta', access: 'none', servedBy: 'search-gateway', sdk: false,
    summary: 'The gateway process is up',
    success: { status: 200, description: 'Up.', schema: 'Health' },
    errors: [],
  },
  {
    method: 'get', path: '/readyz', operationId: 'readyz', tag: 'meta', access: 'none', servedBy: 'search-gateway', sdk: false,
    summary: 'The gateway can serve (Redis reachable)',
    description: '503 with the same body shape (`status: "unavailable"`) when a check is down.',
    success: { status: 200, description: 'Ready.', schema: 'Readiness' },
    alsoAnswers: { status: 503, description: 'Not ready: a check is down.', schema: 'Readiness' },
    errors: [],
  },
  {
    method: 'get', path: '/v1/openapi.json', operationId: 'getOpenApiDocument', tag: 'meta', access: 'none', servedBy: 'search-gateway', sdk: false,
    summary: 'This document',
    success: { status: 200, description: 'The OpenAPI 3.1 document of the public edge.', schema: 'OpenApiDocument' },
    errors: [],
  },
  {
    method: 'get', path: '/docs', operationId: 'apiReferencePage', tag: 'meta', access: 'none', servedBy: 'search-gateway', sdk: false,
    summary: 'The API reference page (this document, rendered)',
    success: { status: 200, description: 'The page (HTML).', contentType: 'text/html' },
    errors: [],
  },
];
