import { AUDIT_ACTIONS, AUDIT_ACTOR_KINDS, CACHE_STATUSES, CATALOG, FILTER_NAMES, LIMITS, LIMIT_RESETS, MODEL_STATUSES, PROVIDERS } from '@svc/contracts';
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

/** An object whose listed fields are all required and whose other fields are refused. */
function closed(properties: Record<string, Schema>, optional: readonly string[] = [], description?: string): Schema {
  return {
    type: 'object',
    ...(description === undefined ? {} : { description }),
    required: Object.keys(properties).filter((name) => !optional.includes(name)),
    properties,
    additionalProperties: false,
  };
}

const usd = (description: string): Schema => ({ type: 'number', description });
const timestamp = (description?: string): Schema => ({ type: 'string', format: 'date-time', ...(description === undefined ? {} : { description }) });
const requestId: Schema = { type: 'string', pattern: '^req_[0-9A-Za-z]{24}$', description: 'The same as the x-svc-request-id response header.' };
const id = (prefix: string, description: string): Schema => ({ type: 'string', pattern: `^${prefix}_[0-9A-Za-z]{24}$`, description });

const PAYMENT_CODES: readonly ErrorCode[] = ['insufficient_credits', 'key_limit_exceeded'];
const ATTEMPTS_CODES: readonly ErrorCode[] = ['all_providers_failed', 'unsupported_filter'];

