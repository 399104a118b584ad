import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { ApiPropertyOptional, DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { httpStatusOf } from '@svc/errors';
import { CACHE_STATUSES, FILTER_DESCRIPTIONS, FILTER_NAMES, LIMITS, REQUEST_ID_SCHEMA } from '@svc/contracts';
import { PageQueryDto } from '@svc/http-edge';
import type { ErrorCode } from '@svc/errors';
import {
  ConfirmSignupDto, ConsentDto, DASHBOARD_PAGES, KeyBodyDto, ListQueryDto, LoginDto, ManagementKeyCreateDto, ManagementKeyUpdateDto, NotificationSettingDto, PasswordResetDto,
  PasswordResetRequestDto, PutProviderKeyDto, SignupDto,
} from '@svc/account-admin';
import { AutoTopupSettingsDto, AutoTopupSetupDto, BillingSettingsDto, CheckoutBodyDto, CreateEndpointDto, CreateResearchDto, DayRangeQueryDto, EventsQueryDto, ResearchListQueryDto, UpdateEndpointDto, UsageQueryDto } from '@svc/billing';
import { EXTRACT_BODY_SCHEMA, MAX_QUERY_CHARS, SEARCH_BODY_SCHEMA } from '@svc/search-gateway';
import { AuditLogQueryDto } from '@svc/http-edge';
import { OPERATIONS } from './operations';
import type { Access, HeaderName, Operation } from './operations';
import { componentSchemas } from './schemas';
import type { Schema } from './schemas';

/** The document's version: the platform's. */
const VERSION = '0.1.0';

/**
 * The list query of @svc/http-edge is shared by every service, the gateway included; its
 * decorators are applied here rather than in that package, so that no service loads
 * @nestjs/swagger for it at run time. Subclasses (ListQueryDto) inherit them.
 */
// Subclasses with properties of their own (EventsQueryDto, AuditLogQueryDto) copied their parent's
// properties when they were declared, before these ran: they get them here too.
for (const query of [PageQueryDto, EventsQueryDto, AuditLogQueryDto, ResearchListQueryDto]) {
  ApiPropertyOptional({ type: 'integer', minimum: LIMITS.pageSize.min, maximum: LIMITS.pageSize.max, default: LIMITS.pageSize.default, description: 'Page size, written in digits.' })(query.prototype, 'limit');
  ApiPropertyOptional({ type: 'string', minLength: 1, description: 'The next_cursor of the previous page, unchanged.' })(query.prototype, 'cursor');
}

/**
 * The class-validator DTOs of the control plane, by the component name they get. Their
 * schemas come from their @ApiProperty decorators, read by @nestjs/swagger.
 */
export const DTO_MODELS: Readonly<Record<string, new () => object>> = {
  KeyBody: KeyBodyDto,
  ListQuery: ListQueryDto,
  AuditLogQuery: AuditLogQueryDto,
  UsageQuery: UsageQueryDto,
  DayRangeQuery: DayRangeQueryDto,
  CheckoutBody: CheckoutBodyDto,
  SignupBody: SignupDto,
  ConfirmSignupBody: ConfirmSignupDto,
  LoginBody: LoginDto,
  PasswordResetRequestBody: PasswordResetRequestDto,
  PasswordResetBody: PasswordResetDto,
  NotificationSettingBody: NotificationSettingDto,
  ManagementKeyCreateBody: ManagementKeyCreateDto,
  ManagementKeyUpdateBody: ManagementKeyUpdateDto,
  ProviderKeyBody: PutProviderKeyDto,
  ConsentBody: ConsentDto,
  EventsQuery: EventsQueryDto,
  WebhookEndpointCreateBody: CreateEndpointDto,
  WebhookEndpointUpdateBody: UpdateEndpointDto,
  BillingSettingsBody: BillingSettingsDto,
  AutoTopupSettingsBody: AutoTopupSettingsDto,
  AutoTopupSetupBody: AutoTopupSetupDto,
  ResearchBody: CreateResearchDto,
  ResearchListQuery: ResearchListQueryDto,
};

/** A nested DTO's $ref names its class; the document names it by its DTO_MODELS key. */
function renameRefs(schema: unknown, names: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(schema)) return schema.map((item) => renameRefs(item, names));
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    const target = key === '$ref' && typeof value === 'string' ? names.get(value.replace('#/components/schemas/', '')) : undefined;
    out[key] = target === undefined ? renameRefs(value, names) : `#/components/schemas/${target}`;
  }
  return out;
}

