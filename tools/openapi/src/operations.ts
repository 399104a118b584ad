import { OAUTH_PATHS } from '@svc/contracts';
import type { ErrorCode } from '@svc/errors';
import { DASHBOARD_PAGES } from '@svc/account-admin';

/**
 * Every operation of the public edge (the gateway's own routes and the control-plane routes
 * it forwards), as data: who may call it, its body and query (a component name: a DTO's or
 * one of schemas.ts), its success answer and the error codes it can answer. document.ts
 * turns this into OpenAPI paths; a test checks that it names exactly the routes the gateway
 * serves.
 */

/** Who may call: no credential, an API key, a management key, either key, a dashboard session (with the CSRF token), or Stripe's signature. */
export type Access = 'none' | 'api' | 'management' | 'either' | 'session' | 'session+csrf' | 'stripe';

export type Tag = 'catalog' | 'search' | 'research' | 'credits' | 'usage' | 'keys' | 'provider-keys' | 'webhooks' | 'audit' | 'dashboard' | 'oauth' | 'meta';

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
  body?: { schema: string; optional?: boolean; contentType?: string };
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

/**
 * Events, webhook endpoints and billing settings (docs/decisions/0028): billing's /v1
 * routes for a management key, each also on the dashboard for a session (relayed by
 * account-admin), with the same body, query and answer.
 */
const WEBHOOK_V1: readonly Omit<Operation, 'tag' | 'access' | 'servedBy' | 'sdk'>[] = [
  {
    method: 'get', path: '/v1/events', operationId: 'listEvents', summary: "The account's events, newest first",
    description: 'Events are immutable; `type` filters by event type.',
    query: 'EventsQuery', success: { status: 200, description: 'One page.', schema: 'EventList' }, errors: ['invalid_request', ...ONE_KIND, 'internal'],
  },
  {
    method: 'get', path: '/v1/events/{id}', operationId: 'getEvent', summary: 'One event',
    success: { status: 200, description: 'The event.', schema: 'EventResponse' }, errors: [...ONE_KIND, 'not_found', 'internal'],
  },
  {
    method: 'post', path: '/v1/webhook-endpoints', operationId: 'createWebhookEndpoint', summary: 'Adds a webhook endpoint',
    description: 'https only (http and loopback only where the deployment allows them); never a private or link-local address. The secret is answered only here.',
    body: { schema: 'WebhookEndpointCreateBody' }, success: { status: 201, description: 'The endpoint and its signing secret.', schema: 'WebhookEndpointWithSecret' },
    errors: ['invalid_request', ...ONE_KIND, 'internal'],
  },
  {
    method: 'get', path: '/v1/webhook-endpoints', operationId: 'listWebhookEndpoints', summary: "The account's webhook endpoints, newest first",
    query: 'ListQuery', success: { status: 200, description: 'One page.', schema: 'WebhookEndpointList' }, errors: ['invalid_request', ...ONE_KIND, 'internal'],
  },
  {
    method: 'get', path: '/v1/webhook-endpoints/{id}', operationId: 'getWebhookEndpoint', summary: 'One webhook endpoint',
    success: { status: 200, description: 'The endpoint.', schema: 'WebhookEndpointResponse' }, errors: [...ONE_KIND, 'not_found', 'internal'],
  },
  {
    method: 'patch', path: '/v1/webhook-endpoints/{id}', operationId: 'updateWebhookEndpoint', summary: 'Changes the fields present in the body',
    description: 'Enabling an endpoint billing disabled clears its failure state.',
    body: { schema: 'WebhookEndpointUpdateBody', optional: true }, success: { status: 200, description: 'The endpoint after the change.', schema: 'WebhookEndpointResponse' },
    errors: ['invalid_request', ...ONE_KIND, 'not_found', 'internal'],
  },
  {
    method: 'delete', path: '/v1/webhook-endpoints/{id}', operationId: 'deleteWebhookEndpoint', summary: 'Deletes a webhook endpoint (its pending deliveries are cancelled)',
    success: { status: 200, description: 'Deleted.', schema: 'DeletedWebhookEndpoint' }, errors: [...ONE_KIND, 'not_found', 'internal'],
  },
  {
    method: 'post', path: '/v1/webhook-endpoints/{id}/rotate-secret', operationId: 'rotateWebhookSecret', summary: 'A new signing secret; the old one signs too for 24 hours',
    success: { status: 200, description: 'The endpoint and its new secret, shown only here.', schema: 'WebhookEndpointWithSecret' }, errors: [...ONE_KIND, 'not_found', 'internal'],
  },
  {
    method: 'get', path: '/v1/webhook-endpoints/{id}/deliveries', operationId: 'listWebhookDeliveries', summary: "The endpoint's deliveries, newest first, with every attempt",
    query: 'ListQuery', success: { status: 200, description: 'One page.', schema: 'WebhookDeliveryList' }, errors: ['invalid_request', ...ONE_KIND, 'not_found', 'internal'],
  },
  {
    method: 'post', path: '/v1/webhook-endpoints/{id}/deliveries/{delivery}/redeliver', operationId: 'redeliverWebhook', summary: 'Sends a delivery again, with a fresh 24-hour retry window',
    success: { status: 202, description: 'Queued.', schema: 'RedeliveryAccepted' }, errors: [...ONE_KIND, 'not_found', 'internal'],
  },
  {
    method: 'get', path: '/v1/billing/settings', operationId: 'getBillingSettings', summary: "The account's billing settings",
    success: { status: 200, description: 'The settings.', schema: 'BillingSettings' }, errors: [...ONE_KIND, 'internal'],
  },
  {
    method: 'patch', path: '/v1/billing/settings', operationId: 'updateBillingSettings', summary: 'Changes the settings present in the body',
    description: 'Setting `low_balance_threshold_usd` arms balance.low: if the balance is already below it, one event is sent. '
      + '`auto_topup` changes any of its fields; enabling it needs a saved card and all three amounts (400 otherwise), and saving it clears a '
      + '`payment_failed` notice and arms it again (a balance already below the threshold is topped up at once).',
    body: { schema: 'BillingSettingsBody', optional: true }, success: { status: 200, description: 'The settings after the change.', schema: 'BillingSettings' },
    errors: ['invalid_request', ...ONE_KIND, 'payment_disabled', 'internal'],
  },
  {
    method: 'post', path: '/v1/billing/auto-topup/setup', operationId: 'createAutoTopupSetup',
    summary: 'Starts saving a card for automatic top-up: a Stripe Checkout session in setup mode',
    description: 'The card is stored when Stripe reports the session completed; GET /v1/billing/settings then shows its brand and last four digits.',
    body: { schema: 'AutoTopupSetupBody', optional: true }, success: { status: 201, description: "Stripe's page to send the owner to.", schema: 'AutoTopupSetup' },
    errors: ['invalid_request', ...ONE_KIND, 'internal', 'payment_error', 'payment_disabled'],
  },
];

