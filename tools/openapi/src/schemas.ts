import { ALERT_EVENT_TYPES, ANSWER_SCHEMAS, API_KEY_FIELDS, AUDIT_ACTIONS, AUDIT_ACTOR_KINDS, CACHE_STATUSES, FILTER_SCHEMAS, LIMITS, MODEL_PRICING_FIELDS, OAUTH_LIMITS, PROVIDERS, RESEARCH_PRICING_FIELDS, REQUEST_ID_SCHEMA, REQUEST_KINDS, WEBHOOK_EVENT_TYPES, WEBHOOK_RESPONSE_HEAD_BYTES, closedObject } from '@svc/contracts';
import { ERROR_CODES } from '@svc/errors';
import type { ErrorCode } from '@svc/errors';

/**
 * The JSON Schemas (2020-12, the dialect of OpenAPI 3.1) of every response body of the
 * public edge, and of the few request bodies that have no class-validator DTO. Request
 * bodies with a DTO come from the DTO's decorators (document.ts). Response schemas forbid
 * unknown fields, so a field added to an answer without being documented fails the
 * contract test (test/e2e/openapi-contract.e2e.spec.ts).
 */

export type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const nullable = (schema: Schema): Schema => ({ ...schema, type: [schema.type, 'null'] });

const closed = closedObject as (properties: Record<string, Schema>, optional?: readonly string[], description?: string) => Schema;

const usd = (description: string): Schema => ({ type: 'number', description });
const timestamp = (description?: string): Schema => ({ type: 'string', format: 'date-time', ...(description === undefined ? {} : { description }) });
const requestId: Schema = REQUEST_ID_SCHEMA;
const id = (prefix: string, description: string): Schema => ({ type: 'string', pattern: `^${prefix}_[0-9A-Za-z]{24}$`, description });

const PAYMENT_CODES: readonly ErrorCode[] = ['insufficient_credits', 'key_limit_exceeded'];
const ATTEMPTS_CODES: readonly ErrorCode[] = ['all_providers_failed', 'unsupported_filter', 'unsupported_option'];