@Module({})
class DocumentModule {}

/** The DTOs' schemas as @nestjs/swagger writes them for OpenAPI 3.1 (no Nest routes are involved). */
async function dtoSchemas(): Promise<Record<string, Schema>> {
  const app = await NestFactory.create(DocumentModule, new FastifyAdapter(), { logger: false, abortOnError: false });
  try {
    const config = new DocumentBuilder().setOpenAPIVersion('3.1.0').setTitle('dto').setVersion(VERSION).build();
    const document = SwaggerModule.createDocument(app, config, { extraModels: Object.values(DTO_MODELS) });
    const produced = (document.components?.schemas ?? {}) as Record<string, Schema>;
    const out: Record<string, Schema> = {};
    const classNames = new Map(Object.entries(DTO_MODELS).map(([name, model]) => [model.name, name]));
    for (const [name, model] of Object.entries(DTO_MODELS)) {
      const schema = produced[model.name];
      if (schema === undefined) throw new Error(`@nestjs/swagger produced no schema for ${model.name}`);
      // The validation pipe refuses unknown fields (and the lists and /v1/usage unknown query parameters).
      out[name] = { ...(renameRefs(schema, classNames) as Schema), additionalProperties: false };
    }
    return out;
  } finally {
    await app.close();
  }
}

/** The gateway's own JSON schema of the search body, with what its handler checks beyond it. */
function searchBodySchema(): Schema {
  const copy = JSON.parse(JSON.stringify(SEARCH_BODY_SCHEMA)) as Schema & { properties: Record<string, Schema> };
  copy.description = `At least one of model and models. query is 1..${MAX_QUERY_CHARS} characters after trimming; every model id must exist (else 400 unknown_model).`;
  copy.properties.query = { ...copy.properties.query, examples: ['rust async runtimes'] };
  copy.properties.model = { ...copy.properties.model, description: 'A model id (GET /v1/models), tried first.', examples: ['exa/fast'] };
  copy.properties.models = { ...copy.properties.models, description: 'Model ids in fallback order (duplicates dropped).', examples: [['brave/web', 'tavily/basic']] };
  copy.properties.max_results = { ...copy.properties.max_results, description: 'Capped per model at its max_results.' };
  copy.properties.cache = { ...copy.properties.cache, description: 'The shared result cache: default (answer from a stored answer of the same model, query, filters and at least as many results, at the model\'s cache_price_usd; else call the model and store its answer), refresh (call the model, store its answer), off (neither).' };
  copy.properties.cache_max_age_s = { ...copy.properties.cache_max_age_s, description: 'The oldest stored answer accepted, in seconds; default: any the cache holds (entries live an hour, news models 10 minutes, by default).' };
  for (const name of FILTER_NAMES) {
    copy.properties[name] = { ...copy.properties[name], description: `${FILTER_DESCRIPTIONS[name]} A model that cannot honour it is skipped (400 unsupported_filter when every model is); see supported_filters in GET /v1/models.` };
  }
  copy.properties.contents = { ...copy.properties.contents, description: 'What each result carries besides its snippet: none (default), text (the page\'s text) or highlights (its most relevant passages). A model that cannot return them is skipped (400 unsupported_option when every model is); see supported_contents in GET /v1/models.' };
  copy.properties.max_chars_per_result = { ...copy.properties.max_chars_per_result, description: `With contents: the most characters of text, or of all highlights, per result (default ${LIMITS.searchCharsPerResult.default}). Without contents: 400.` };
  copy.properties.max_total_chars = { ...copy.properties.max_total_chars, description: 'The most characters of text in the whole answer (its results\' titles, snippets, text and highlights): the last results are cut or dropped, and the answer says truncated: true.' };
  copy.properties.strategy = { ...copy.properties.strategy, description: `fallback (default): the models in order, the first answer (SearchResponse). fanout: ${LIMITS.fanoutModels.min} to ${LIMITS.fanoutModels.max} models (model and models together) called at once, each that passes its checks admitted and charged for the results it returned; their results merged by reciprocal rank fusion, each URL once (FanoutSearchResponse).` };
  copy.properties.fanout_wait_ms = { ...copy.properties.fanout_wait_ms, description: `With strategy fanout: how long to wait for the models once called (default: the deployment's FANOUT_WAIT_MS, ${LIMITS.fanoutWaitMs.default}); a model still running then is cancelled, its attempt a timeout that keeps its base price. Without fanout: 400.` };
  copy.properties.max_cost_usd = { ...copy.properties.max_cost_usd, description: MAX_COST_DESCRIPTION };
  return copy;
}