function webhookOperations(): Operation[] {
  const out: Operation[] = [];
  for (const op of WEBHOOK_V1) out.push({ ...op, tag: 'webhooks', access: 'management', servedBy: 'billing', sdk: false });
  for (const op of WEBHOOK_V1) {
    const change = op.method !== 'get';
    out.push({
      ...op,
      path: op.path.replace('/v1/', '/dashboard/api/'),
      operationId: `dashboard${op.operationId.charAt(0).toUpperCase()}${op.operationId.slice(1)}`,
      summary: `${op.summary} (the signed-in account; as ${op.method.toUpperCase()} ${op.path})`,
      tag: 'dashboard',
      access: change ? 'session+csrf' : 'session',
      servedBy: 'account-admin',
      sdk: false,
      errors: [...new Set<ErrorCode>([...(change ? SESSION_CHANGE : SESSION_READ), ...op.errors.filter((code) => !ONE_KIND.includes(code))])],
    });
  }
  return out;
}

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
    summary: 'One web search, in fallback order over the models named, or fanned out to all of them at once',
    description:
      'Tries `model`, then each of `models`, and answers with the first that returns results (SearchResponse). ' +
      'With `strategy: "fanout"`, calls 2 to 5 models at once and answers with their results merged by reciprocal rank fusion, each URL once, ' +
      'with the models that returned it (FanoutSearchResponse); each model is charged for the results it returned. ' +
      '`max_cost_usd` caps what the request may cost: a model whose most possible cost would pass it is skipped, and when none can run the answer is 402 max_cost_exceeded, nothing charged. ' +
      '`query` is 1..2,000 characters after trimming; at least one of `model` and `models` is needed. ' +
      'Charged from the account balance; a repeat of an `Idempotency-Key` returns the first outcome.',
    body: { schema: 'SearchBody' },
    headerParameters: ['IdempotencyKey'],
    success: { status: 200, description: 'The first answer (fallback), or the answers merged (fan-out).', schema: 'SearchAnswer', headers: ['RateLimitLimit', 'RateLimitRemaining', 'Cache', 'ServerTiming'] },
    errors: ['invalid_request', 'unknown_model', 'unsupported_filter', 'unsupported_option', ...ONE_KIND, 'ip_not_allowed', 'model_not_allowed', 'insufficient_credits', 'key_limit_exceeded', 'max_cost_exceeded', 'rate_limited', 'too_many_concurrent_requests', 'internal', 'all_providers_failed', 'overloaded'],
    errorHeaders: { 429: ['RetryAfter'], 503: ['RetryAfter'] },
  },
  {
    method: 'post', path: '/v1/extract', operationId: 'extract', tag: 'search', access: 'api', servedBy: 'search-gateway', sdk: true,
    summary: 'The text of known pages, with fallback per URL over the extract models named',
    description:
      'Sends the URLs to `model`, then each URL the first could not fetch to the next of `models`, and answers with a result per URL that came back ' +
      '(with the model that served it), the URLs no model could fetch, and every attempt. Charged per URL that came back at its model\'s per_url_usd ' +
      '(in whole blocks of url_block URLs per model call); a URL that failed is never charged. No URL fetched: 502 all_providers_failed, nothing charged. ' +
      '`max_cost_usd` caps what the request may cost (402 max_cost_exceeded when no model can run under it). ' +
      'The search route\'s limits, Idempotency-Key, refusals and Server-Timing.',
    body: { schema: 'ExtractBody' },
    headerParameters: ['IdempotencyKey'],
    success: { status: 200, description: 'The pages that came back (at least one).', schema: 'ExtractResponse', headers: ['RateLimitLimit', 'RateLimitRemaining', 'Cache', 'ServerTiming'] },
    errors: ['invalid_request', 'unknown_model', 'unsupported_option', ...ONE_KIND, 'ip_not_allowed', 'model_not_allowed', 'insufficient_credits', 'key_limit_exceeded', 'max_cost_exceeded', 'rate_limited', 'too_many_concurrent_requests', 'internal', 'all_providers_failed', 'overloaded'],
    errorHeaders: { 429: ['RetryAfter'], 503: ['RetryAfter'] },
  },
  {
    method: 'post', path: '/v1/research', operationId: 'createResearch', tag: 'research', access: 'api', servedBy: 'billing', sdk: true,
    summary: 'Starts a research run with a hard cap',
    description:
      'Reserves the cap at once (min(max_cost_usd, the most the runnable models can cost)) and answers 202 with the run; a worker runs it ' +
      '(`model`, then each of `models`, in fallback order) and charges its metered cost, never above `max_cost_usd`, releasing the rest. ' +
      'A model whose most possible cost exceeds what the cap leaves is skipped, or (Exa\'s metered efforts) given it as its budget. ' +
      'A repeat of an `Idempotency-Key` with the same body answers the first run.',
    body: { schema: 'ResearchBody' },
    headerParameters: ['IdempotencyKey'],
    success: { status: 202, description: 'The run, queued.', schema: 'ResearchRun' },
    errors: ['invalid_request', 'unknown_model', ...ONE_KIND, 'ip_not_allowed', 'model_not_allowed', 'insufficient_credits', 'key_limit_exceeded', 'internal', 'overloaded'],
    errorHeaders: { 503: ['RetryAfter'] },
  },
  {
    method: 'get', path: '/v1/research', operationId: 'listResearch', tag: 'research', access: 'either', servedBy: 'billing', sdk: true,
    summary: "The account's research runs, newest first (without their output)",
    query: 'ResearchListQuery',
    success: { status: 200, description: 'One page.', schema: 'ResearchRunList' },
    errors: ['invalid_request', ...KEY_ERRORS, 'ip_not_allowed', 'internal'],
  },
  {
    method: 'get', path: '/v1/research/{id}', operationId: 'getResearch', tag: 'research', access: 'either', servedBy: 'billing', sdk: true,
    summary: 'One research run, with its output and sources once completed',
    success: { status: 200, description: 'The run.', schema: 'ResearchRun' },
    errors: [...KEY_ERRORS, 'ip_not_allowed', 'not_found', 'internal'],
  },
  {
    method: 'post', path: '/v1/research/{id}/cancel', operationId: 'cancelResearch', tag: 'research', access: 'either', servedBy: 'billing', sdk: true,
    summary: 'Cancels a research run',
    description: 'A run not yet started ends at once, charged nothing; a running one is cancelled at the provider and charged by the catalog\'s rules (research_rules), '
      + 'and its status becomes cancelled once the provider has stopped (a cancelled run sends no event). A run that had already ended comes back unchanged.',
    success: { status: 200, description: 'The run: cancelled, or with cancel_requested_at set while it ends, or unchanged when it had ended.', schema: 'ResearchRun' },
    errors: [...KEY_ERRORS, 'ip_not_allowed', 'not_found', 'internal'],
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
    summary: 'Searches (and extracts) and spend per day, model, key or kind',
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
    summary: 'Signs up: mails a confirmation link (or, on a deployment without confirmation, creates the account and signs in)',
    description: 'With SIGNUP_CONFIRMATION=required (the default) the answer is 202 check_email for every address: a new one is mailed a confirmation link (the account is made when it is used), a registered one a note that someone tried to sign up with it. With SIGNUP_CONFIRMATION=off: 201, the account and its session at once; a registered address is 400.',
    body: { schema: 'SignupBody' },
    success: { status: 202, description: 'A message was sent to the address.', schema: 'CheckEmail' },
    alsoAnswers: { status: 201, description: 'SIGNUP_CONFIRMATION=off: signed in; the session cookie is set.', schema: 'SignedIn' },
    errors: ['invalid_request', 'rate_limited', 'internal'],
    errorHeaders: { 429: ['RetryAfter'] },
  },
  {
    method: 'post', path: '/dashboard/api/signup/confirm', operationId: 'dashboardConfirmSignup', tag: 'dashboard', access: 'none', servedBy: 'account-admin', sdk: false,
    summary: "Uses a confirmation link's token: the account is made and can sign in",
    description: 'Single use. An unknown, expired or used token is 400 invalid_request.',
    body: { schema: 'ConfirmSignupBody' },
    success: { status: 200, description: 'Confirmed.', schema: 'SignupConfirmed' },
    errors: ['invalid_request', 'internal'],
  },
  {
    method: 'post', path: '/dashboard/api/password-reset', operationId: 'dashboardRequestPasswordReset', tag: 'dashboard', access: 'none', servedBy: 'account-admin', sdk: false,
    summary: 'Mails a password-reset link (the same answer for every address)',
    description: "A registered address is mailed a single-use link; another address a note that no account uses it. Limited per address and per client address (PASSWORD_RESETS_PER_EMAIL, PASSWORD_RESETS_PER_ADDRESS).",
    body: { schema: 'PasswordResetRequestBody' },
    success: { status: 202, description: 'A message was sent to the address.', schema: 'CheckEmail' },
    errors: ['invalid_request', 'rate_limited', 'internal'],
    errorHeaders: { 429: ['RetryAfter'] },
  },
  {
    method: 'post', path: '/dashboard/api/password-reset/confirm', operationId: 'dashboardResetPassword', tag: 'dashboard', access: 'none', servedBy: 'account-admin', sdk: false,
    summary: "Uses a reset link's token: sets the password, ends every other session, signs in",
    description: 'Single use; audited (user.password_reset). An unknown, expired or used token is 400 invalid_request.',
    body: { schema: 'PasswordResetBody' },
    success: { status: 200, description: 'Signed in; the session cookie is set.', schema: 'SignedIn', headers: ['SetCookie'] },
    errors: ['invalid_request', 'internal'],
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
    method: 'get', path: '/dashboard/api/notifications', operationId: 'dashboardListNotificationSettings', tag: 'dashboard', access: 'session', servedBy: 'account-admin', sdk: false,
    summary: 'Which alerts the owner gets by email, per event type',
    success: { status: 200, description: 'Every alert type.', schema: 'NotificationSettings' },
    errors: SESSION_READ,
  },
  {
    method: 'put', path: '/dashboard/api/notifications/{event_type}', operationId: 'dashboardSetNotificationSetting', tag: 'dashboard', access: 'session+csrf', servedBy: 'account-admin', sdk: false,
    summary: 'Turns the email of one alert type on or off',
    description: 'Audited (notification_settings.update) when it changes what the account gets. An event type outside balance.low, key.limit.threshold, auto_topup.failed, auto_topup.succeeded is 400.',
    body: { schema: 'NotificationSettingBody' },
    success: { status: 200, description: 'The alert type after the change.', schema: 'NotificationSettingResponse' },
    errors: SESSION_CHANGE,
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
    method: 'post', path: '/dashboard/api/billing/auto-topup/setup', operationId: 'dashboardCreateAutoTopupSetup', tag: 'dashboard', access: 'session+csrf', servedBy: 'account-admin', sdk: false,
    summary: 'Starts saving a card for automatic top-up: a Stripe Checkout session in setup mode for the signed-in account',
    description: 'The card is stored when Stripe reports the session completed; GET /dashboard/api/billing/settings then shows its brand and last four digits.',
    body: { schema: 'AutoTopupSetupBody', optional: true },
    success: { status: 201, description: "Stripe's page to send the owner to.", schema: 'AutoTopupSetup' },
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
    method: 'get', path: '/dashboard/api/research', operationId: 'dashboardListResearch', tag: 'dashboard', access: 'session', servedBy: 'account-admin', sdk: false,
    summary: "The signed-in account's research runs, newest first (as GET /v1/research)",
    query: 'ResearchListQuery',
    success: { status: 200, description: 'One page.', schema: 'ResearchRunList' },
    errors: ['invalid_request', ...SESSION_READ],
  },
  {
    method: 'get', path: '/dashboard/api/research/{id}', operationId: 'dashboardGetResearch', tag: 'dashboard', access: 'session', servedBy: 'account-admin', sdk: false,
    summary: 'One research run of the signed-in account (as GET /v1/research/{id})',
    success: { status: 200, description: 'The run.', schema: 'ResearchRun' },
    errors: ['not_found', ...SESSION_READ],
  },
  {
    method: 'post', path: '/dashboard/api/research/{id}/cancel', operationId: 'dashboardCancelResearch', tag: 'dashboard', access: 'session+csrf', servedBy: 'account-admin', sdk: false,
    summary: 'Cancels a research run of the signed-in account (as POST /v1/research/{id}/cancel)',
    success: { status: 200, description: 'The run.', schema: 'ResearchRun' },
    errors: ['not_found', ...SESSION_CHANGE],
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
  // OAuth 2.1 for connectors (docs/decisions/0029-oauth-for-connectors.md, docs/mcp.md). The authorization
  // server's endpoints answer OAuth's own error shape (OAuthError), not the platform's.
  {
    method: 'get', path: OAUTH_PATHS.resourceMetadata, operationId: 'oauthProtectedResourceMetadata', tag: 'oauth', access: 'none', servedBy: 'search-gateway', sdk: false,
    summary: 'Protected-resource metadata of the connector URL /mcp/oauth (RFC 9728)',
    description: 'Named by the resource_metadata parameter of every 401 of POST /mcp/oauth. /mcp (API keys) has none.',
    success: { status: 200, description: 'The resource, its authorization server and how to send the token.', schema: 'OAuthProtectedResourceMetadata' },
    errors: [],
  },
  {
    method: 'get', path: OAUTH_PATHS.serverMetadata, operationId: 'oauthServerMetadata', tag: 'oauth', access: 'none', servedBy: 'account-admin', sdk: false,
    summary: 'Authorization-server metadata (RFC 8414)',
    success: { status: 200, description: 'The endpoints and what they support: the code flow with PKCE S256, public clients, Client ID Metadata Documents.', schema: 'OAuthServerMetadata' },
    errors: [],
  },
  {
    method: 'post', path: OAUTH_PATHS.register, operationId: 'oauthRegister', tag: 'oauth', access: 'none', servedBy: 'account-admin', sdk: false,
    summary: 'Dynamic client registration (RFC 7591) of a public client',
    description: 'Unknown metadata is ignored; the client is always registered with token_endpoint_auth_method "none" (PKCE, no secret). Refusals are 400 OAuthError (invalid_redirect_uri, invalid_client_metadata).',
    body: { schema: 'OAuthRegistrationBody' },
    success: { status: 201, description: 'The registered client.', schema: 'OAuthClientInformation' },
    alsoAnswers: { status: 400, description: 'An OAuth error.', schema: 'OAuthError' },
    errors: [],
  },
  {
    method: 'get', path: OAUTH_PATHS.authorize, operationId: 'oauthAuthorize', tag: 'oauth', access: 'none', servedBy: 'account-admin', sdk: false,
    summary: 'Starts an authorization (code flow, PKCE S256 only)',
    description: 'Query: response_type=code, client_id (a registered id or a Client ID Metadata Document URL), redirect_uri (exactly a registered one), code_challenge, code_challenge_method=S256, state, resource (optional, /mcp/oauth). 302 to the dashboard\'s consent page; a problem with the request after the client and redirect URI are verified is a 302 back to the redirect URI with error and state; an unknown client or redirect URI is a 400 HTML page (never a redirect).',
    success: { status: 302, description: 'To the consent page, or back to the client with an error.' },
    errors: [],
  },
  {
    method: 'post', path: OAUTH_PATHS.token, operationId: 'oauthToken', tag: 'oauth', access: 'none', servedBy: 'account-admin', sdk: false,
    summary: 'Exchanges a code, or a refresh token, for tokens',
    description: 'A code is single use and valid 60 s; its redirect_uri and code_verifier must match. A refresh token is single use: each answer carries a new one, and a used one presented again revokes the grant. Cache-Control: no-store.',
    body: { schema: 'OAuthTokenBody', contentType: 'application/x-www-form-urlencoded' },
    success: { status: 200, description: 'An access token for /mcp/oauth and a refresh token.', schema: 'OAuthTokenResponse' },
    alsoAnswers: { status: 400, description: 'An OAuth error (invalid_request, invalid_grant, unsupported_grant_type).', schema: 'OAuthError' },
    errors: [],
  },
  {
    method: 'post', path: OAUTH_PATHS.revoke, operationId: 'oauthRevoke', tag: 'oauth', access: 'none', servedBy: 'account-admin', sdk: false,
    summary: 'Revokes a token (RFC 7009)',
    description: 'An access token ends alone; a refresh token ends its whole grant (the grant\'s key is deleted). An unknown token is 200 too.',
    body: { schema: 'OAuthRevokeBody', contentType: 'application/x-www-form-urlencoded' },
    success: { status: 200, description: 'Revoked, or nothing to revoke.' },
    alsoAnswers: { status: 400, description: 'An OAuth error (invalid_request).', schema: 'OAuthError' },
    errors: [],
  },
  {
    method: 'get', path: '/dashboard/api/oauth/requests/{id}', operationId: 'dashboardOAuthRequest', tag: 'dashboard', access: 'session', servedBy: 'account-admin', sdk: false,
    summary: 'A pending authorization request, for the consent page',
    success: { status: 200, description: 'The client\'s name and redirect host.', schema: 'OAuthConsentView' },
    errors: ['invalid_api_key', 'not_found', 'internal'],
  },
  {
    method: 'post', path: '/dashboard/api/oauth/requests/{id}/approve', operationId: 'dashboardOAuthApprove', tag: 'dashboard', access: 'session+csrf', servedBy: 'account-admin', sdk: false,
    summary: 'Approves an authorization request for the session\'s account',
    description: 'Creates the grant and its API key (named after the client, with this limit and expiry). Only a session can approve: there is no /v1 route, so no key can.',
    body: { schema: 'ConsentBody' },
    success: { status: 200, description: 'Where the browser goes next: the client\'s redirect URI with the code.', schema: 'OAuthApproved' },
    errors: ['invalid_request', 'invalid_api_key', 'not_found', 'internal'],
  },
  {
    method: 'post', path: '/dashboard/api/oauth/requests/{id}/deny', operationId: 'dashboardOAuthDeny', tag: 'dashboard', access: 'session+csrf', servedBy: 'account-admin', sdk: false,
    summary: 'Denies an authorization request',
    success: { status: 200, description: 'The client\'s redirect URI with error=access_denied.', schema: 'OAuthDenied' },
    errors: ['invalid_request', 'invalid_api_key', 'not_found', 'internal'],
  },
  {
    method: 'get', path: '/dashboard/api/connected-apps', operationId: 'dashboardConnectedApps', tag: 'dashboard', access: 'session', servedBy: 'account-admin', sdk: false,
    summary: "The account's connected apps (OAuth grants), with their key's limit and spend",
    success: { status: 200, description: 'Newest first, revoked ones included.', schema: 'ConnectedAppList' },
    errors: ['invalid_api_key', 'internal'],
  },
  {
    method: 'delete', path: '/dashboard/api/connected-apps/{id}', operationId: 'dashboardRevokeConnectedApp', tag: 'dashboard', access: 'session+csrf', servedBy: 'account-admin', sdk: false,
    summary: 'Revokes a connected app',
    description: 'Its key is deleted and its tokens end: the next call is 401 within the key propagation bound (docs/propagation.md).',
    success: { status: 200, description: 'Revoked.', schema: 'RevokedConnectedApp' },
    errors: ['invalid_request', 'invalid_api_key', 'not_found', 'internal'],
  },
  ...webhookOperations(),
];