/** The reusable schemas, by component name. */
export function componentSchemas(): Record<string, Schema> {
  const apiKeyFields: Record<string, Schema> = API_KEY_FIELDS;
  const eventFields: Record<string, Schema> = {
    id: id('evt', 'The event id (the same in every delivery of it).'),
    object: { const: 'event' },
    type: { enum: [...WEBHOOK_EVENT_TYPES] },
    account_id: id('acct', 'The account.'),
    created_at: timestamp(),
    data: { type: 'object', description: 'By type: balance.low {balance_usd, threshold_usd}; credits.purchased {amount_usd, balance_usd, ledger_entry_id, source}; research.completed and research.failed: the run as GET /v1/research/{id} answers it (ResearchRun, without request_id).' },
  };
  const webhookEndpointFields: Record<string, Schema> = {
    id: id('whe', 'The endpoint id.'),
    object: { const: 'webhook_endpoint' },
    url: { type: 'string', format: 'uri' },
    events: { type: 'array', items: { enum: [...WEBHOOK_EVENT_TYPES] }, uniqueItems: true },
    enabled: { type: 'boolean' },
    disabled_reason: { enum: ['failing', null], description: 'failing: billing disabled it after 24 hours of failed deliveries.' },
    failing_since: { ...nullable(timestamp()), description: 'When deliveries started failing; null while they succeed.' },
    previous_secret_expires_at: { ...nullable(timestamp()), description: 'Until when the rotated-out secret still signs (a second v1).' },
    created_at: timestamp(),
    updated_at: timestamp(),
  };
  const auditValue: Schema = {
    type: ['string', 'number', 'boolean', 'null', 'array'], items: { type: 'string' },
    description: 'A field\'s value as the API shows it; never a secret, a key hash or a provider key.',
  };
  const managementKeyFields: Record<string, Schema> = {
    id: id('mkey', 'The management key id.'),
    name: { type: 'string' },
    label: { type: 'string' },
    created_at: timestamp(),
    disabled: { type: 'boolean', description: 'When true the key gets 401 key_disabled.' },
    updated_at: timestamp(),
    last_used_at: nullable(timestamp()),
  };
  const rateLimit = closed({ requests_per_second: { type: 'integer' }, burst: { type: 'integer' } }, [], 'The search rate limit of API keys (RATE_LIMIT_PER_SECOND, RATE_LIMIT_BURST).');
  const providerKey = {
    provider: ref('Provider'),
    label: { type: 'string', description: '"…" and the last 4 characters of the key; the key itself is never shown.' },
    created_at: timestamp(),
    updated_at: timestamp(),
  };
  const errorFields = (codes: readonly ErrorCode[]): Record<string, Schema> => ({
    code: { enum: [...codes] },
    message: { type: 'string', description: 'For humans; may change. Never branch on it.' },
    request_id: requestId,
  });
  return {
    // The answers written once in @svc/contracts (ANSWER_SCHEMAS), each in its place in the document's order.
    Provider: ANSWER_SCHEMAS.Provider,
    ModelId: ANSWER_SCHEMAS.ModelId,
    ModelKind: ANSWER_SCHEMAS.ModelKind,
    SearchContents: ANSWER_SCHEMAS.SearchContents,
    ExtractFormat: ANSWER_SCHEMAS.ExtractFormat,
    ExtractOption: ANSWER_SCHEMAS.ExtractOption,
    ErrorCode: { enum: [...ERROR_CODES] },
    Attempt: ANSWER_SCHEMAS.Attempt,
    PlainError: closed(errorFields(ERROR_CODES.filter((code) => !PAYMENT_CODES.includes(code) && !ATTEMPTS_CODES.includes(code) && code !== 'max_cost_exceeded'))),
    PaymentError: closed({ ...errorFields(PAYMENT_CODES), needed_usd: usd('The price of the cheapest blocked attempt.') }),
    MaxCostError: closed({
      ...errorFields(['max_cost_exceeded']),
      needed_usd: usd('The least max_cost_usd that lets one of the requested models run (what the request held before it, plus its most possible cost).'),
      attempts: { type: 'array', items: ref('Attempt'), description: 'Every model, each skipped with its reason (over max_cost_usd, or another).' },
    }),
    AllProvidersFailedError: closed({ ...errorFields(ATTEMPTS_CODES), attempts: { type: 'array', items: ref('Attempt'), description: 'Every attempt, in order.' } }),
    ApiError: { oneOf: [ref('PlainError'), ref('PaymentError'), ref('MaxCostError'), ref('AllProvidersFailedError')], description: 'Discriminated by code: needed_usd only on 402s, attempts only on all_providers_failed, unsupported_filter, unsupported_option and max_cost_exceeded.' },
    ErrorResponse: closed({ error: ref('ApiError') }),
    ModelPricing: ANSWER_SCHEMAS.ModelPricing,
    Model: ANSWER_SCHEMAS.Model,
    FilterName: ANSWER_SCHEMAS.FilterName,
    ModelList: ANSWER_SCHEMAS.ModelList,
    ModelStatus: ANSWER_SCHEMAS.ModelStatus,
    HealthWindow: closed({
      calls: { type: 'integer', minimum: 0 },
      success_rate: { type: ['number', 'null'], minimum: 0, maximum: 1, description: 'Answered calls over calls; null without calls.' },
      timeouts: { type: 'integer', minimum: 0 },
      server_errors: { type: 'integer', minimum: 0, description: '5xx, connection errors, unreadable answers, the platform key refused.' },
      rate_limited: { type: 'integer', minimum: 0, description: 'The provider\'s 429 and quota answers.' },
      p50_ms: { type: ['integer', 'null'], description: 'Upper bound of the latency bucket of the median call; null without calls.' },
      p95_ms: { type: ['integer', 'null'], description: 'Upper bound of the latency bucket of the 95th-percentile call; null without calls.' },
    }),
    Breaker: closed({
      state: { enum: ['closed', 'open', 'half_open'], description: 'half_open: the cool-down ended, still skipped until one probe answers.' },
      forced: { enum: ['open', 'closed', null], description: 'Set while an operator holds the breaker so.' },
      reason: { type: ['string', 'null'], description: 'Why it opened; null when closed.' },
      opened_at: { ...nullable(timestamp()), description: 'Null when closed.' },
      retry_after_seconds: { type: ['integer', 'null'], minimum: 1, description: 'Seconds until the probe; null when closed.' },
    }),
    ServiceStatus: closed({
      updated_at: timestamp('When the figures were read.'),
      breaker_enabled: { type: 'boolean' },
      providers: {
        type: 'array',
        items: closed({
          provider: ref('Provider'),
          status: ref('ModelStatus'),
          configured: { type: 'boolean', description: 'The deployment has a platform key for it.' },
          breaker: ref('Breaker'),
          last_5m: ref('HealthWindow'),
          last_1h: ref('HealthWindow'),
        }),
      },
      models: {
        type: 'array',
        items: closed({ id: ref('ModelId'), provider: ref('Provider'), status: ref('ModelStatus'), last_5m: ref('HealthWindow'), last_1h: ref('HealthWindow') }),
      },
      request_id: requestId,
    }),
    Pricing: closed({
      currency: { const: 'USD' },
      models: { type: 'array', items: closed({ id: ref('ModelId'), kind: ref('ModelKind'), ...MODEL_PRICING_FIELDS }, ['contents_usd', 'per_url_usd', 'url_block', ...RESEARCH_PRICING_FIELDS]) },
      purchase: closed({ min_usd: { type: 'number' }, max_usd: { type: 'number' } }, [], 'The checkout amount range.'),
      byok: closed({ enabled: { type: 'boolean' }, fee_percent: { type: 'number' } }),
      cache: closed({ enabled: { type: 'boolean' }, price_percent: { type: ['integer', 'null'], description: 'cache_price_usd as a percentage of base_usd (CACHE_PRICE_PERCENT).' } }),
      request_id: requestId,
    }),
    SearchResult: ANSWER_SCHEMAS.SearchResult,
    SearchResponse: ANSWER_SCHEMAS.SearchResponse,
    SearchStrategy: ANSWER_SCHEMAS.SearchStrategy,
    FanoutSource: ANSWER_SCHEMAS.FanoutSource,
    FanoutResult: ANSWER_SCHEMAS.FanoutResult,
    FanoutAttempt: ANSWER_SCHEMAS.FanoutAttempt,
    FanoutSearchResponse: ANSWER_SCHEMAS.FanoutSearchResponse,
    SearchAnswer: ANSWER_SCHEMAS.SearchAnswer,
    ExtractResult: ANSWER_SCHEMAS.ExtractResult,
    ExtractFailure: ANSWER_SCHEMAS.ExtractFailure,
    ExtractAttempt: ANSWER_SCHEMAS.ExtractAttempt,
    ExtractResponse: ANSWER_SCHEMAS.ExtractResponse,
    ResearchModelId: ANSWER_SCHEMAS.ResearchModelId,
    ResearchAttempt: ANSWER_SCHEMAS.ResearchAttempt,
    ResearchSource: ANSWER_SCHEMAS.ResearchSource,
    ResearchRunSummary: ANSWER_SCHEMAS.ResearchRunSummary,
    ResearchRun: ANSWER_SCHEMAS.ResearchRun,
    ResearchRunList: ANSWER_SCHEMAS.ResearchRunList,
    ApiKey: ANSWER_SCHEMAS.ApiKey,
    ApiKeyResponse: closed({ ...apiKeyFields, request_id: requestId }),
    CreatedApiKey: closed({ ...apiKeyFields, secret: { type: 'string', pattern: '^svc-', description: 'The key, shown only here.' }, request_id: requestId }),
    ApiKeyList: closed({ data: { type: 'array', items: ref('ApiKey') }, next_cursor: { type: ['string', 'null'], description: 'null on the last page.' }, request_id: requestId }),
    DeletedApiKey: closed({ id: id('key', 'The deleted key.'), deleted: { const: true }, request_id: requestId }),
    RateLimit: rateLimit,
    ApiKeyInfo: closed({ kind: { const: 'api' }, ...apiKeyFields, rate_limit: ref('RateLimit'), request_id: requestId }),
    ManagementKeyInfo: closed({
      kind: { const: 'management' },
      id: id('mkey', 'The management key id.'),
      name: { type: 'string' },
      label: { type: 'string' },
      expires_at: { type: 'null' },
      disabled: { const: false },
      created_at: timestamp(),
      updated_at: timestamp(),
      last_used_at: nullable(timestamp()),
      rate_limit: ref('RateLimit'),
      request_id: requestId,
    }),
    AuditEntry: closed({
      id: id('aud', 'The entry id.'),
      at: timestamp('When the change was committed.'),
      actor: closed({
        kind: { enum: [...AUDIT_ACTOR_KINDS], description: 'management_key, session (a dashboard user), oauth_grant (reserved: no OAuth grants are issued yet) or operator.' },
        id: { type: 'string', description: 'The management key id, the user id, the grant id, or `operator`.' },
      }),
      client_address: { type: ['string', 'null'], description: 'The client\'s address (TRUSTED_PROXIES applied).' },
      action: { enum: [...AUDIT_ACTIONS] },
      target_id: { type: 'string', description: 'A key id, a provider, a checkout id or a ledger entry id.' },
      changes: {
        type: 'object',
        description: 'Each changed field: its value before and after (null before on a creation).',
        additionalProperties: closed({ before: auditValue, after: auditValue }),
      },
    }),
    AuditLogPage: closed({
      data: { type: 'array', items: ref('AuditEntry'), description: 'Newest first.' },
      next_cursor: { type: ['string', 'null'], description: 'null on the last page.' },
      request_id: requestId,
    }),
    KeyInfo: { oneOf: [ref('ApiKeyInfo'), ref('ManagementKeyInfo')], description: 'The calling key, discriminated by kind.' },
    ProviderKey: closed(providerKey),
    ProviderKeyResponse: closed({ ...providerKey, request_id: requestId }),
    ProviderKeyList: closed({ data: { type: 'array', items: ref('ProviderKey'), maxItems: PROVIDERS.length }, next_cursor: { type: 'null', description: 'Always null: one page.' }, request_id: requestId }),
    DeletedProviderKey: closed({ provider: ref('Provider'), deleted: { const: true }, request_id: requestId }),
    Credits: ANSWER_SCHEMAS.Credits,
    CheckoutSession: closed({
      id: id('chk', 'The checkout id.'),
      url: { type: 'string', format: 'uri', description: 'Send the buyer here.' },
      amount_usd: usd('The amount being bought.'),
      expires_at: timestamp('When the payment page expires.'),
      request_id: requestId,
    }),
    WebhookReceived: closed({ received: { const: true }, event_id: { type: 'string' }, request_id: requestId }),
    StripeEvent: { type: 'object', description: 'A Stripe event, sent by Stripe, verified against the Stripe-Signature header on its exact bytes.' },
    UsageRow: ANSWER_SCHEMAS.UsageRow,
    Usage: closed({
      from: { type: 'string', format: 'date' },
      to: { type: 'string', format: 'date' },
      data: { type: 'array', items: ref('UsageRow') },
      total: closed({ searches: { type: 'integer' }, cost_usd: { type: 'number' }, byok_fee_usd: { type: 'number' }, cache_hits: { type: 'integer' }, cache_saved_usd: { type: 'number' } }),
      request_id: requestId,
    }),
    SignedIn: closed({ account_id: id('acct', 'The account.'), email: { type: 'string' }, csrf_token: { type: 'string', description: 'Send it as x-csrf-token on every mutating dashboard call.' }, request_id: requestId }),
    Me: closed({ account_id: id('acct', 'The account.'), email: { type: 'string' }, request_id: requestId }),
    CheckEmail: closed({
      status: { const: 'check_email', description: 'A message was sent to the address: the same answer whether or not an account uses it.' },
      email: { type: 'string', description: 'The address, trimmed and lower-cased.' },
      request_id: requestId,
    }),
    SignupConfirmed: closed({ email: { type: 'string', description: 'The confirmed address: its account exists and can sign in from now on.' }, confirmed: { const: true }, request_id: requestId }),
    NotificationSetting: closed({
      event_type: { enum: [...ALERT_EVENT_TYPES] },
      email: { type: 'boolean', description: 'Whether the owner gets this alert by email.' },
      email_default: { type: 'boolean', description: 'The choice an account that never chose has.' },
    }),
    NotificationSettingResponse: closed({
      event_type: { enum: [...ALERT_EVENT_TYPES] },
      email: { type: 'boolean' },
      email_default: { type: 'boolean' },
      request_id: requestId,
    }),
    NotificationSettings: closed({ data: { type: 'array', items: ref('NotificationSetting') }, request_id: requestId }),
    ManagementKey: closed(managementKeyFields),
    ManagementKeyResponse: closed({ ...managementKeyFields, request_id: requestId }),
    CreatedManagementKey: closed({
      ...managementKeyFields,
      secret: { type: 'string', pattern: '^svc-mgmt-', description: 'The key, shown only here.' },
      request_id: requestId,
    }),
    ActivityAttempt: closed({
      model: { type: 'string' },
      provider: ref('Provider'),
      source: { enum: ['platform', 'byok'], description: "Whose provider key the attempt used." },
      status: { enum: ['success', 'error', 'skipped'] },
      error: { type: ['string', 'null'], description: 'Short reason of an error or skip; null on success.' },
      cost_usd: usd('What this attempt was charged.'),
      timed_out: { type: 'boolean' },
      results: { type: 'integer', minimum: 0, description: 'Results returned (an extract: pages that came back).' },
      cache: { enum: [...CACHE_STATUSES, null], description: 'The result cache\'s part in an answered attempt (hit, joined, miss, off); null otherwise and on searches settled before the cache.' },
      saved_usd: usd('What a hit or joined attempt saved against the provider\'s price.'),
    }, [], 'One attempt of a search, in order.'),
    ActivityItem: closed({
      request_id: { ...requestId, description: 'The request id of the search.' },
      created_at: timestamp('When the search settled.'),
      key_id: id('key', 'The API key that searched.'),
      kind: { enum: [...REQUEST_KINDS], description: 'search (POST /v1/search, web_search) or extract (POST /v1/extract, web_fetch).' },
      model: { type: ['string', 'null'], description: 'The model of the final attempt: the one that answered, else the last one tried.' },
      status: { enum: ['success', 'failed'], description: 'success when an attempt answered.' },
      cost_usd: usd("The search's charge."),
      filters: {
        anyOf: [{ type: 'object', additionalProperties: false, properties: { ...FILTER_SCHEMAS } }, { type: 'null' }],
        description: 'The filters the search was made with, as POST /v1/search\'s fields in canonical form (hostnames lower-cased and sorted, date-times in UTC); null without filters.',
      },
      attempts: { type: 'array', items: ref('ActivityAttempt') },
    }, [], 'One settled search.'),
    Activity: closed({ data: { type: 'array', items: ref('ActivityItem') }, next_cursor: { type: ['string', 'null'], description: 'null on the last page.' }, request_id: requestId }),
    DailySpend: closed({
      from: { type: 'string', format: 'date' },
      to: { type: 'string', format: 'date' },
      data: {
        type: 'array',
        items: closed({
          date: { type: 'string', format: 'date' },
          model: { type: 'string' },
          attempts: { type: 'integer', minimum: 0, description: 'Attempts that were not skipped.' },
          cost_usd: usd('What those attempts were charged.'),
        }),
      },
      request_id: requestId,
    }),
    Purchase: closed({
      id: id('chk', 'The checkout id.'),
      amount_usd: usd('The credits bought.'),
      status: { enum: ['pending', 'paid', 'failed', 'expired'], description: 'pending: the payment page is open; paid: credited once.' },
      created_at: timestamp(),
      paid_at: nullable(timestamp()),
      refunded_usd: usd('Refunded by Stripe after the payment.'),
      disputed_usd: usd('Taken back by a dispute.'),
    }, [], 'One checkout.'),
    PurchaseList: closed({ data: { type: 'array', items: ref('Purchase') }, next_cursor: { type: ['string', 'null'], description: 'null on the last page.' }, request_id: requestId }),
    ManagementKeyList: closed({ data: { type: 'array', items: ref('ManagementKey') }, next_cursor: { type: 'null' }, request_id: requestId }),
    DeletedManagementKey: closed({ id: id('mkey', 'The deleted key.'), deleted: { const: true }, request_id: requestId }),
    OAuthProtectedResourceMetadata: closed({
      resource: { type: 'string', format: 'uri', description: 'The connector URL, <base>/mcp/oauth.' },
      authorization_servers: { type: 'array', items: { type: 'string', format: 'uri' }, description: 'The issuer: the public base URL.' },
      bearer_methods_supported: { type: 'array', items: { const: 'header' } },
      scopes_supported: { type: 'array', maxItems: 0, description: 'No scopes: a grant is limited by its key\'s spend limit and expiry.' },
      resource_name: { type: 'string' },
      resource_documentation: { type: 'string', format: 'uri' },
    }),
    OAuthServerMetadata: closed({
      issuer: { type: 'string', format: 'uri' },
      authorization_endpoint: { type: 'string', format: 'uri' },
      token_endpoint: { type: 'string', format: 'uri' },
      registration_endpoint: { type: 'string', format: 'uri' },
      revocation_endpoint: { type: 'string', format: 'uri' },
      response_types_supported: { type: 'array', items: { const: 'code' } },
      response_modes_supported: { type: 'array', items: { const: 'query' } },
      grant_types_supported: { type: 'array', items: { enum: ['authorization_code', 'refresh_token'] } },
      code_challenge_methods_supported: { type: 'array', items: { const: 'S256' } },
      token_endpoint_auth_methods_supported: { type: 'array', items: { const: 'none' } },
      revocation_endpoint_auth_methods_supported: { type: 'array', items: { const: 'none' } },
      client_id_metadata_document_supported: { const: true },
      authorization_response_iss_parameter_supported: { const: true },
      scopes_supported: { type: 'array', maxItems: 0 },
      service_documentation: { type: 'string', format: 'uri' },
    }),
    OAuthRegistrationBody: {
      type: 'object',
      required: ['redirect_uris'],
      description: 'RFC 7591 client metadata; fields not listed are ignored.',
      properties: {
        redirect_uris: { type: 'array', minItems: OAUTH_LIMITS.redirectUris.min, maxItems: OAUTH_LIMITS.redirectUris.max, items: { type: 'string', maxLength: OAUTH_LIMITS.uri.max }, description: 'https, http on a loopback host, or a native app\'s private-use scheme; no fragment. Compared exactly.' },
        client_name: { type: 'string', description: `Shown on the consent page and as the grant key's name (first ${OAUTH_LIMITS.clientName.max} characters).` },
        grant_types: { type: 'array', items: { enum: ['authorization_code', 'refresh_token'] } },
        response_types: { type: 'array', items: { const: 'code' } },
        token_endpoint_auth_method: { type: 'string', description: 'Ignored: every client is public ("none").' },
      },
    },
    OAuthClientInformation: closed({
      client_id: id('ocl', 'The client id.'),
      client_id_issued_at: { type: 'integer' },
      client_name: { type: 'string' },
      redirect_uris: { type: 'array', items: { type: 'string' } },
      grant_types: { type: 'array', items: { enum: ['authorization_code', 'refresh_token'] } },
      response_types: { type: 'array', items: { const: 'code' } },
      token_endpoint_auth_method: { const: 'none' },
    }),
    OAuthTokenBody: {
      type: 'object',
      required: ['grant_type', 'client_id'],
      description: 'authorization_code: code, redirect_uri, code_verifier; refresh_token: refresh_token. Each parameter once.',
      properties: {
        grant_type: { enum: ['authorization_code', 'refresh_token'] },
        client_id: { type: 'string' },
        code: { type: 'string' },
        redirect_uri: { type: 'string' },
        code_verifier: { type: 'string', pattern: '^[A-Za-z0-9._~-]{43,128}$' },
        refresh_token: { type: 'string' },
      },
    },
    OAuthTokenResponse: closed({
      access_token: { type: 'string', pattern: '^svc-oat-[A-Za-z0-9_-]{43}$', description: 'For POST /mcp/oauth only; no other route takes it.' },
      token_type: { const: 'Bearer' },
      expires_in: { type: 'integer', minimum: 1 },
      refresh_token: { type: 'string', pattern: '^svc-ort-[A-Za-z0-9_-]{43}$', description: 'Single use: the next answer carries its replacement.' },
    }),
    OAuthRevokeBody: {
      type: 'object',
      required: ['token'],
      properties: { token: { type: 'string' }, token_type_hint: { enum: ['access_token', 'refresh_token'] }, client_id: { type: 'string' } },
    },
    OAuthError: closed({ error: { type: 'string', description: 'An RFC 6749 / 7591 error code.' }, error_description: { type: 'string' } }),
    OAuthConsentView: closed({
      id: id('oar', 'The authorization request.'),
      client_id: { type: 'string' },
      client_name: { type: 'string' },
      redirect_host: { type: 'string', description: 'Where the browser goes after the decision.' },
      client_kind: { enum: ['metadata_document', 'dynamic'], description: 'metadata_document: the client id is a URL its owner serves; dynamic: the name is self-declared.' },
      expires_at: timestamp(),
      request_id: requestId,
    }),
    OAuthApproved: closed({ redirect_to: { type: 'string', format: 'uri' }, grant_id: id('ogr', 'The new connected app.'), key_id: id('key', 'Its API key.'), request_id: requestId }),
    OAuthDenied: closed({ redirect_to: { type: 'string', format: 'uri' }, request_id: requestId }),
    ConnectedAppList: closed({
      data: {
        type: 'array',
        items: closed({
          id: id('ogr', 'The grant.'),
          client_id: { type: 'string' },
          client_name: { type: 'string' },
          redirect_host: { type: 'string' },
          created_at: timestamp(),
          revoked_at: nullable(timestamp()),
          revoked_reason: { type: ['string', 'null'] },
          key: { oneOf: [ref('ApiKey'), { type: 'null' }], description: 'The grant\'s API key with its limit and spend; null once deleted.' },
          key_id: id('key', 'The grant\'s API key.'),
        }),
      },
      request_id: requestId,
    }),
    RevokedConnectedApp: closed({ id: id('ogr', 'The revoked grant.'), revoked: { const: true }, request_id: requestId }),
    Event: closed(eventFields, [], 'One immutable event; a webhook delivers exactly this JSON.'),
    EventResponse: closed({ ...eventFields, request_id: requestId }),
    EventList: closed({ data: { type: 'array', items: ref('Event') }, next_cursor: { type: ['string', 'null'], description: 'null on the last page.' }, request_id: requestId }),
    WebhookEndpoint: closed(webhookEndpointFields),
    WebhookEndpointResponse: closed({ ...webhookEndpointFields, request_id: requestId }),
    WebhookEndpointWithSecret: closed({
      ...webhookEndpointFields,
      secret: { type: 'string', pattern: '^whsec_[A-Za-z0-9_-]{43}$', description: 'The signing secret, shown only here (at creation and at each rotation).' },
      request_id: requestId,
    }),
    WebhookEndpointList: closed({ data: { type: 'array', items: ref('WebhookEndpoint'), maxItems: LIMITS.webhookEndpoints.max }, next_cursor: { type: ['string', 'null'] }, request_id: requestId }),
    DeletedWebhookEndpoint: closed({ id: id('whe', 'The deleted endpoint.'), deleted: { const: true }, request_id: requestId }),
    WebhookDelivery: closed({
      id: id('whd', 'The delivery: one event to one endpoint.'),
      event_id: id('evt', 'The event.'),
      event_type: { enum: [...WEBHOOK_EVENT_TYPES] },
      status: { enum: ['pending', 'succeeded', 'failed', 'cancelled'], description: 'pending: being tried (with backoff, for 24 hours); failed: the window ended or the endpoint was disabled.' },
      attempt_count: { type: 'integer', minimum: 0 },
      created_at: timestamp(),
      last_attempt_at: nullable(timestamp()),
      attempts: {
        type: 'array',
        items: closed({
          attempted_at: timestamp(),
          status_code: { type: ['integer', 'null'], description: "The receiver's status; null when none came." },
          error: { type: ['string', 'null'], description: 'Why the attempt failed; null on a 2xx.' },
          duration_ms: { type: 'integer', minimum: 0 },
          response_head: { type: ['string', 'null'], description: `The first ${WEBHOOK_RESPONSE_HEAD_BYTES} bytes of the answer.` },
        }),
      },
    }),
    WebhookDeliveryList: closed({ data: { type: 'array', items: ref('WebhookDelivery') }, next_cursor: { type: ['string', 'null'] }, request_id: requestId }),
    RedeliveryAccepted: closed({ id: id('whd', 'The delivery.'), status: { const: 'pending' }, request_id: requestId }),
    BillingSettings: closed({
      low_balance_threshold_usd: nullable(usd('balance.low is sent when the balance falls below this; null: off.')),
      auto_topup: closed({
        enabled: { type: 'boolean', description: 'Whether a top-up is made when the balance falls below threshold_usd.' },
        threshold_usd: nullable(usd('A top-up is made when the balance falls below this (once per crossing).')),
        amount_usd: nullable(usd('What one top-up charges the saved card and credits.')),
        monthly_cap_usd: nullable(usd('The most top-ups may charge in one calendar month (UTC).')),
        payment_method: nullable(closed({
          brand: { type: ['string', 'null'] },
          last4: { type: ['string', 'null'] },
          saved_at: timestamp(),
        })),
        month_to_date_usd: usd('Pending and succeeded top-ups of the current UTC month (what the cap counts).'),
        consecutive_failures: { type: 'integer', minimum: 0 },
        disabled_reason: { enum: ['payment_failed', null], description: 'payment_failed: turned off after consecutive failed top-ups; saving the settings again clears it.' },
        last_topup: nullable(closed({
          id: id('atu', 'The top-up.'),
          status: { enum: ['pending', 'succeeded', 'failed', 'skipped'] },
          amount_usd: usd('What it charged (or would have).'),
          failure_code: { type: ['string', 'null'], description: "Stripe's decline code, or monthly_cap_reached for a skipped one." },
          created_at: timestamp(),
        })),
      }),
      request_id: requestId,
    }),
    AutoTopupSetup: closed({
      object: { const: 'auto_topup_setup' },
      url: { type: 'string', format: 'uri', description: "Stripe's page where the owner saves a card." },
      expires_at: timestamp(),
      request_id: requestId,
    }),
    OpenApiDocument: { type: 'object', required: ['openapi', 'info', 'paths'], properties: { openapi: { const: '3.1.0' } } },
    Health: closed({ status: { const: 'ok' }, request_id: requestId }),
    Readiness: closed({
      status: { enum: ['ready', 'unavailable'] },
      checks: { type: 'object', additionalProperties: { enum: ['ok', 'down'] }, description: 'redis and, on a gateway that serves searches, search_batch.' },
      request_id: requestId,
    }),
  };
}