/** max_cost_usd, on a search and an extract. */
const MAX_COST_DESCRIPTION = 'The most this request may cost, in USD (at most 6 decimals). A model whose most possible cost would take the request past it (with what earlier attempts kept, or the fan-out\'s models before it reserved) is skipped with the reason; when none can run: 402 max_cost_exceeded, nothing charged. Never charged above it.';

/** The gateway's own JSON schema of the extract body, with what its handler checks beyond it. */
function extractBodySchema(): Schema {
  const copy = JSON.parse(JSON.stringify(EXTRACT_BODY_SCHEMA)) as Schema & { properties: Record<string, Schema> };
  copy.description = 'At least one of model and models (extract models: GET /v1/models with kind extract; another id is 400 unknown_model). Each URL is taken in its normal form (scheme and host in lower case, no fragment); the same URL twice is fetched once.';
  copy.properties.urls = { ...copy.properties.urls, description: 'http or https URLs without a user or password.', examples: [['https://example.com/article']] };
  copy.properties.model = { ...copy.properties.model, description: 'An extract model id, tried first.', examples: ['exa/contents'] };
  copy.properties.models = { ...copy.properties.models, description: 'Extract model ids in fallback order: a URL the first cannot fetch is tried at the next.', examples: [['exa/contents', 'tavily/extract']] };
  copy.properties.format = { ...copy.properties.format, description: 'The text format; a model that cannot return it is skipped (supported_formats).' };
  copy.properties.max_chars_per_url = { ...copy.properties.max_chars_per_url, description: 'The most characters of text per page; longer pages are cut (truncated: true).' };
  copy.properties.query = { ...copy.properties.query, description: `1..${LIMITS.extractQuery.max} characters after trimming: rank or trim each page's text by relevance to it; a model that cannot is skipped (supported_options).` };
  copy.properties.max_age_s = { ...copy.properties.max_age_s, description: 'Accept provider-cached content at most this many seconds old (0: fetch live); a model without freshness control is skipped (supported_options). Also bounds the result cache.' };
  copy.properties.max_total_chars = { ...copy.properties.max_total_chars, description: 'The most characters of text in the whole answer (its results\' titles and text): the last results are cut or dropped (still charged: they were fetched), and the answer says truncated: true.' };
  copy.properties.cache = { ...copy.properties.cache, description: 'The shared result cache, per URL and model: default (a page stored for the same model, URL, format and query, at the model\'s cache_price_usd per URL; the others fetched and stored), refresh (fetch and store), off (neither).' };
  copy.properties.cache_max_age_s = { ...copy.properties.cache_max_age_s, description: 'The oldest stored page accepted, in seconds.' };
  copy.properties.max_cost_usd = { ...copy.properties.max_cost_usd, description: MAX_COST_DESCRIPTION };
  return copy;
}

