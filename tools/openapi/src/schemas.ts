import { ANSWER_SCHEMAS, API_KEY_FIELDS, CACHE_STATUSES, MODEL_PRICING_FIELDS, PROVIDERS, REQUEST_ID_SCHEMA, closedObject } from '@svc/contracts';
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
const ATTEMPTS_CODES: readonly ErrorCode[] = ['all_providers_failed', 'unsupported_filter'];

/** The reusable schemas, by component name. */
export function componentSchemas(): Record<string, Schema> {
  const apiKeyFields: Record<string, Schema> = API_KEY_FIELDS;
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
    ErrorCode: { enum: [...ERROR_CODES] },
    Attempt: ANSWER_SCHEMAS.Attempt,
    PlainError: closed(errorFields(ERROR_CODES.filter((code) => !PAYMENT_CODES.includes(code) && !ATTEMPTS_CODES.includes(code)))),
    PaymentError: closed({ ...errorFields(PAYMENT_CODES), needed_usd: usd('The price of the cheapest blocked attempt.') }),
    AllProvidersFailedError: closed({ ...errorFields(ATTEMPTS_CODES), attempts: { type: 'array', items: ref('Attempt'), description: 'Every attempt, in order.' } }),
    ApiError: { oneOf: [ref('PlainError'), ref('PaymentError'), ref('AllProvidersFailedError')], description: 'Discriminated by code: needed_usd only on 402s, attempts only on all_providers_failed and unsupported_filter.' },
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
      models: { type: 'array', items: closed({ id: ref('ModelId'), ...MODEL_PRICING_FIELDS }) },
      purchase: closed({ min_usd: { type: 'number' }, max_usd: { type: 'number' } }, [], 'The checkout amount range.'),
      byok: closed({ enabled: { type: 'boolean' }, fee_percent: { type: 'number' } }),
      cache: closed({ enabled: { type: 'boolean' }, price_percent: { type: ['integer', 'null'], description: 'cache_price_usd as a percentage of base_usd (CACHE_PRICE_PERCENT).' } }),
      request_id: requestId,
    }),
    SearchResult: ANSWER_SCHEMAS.SearchResult,
    SearchResponse: ANSWER_SCHEMAS.SearchResponse,
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