/** The reusable schemas, by component name. */
export function componentSchemas(): Record<string, Schema> {
  const apiKeyFields: Record<string, Schema> = {
    id: id('key', 'The API key id.'),
    name: { type: 'string', maxLength: 100, description: '"" when none was given.' },
    label: { type: 'string', description: 'The masked secret: svc- and the first 4 characters after it, then "…".' },
    limit_usd: nullable(usd('Credit limit; null: no limit.')),
    limit_reset: { enum: [...LIMIT_RESETS, null], description: 'Period after which the limit starts again; null: the limit covers all time.' },
    limit_remaining_usd: nullable(usd('max(0, limit_usd - usage_usd); null without a limit.')),
    usage_usd: usd('Spend in the current period (all time when limit_reset is null).'),
    limit_resets_at: { ...nullable(timestamp()), description: 'End of the current period; null without a reset.' },
    usage_total_usd: usd('Spend, all time.'),
    expires_at: { ...nullable(timestamp()), description: 'After it the key gets 401 key_expired; null: never.' },
    disabled: { type: 'boolean', description: 'When true the key gets 401 key_disabled.' },
    created_at: timestamp(),
    updated_at: timestamp(),
    last_used_at: nullable(timestamp()),
    allowed_models: {
      type: ['array', 'null'], minItems: LIMITS.allowedModels.min, maxItems: LIMITS.allowedModels.max, items: { type: 'string' },
      description: 'The models the key may search (model ids or `<provider>/*`); null: every model.',
    },
    allowed_ips: {
      type: ['array', 'null'], minItems: LIMITS.allowedIps.min, maxItems: LIMITS.allowedIps.max, items: { type: 'string' },
      description: 'The client addresses (IPv4/IPv6 CIDRs) the key may be used from; null: any.',
    },
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
  const pricing = {
    base_usd: usd('Price of one search.'),
    included_results: { type: ['integer', 'null'], description: 'Results covered by base_usd; null when the provider does not price by count.' },
    per_result_usd: usd('Price of each result beyond included_results (0 when not priced by count).'),
    cache_price_usd: { type: ['number', 'null'], description: 'Price of a search answered from the result cache (hit or joined): CACHE_PRICE_PERCENT of base_usd; null when the deployment has no cache.' },
  };
  const errorFields = (codes: readonly ErrorCode[]): Record<string, Schema> => ({
    code: { enum: [...codes] },
    message: { type: 'string', description: 'For humans; may change. Never branch on it.' },
    request_id: requestId,
  });
  const attempt = closed(
    {
      model: { type: 'string' },
      source: { enum: ['platform', 'byok'], description: 'Whose provider key the attempt used; absent when the provider is not configured.' },
      status: { enum: ['error', 'skipped'] },
      error: { type: 'string', description: 'Short reason, e.g. "provider returned 500".' },
      cost_usd: usd('Only on an attempt that timed out: its base price, which is kept.'),
    },
    ['source', 'cost_usd'],
    'An attempt that did not answer.',
  );
  const usageRow = closed(
    {
      date: { type: 'string', format: 'date' },
      model: { type: 'string' },
      key_id: id('key', 'The API key.'),
      searches: { type: 'integer' },
      failed_attempts: { type: 'integer' },
      cost_usd: usd('What was charged.'),
      byok_fee_usd: usd("The part of cost_usd charged as BYOK fees (attempts with the account's own provider key)."),
      cache_hits: { type: 'integer', minimum: 0, description: 'Searches answered from the result cache (hit or joined).' },
      cache_saved_usd: usd('What those searches saved against the price of the same answers from the provider.'),
    },
    ['date', 'model', 'key_id'],
    'One group; its group field (date, model or key_id) matches group_by.',
  );
  return {
    Provider: { enum: [...PROVIDERS] },
    ModelId: { enum: CATALOG.map((model) => model.id), description: 'A model of the catalog (GET /v1/models).' },
    ErrorCode: { enum: [...ERROR_CODES] },
    Attempt: attempt,
    PlainError: closed(errorFields(ERROR_CODES.filter((code) => !PAYMENT_CODES.includes(code) && !ATTEMPTS_CODES.includes(code)))),
    PaymentError: closed({ ...errorFields(PAYMENT_CODES), needed_usd: usd('The price of the cheapest blocked attempt.') }),
    AllProvidersFailedError: closed({ ...errorFields(ATTEMPTS_CODES), attempts: { type: 'array', items: ref('Attempt'), description: 'Every attempt, in order.' } }),
    ApiError: { oneOf: [ref('PlainError'), ref('PaymentError'), ref('AllProvidersFailedError')], description: 'Discriminated by code: needed_usd only on 402s, attempts only on all_providers_failed and unsupported_filter.' },
    ErrorResponse: closed({ error: ref('ApiError') }),
    ModelPricing: closed(pricing),
    Model: closed({
      id: ref('ModelId'),
      provider: ref('Provider'),
      variant: { type: 'string' },
      description: { type: 'string' },
      max_results: { type: 'integer', description: 'Most results the upstream returns.' },
      pricing: ref('ModelPricing'),
      available: { type: 'boolean', description: 'False when this deployment has no platform key for the provider.' },
      supported_filters: { type: 'array', items: ref('FilterName'), description: 'The search filters this model honours; a search with any other filter skips it.' },
      status: ref('ModelStatus'),
    }),
    FilterName: { enum: [...FILTER_NAMES], description: 'A search filter of POST /v1/search.' },
    ModelList: closed({ data: { type: 'array', items: ref('Model') }, request_id: requestId }),
    ModelStatus: {
      enum: [...MODEL_STATUSES],
      description: 'operational; degraded (many of its calls failed over the last 5 minutes); unavailable (its provider\'s breaker is open, or no platform key).',
    },
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
      models: { type: 'array', items: closed({ id: ref('ModelId'), ...pricing }) },
      purchase: closed({ min_usd: { type: 'number' }, max_usd: { type: 'number' } }, [], 'The checkout amount range.'),
      byok: closed({ enabled: { type: 'boolean' }, fee_percent: { type: 'number' } }),
      cache: closed({ enabled: { type: 'boolean' }, price_percent: { type: ['integer', 'null'], description: 'cache_price_usd as a percentage of base_usd (CACHE_PRICE_PERCENT).' } }),
      request_id: requestId,
    }),
    SearchResult: closed({
      position: { type: 'integer', minimum: 1 },
      title: { type: 'string' },
      url: { type: 'string' },
      snippet: { type: 'string' },
      published_at: { type: ['string', 'null'] },
      score: { type: ['number', 'null'] },
    }),
    SearchResponse: closed({
      request_id: requestId,
      model: ref('ModelId'),
      provider: ref('Provider'),
      source: { enum: ['platform', 'byok'] },
      results: { type: 'array', items: ref('SearchResult') },
      cost_usd: usd('The total charged for this request.'),
      attempts: { type: 'array', items: ref('Attempt'), description: 'The attempts before the one that answered.' },
      latency_ms: { type: 'number' },
      cache: closed({
        status: { enum: [...CACHE_STATUSES], description: 'hit: a stored answer of this model; joined: the answer of an identical search in flight; both cost cache_price_usd. miss: the model answered (and the answer was stored). off: the search asked for no cache, or the deployment has none.' },
        age_s: { type: 'integer', minimum: 0, description: 'Seconds since the answer was stored; 0 on miss and off.' },
      }),
    }),
    ApiKey: closed(apiKeyFields),
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
    Credits: closed({
      balance_usd: usd('What the account can spend now.'),
      reserved_usd: usd('Held by searches in flight.'),
      total_purchased_usd: usd('Bought with checkout, all time, net of refunds and disputes.'),
      total_spent_usd: usd('Settled search spend, all time.'),
      request_id: requestId,
    }),
    CheckoutSession: closed({
      id: id('chk', 'The checkout id.'),
      url: { type: 'string', format: 'uri', description: 'Send the buyer here.' },
      amount_usd: usd('The amount being bought.'),
      expires_at: timestamp('When the payment page expires.'),
      request_id: requestId,
    }),
    WebhookReceived: closed({ received: { const: true }, event_id: { type: 'string' }, request_id: requestId }),
    StripeEvent: { type: 'object', description: 'A Stripe event, sent by Stripe, verified against the Stripe-Signature header on its exact bytes.' },
    UsageRow: usageRow,
    Usage: closed({
      from: { type: 'string', format: 'date' },
      to: { type: 'string', format: 'date' },
      data: { type: 'array', items: ref('UsageRow') },
      total: closed({ searches: { type: 'integer' }, cost_usd: { type: 'number' }, byok_fee_usd: { type: 'number' }, cache_hits: { type: 'integer' }, cache_saved_usd: { type: 'number' } }),
      request_id: requestId,
    }),
    SignedIn: closed({ account_id: id('acct', 'The account.'), email: { type: 'string' }, csrf_token: { type: 'string', description: 'Send it as x-csrf-token on every mutating dashboard call.' }, request_id: requestId }),
    Me: closed({ account_id: id('acct', 'The account.'), email: { type: 'string' }, request_id: requestId }),
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
      results: { type: 'integer', minimum: 0 },
      cache: { enum: [...CACHE_STATUSES, null], description: 'The result cache\'s part in an answered attempt (hit, joined, miss, off); null otherwise and on searches settled before the cache.' },
      saved_usd: usd('What a hit or joined attempt saved against the provider\'s price.'),
    }, [], 'One attempt of a search, in order.'),
    ActivityItem: closed({
      request_id: { ...requestId, description: 'The request id of the search.' },
      created_at: timestamp('When the search settled.'),
      key_id: id('key', 'The API key that searched.'),
      model: { type: ['string', 'null'], description: 'The model of the final attempt: the one that answered, else the last one tried.' },
      status: { enum: ['success', 'failed'], description: 'success when an attempt answered.' },
      cost_usd: usd("The search's charge."),
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
    OpenApiDocument: { type: 'object', required: ['openapi', 'info', 'paths'], properties: { openapi: { const: '3.1.0' } } },
    Health: closed({ status: { const: 'ok' }, request_id: requestId }),
    Readiness: closed({
      status: { enum: ['ready', 'unavailable'] },
      checks: { type: 'object', additionalProperties: { enum: ['ok', 'down'] }, description: 'redis and, on a gateway that serves searches, search_batch.' },
      request_id: requestId,
    }),
  };
}