const HEADER_NAMES: Readonly<Record<HeaderName | 'RequestId', string>> = {
  RequestId: 'x-svc-request-id',
  RateLimitLimit: 'x-ratelimit-limit',
  RateLimitRemaining: 'x-ratelimit-remaining',
  Cache: 'x-svc-cache',
  RetryAfter: 'Retry-After',
  SetCookie: 'Set-Cookie',
  WwwAuthenticate: 'WWW-Authenticate',
  ServerTiming: 'Server-Timing',
};

const HEADERS: Readonly<Record<HeaderName | 'RequestId', Schema>> = {
  RequestId: { description: 'The request id, on every response (the first request\'s on an idempotent repeat). Quote it to support.', schema: { type: 'string', pattern: REQUEST_ID_SCHEMA.pattern as string } },
  RateLimitLimit: { description: 'Searches allowed per second for this API key (RATE_LIMIT_PER_SECOND).', schema: { type: 'integer', minimum: 0 } },
  RateLimitRemaining: { description: "Whole searches left in the key's burst right after this one.", schema: { type: 'integer', minimum: 0 } },
  Cache: { description: 'The result cache\'s part in the answer (the body\'s cache.status): hit, joined, miss or off.', schema: { enum: [...CACHE_STATUSES] } },
  RetryAfter: { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 1 } },
  ServerTiming: { description: 'W3C Server-Timing: `gateway;dur=<ms>, upstream;dur=<ms>`. upstream is the time at least one provider call of this search was in flight; gateway the rest (the platform\'s own time). On every answer of a search that reached the search.', schema: { type: 'string', pattern: '^gateway;dur=[0-9.]+, upstream;dur=[0-9.]+$' } },
  SetCookie: { description: 'The dashboard session cookie svc_session (HttpOnly, SameSite=Strict, Secure outside the local stack); cleared on logout.', schema: { type: 'string' } },
  WwwAuthenticate: {
    description: 'On every 401 (RFC 6750): `Bearer`, or `Bearer error="invalid_token"` when the request carried an Authorization header.',
    required: true,
    schema: { type: 'string', pattern: '^Bearer( error="invalid_token")?$' },
  },
};

function security(access: Access): Record<string, string[]>[] {
  switch (access) {
    case 'none':
    case 'stripe':
      return [];
    case 'api':
      return [{ apiKey: [] }];
    case 'management':
      return [{ managementKey: [] }];
    case 'either':
      return [{ apiKey: [] }, { managementKey: [] }];
    case 'session':
      return [{ session: [] }];
    case 'session+csrf':
      return [{ session: [], csrfToken: [] }];
    default: {
      const unreachable: never = access;
      return unreachable;
    }
  }
}

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

function headersOf(names: readonly HeaderName[] = []): Record<string, Schema> {
  const out: Record<string, Schema> = { [HEADER_NAMES.RequestId]: { $ref: '#/components/headers/RequestId' } };
  for (const name of names) out[HEADER_NAMES[name]] = { $ref: `#/components/headers/${name}` };
  return out;
}

/** The error responses of an operation: one per status, its `code` limited to the operation's codes of that status. */
function errorResponses(op: Operation): Record<string, Schema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of op.errors) {
    const status = httpStatusOf(code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, Schema> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    out[String(status)] = {
      description: codes.join(', '),
      // RFC 6750: every 401 names the scheme to authenticate with.
      headers: headersOf([...(op.errorHeaders?.[status] ?? []), ...(status === 401 ? (['WwwAuthenticate'] as const) : [])]),
      content: {
        'application/json': {
          schema: { allOf: [ref('ErrorResponse')], properties: { error: { properties: { code: { enum: codes } } } } },
        },
      },
    };
  }
  return out;
}

function pathParameter(name: string, path: string): Schema {
  if (name === 'id' && path.includes('/oauth/requests/')) {
    return { name, in: 'path', required: true, description: "The authorization request id (oar_...) from the consent page's URL; one decided or expired is 404 not_found.", schema: { type: 'string' } };
  }
  if (name === 'id' && path.includes('/connected-apps/')) {
    return { name, in: 'path', required: true, description: 'The connected app (grant) id, ogr_...; one of another account is 404 not_found.', schema: { type: 'string' } };
  }
  switch (name) {
    case 'provider':
      return { name, in: 'path', required: true, description: 'brave, exa or tavily; another name is 400 unknown_provider.', schema: { type: 'string' } };
    case 'id':
      return { name, in: 'path', required: true, description: 'The id of the key, event or webhook endpoint; one that is not this account\'s is 404 not_found.', schema: { type: 'string' } };
    case 'delivery':
      return { name, in: 'path', required: true, description: "The delivery id (whd_…); one that is not this endpoint's is 404 not_found.", schema: { type: 'string' } };
    case 'page':
      return { name, in: 'path', required: true, description: "A page of the web app; another name is the edge's 404 not_found.", schema: { enum: [...DASHBOARD_PAGES] } };
    case 'file':
      return { name, in: 'path', required: true, description: 'A file name the build wrote, as the page links it; another is 404 not_found.', schema: { type: 'string' } };
    case 'event_type':
      return { name, in: 'path', required: true, description: 'An alert event type; another is 400 invalid_request.', schema: { type: 'string' } };
    default:
      throw new Error(`no description of the path parameter ${name}`);
  }
}

function parameters(op: Operation, schemas: Record<string, Schema>): Schema[] {
  const out: Schema[] = [];
  for (const match of op.path.matchAll(/\{([a-z_]+)\}/g)) {
    const name = match[1] ?? '';
    out.push(pathParameter(name, op.path));
  }
  if (op.query !== undefined) {
    const query = schemas[op.query] as { properties?: Record<string, Schema>; required?: string[] } | undefined;
    if (query?.properties === undefined) throw new Error(`no query schema ${op.query}`);
    for (const [name, schema] of Object.entries(query.properties)) {
      const { description, ...rest } = schema;
      out.push({ name, in: 'query', required: query.required?.includes(name) ?? false, ...(description === undefined ? {} : { description }), schema: rest });
    }
  }
  for (const header of op.headerParameters ?? []) out.push({ $ref: `#/components/parameters/${header}` });
  return out;
}

function operationObject(op: Operation, schemas: Record<string, Schema>): Schema {
  const contentTypes = op.success.contentType === undefined ? ['application/json'] : typeof op.success.contentType === 'string' ? [op.success.contentType] : op.success.contentType;
  const successSchema = op.success.schema === undefined ? { type: 'string' } : ref(op.success.schema);
  const successContent =
    op.success.schema === undefined && op.success.contentType === undefined
      ? {}
      : { content: Object.fromEntries(contentTypes.map((type) => [type, { schema: successSchema }])) };
  const responses: Record<string, Schema> = {
    [String(op.success.status)]: { description: op.success.description, headers: headersOf(op.success.headers), ...successContent },
  };
  if (op.alsoAnswers !== undefined) {
    responses[String(op.alsoAnswers.status)] = { description: op.alsoAnswers.description, headers: headersOf(), content: { 'application/json': { schema: ref(op.alsoAnswers.schema) } } };
  }
  Object.assign(responses, errorResponses(op));
  const params = parameters(op, schemas);
  return {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    ...(op.description === undefined ? {} : { description: op.description }),
    security: security(op.access),
    ...(params.length === 0 ? {} : { parameters: params }),
    ...(op.body === undefined
      ? {}
      : { requestBody: { required: op.body.optional !== true, content: { [op.body.contentType ?? 'application/json']: { schema: ref(op.body.schema) } } } }),
    responses,
    'x-served-by': op.servedBy,
  };
}

const DESCRIPTION = [
  'Web search from Brave, Exa and Tavily behind one API, paid from prepaid USD credits.',
  '',
  '- Every response carries `x-svc-request-id`; every JSON body the API writes carries the same id as `request_id` (inside `error` on an error body).',
  '- An error body is `{"error": {"code", "message", "request_id"}}`, plus `needed_usd` on 402s and `attempts` on `all_providers_failed` and `max_cost_exceeded`. Branch on the status and `code`, never on `message`.',
  '- An unknown path is 404 `not_found`; a known path with another method is 405 with `Allow` and code `invalid_request`; both come before any key check. A 500 is always `internal` with the message `internal error`.',
  '- Requests refused before any handler get the same error body with code `invalid_request`: a malformed query string or path (400), a path segment over 256 characters (414), a body over the limit (413), headers over 16 KiB (431), a request not received within the timeout (408).',
  '- Money is a JSON number of USD, exact to 6 decimals. Timestamps are RFC 3339 UTC with milliseconds.',
  '- Request bodies are JSON objects; an unknown field is 400 `invalid_request` naming it.',
].join('\n');

/** The OpenAPI 3.1 document of the public edge. */
export async function buildOpenApiDocument(): Promise<Record<string, unknown>> {
  const schemas: Record<string, Schema> = { ...componentSchemas(), ...(await dtoSchemas()), SearchBody: searchBodySchema(), ExtractBody: extractBodySchema() };
  const paths: Record<string, Record<string, Schema>> = {};
  for (const op of OPERATIONS) {
    const item = (paths[op.path] ??= {});
    item[op.method] = operationObject(op, schemas);
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Search gateway API', version: VERSION, description: DESCRIPTION },
    servers: [{ url: '/', description: 'The public edge (the gateway) that serves this document' }],
    tags: [
      { name: 'catalog', description: 'Models and prices (public)' },
      { name: 'search', description: 'Web search (API key)' },
      { name: 'research', description: 'Research runs with a hard cap: created with an API key, read and cancelled with either key' },
      { name: 'credits', description: 'Balance and purchases' },
      { name: 'usage', description: 'Searches and spend' },
      { name: 'keys', description: 'API keys (management key)' },
      { name: 'provider-keys', description: "The account's own provider keys (management key)" },
      { name: 'webhooks', description: "The account's events, signed webhooks and billing settings (management key)" },
      { name: 'audit', description: "The account's audit log: who changed what (management key)" },
      { name: 'dashboard', description: 'The dashboard and its session API' },
      { name: 'oauth', description: 'OAuth 2.1 for chat-app connectors on /mcp/oauth (docs/mcp.md)' },
      { name: 'meta', description: 'Health and this document' },
    ],
    paths,
    components: {
      schemas,
      headers: HEADERS,
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: 'Makes the search safe to retry: a repeat with the same key from the same API key within 24 hours returns the first outcome (same status, body and request id) and charges nothing more; the same key with another body is 400.',
          schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
        },
        StripeSignature: {
          name: 'Stripe-Signature',
          in: 'header',
          required: true,
          description: "Stripe's signature of the exact body bytes (tolerance 300 s); missing, wrong or stale is 400 invalid_request.",
          schema: { type: 'string' },
        },
      },
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', bearerFormat: 'svc-…', description: 'An API key: `Authorization: Bearer svc-…`. Searches; reads credits, usage and itself.' },
        managementKey: { type: 'http', scheme: 'bearer', bearerFormat: 'svc-mgmt-…', description: 'A management key: `Authorization: Bearer svc-mgmt-…`. Manages keys and provider keys, buys credits; cannot search.' },
        session: { type: 'apiKey', in: 'cookie', name: 'svc_session', description: 'The dashboard session cookie set by signup and login.' },
        csrfToken: { type: 'apiKey', in: 'header', name: 'x-csrf-token', description: 'The csrf_token of signup or login; needed on every mutating dashboard call.' },
      },
    },
  };
}
