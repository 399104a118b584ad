import { idPatternSource } from '@svc/ids';
import type { IdKind } from '@svc/ids';
import { EXTRACT_FORMATS, EXTRACT_OPTIONS, MODEL_KINDS, MODELS, PROVIDERS, SEARCH_CONTENTS, SEARCH_STRATEGIES } from './catalog';
import { FILTER_NAMES } from './filters';
import { LIMIT_RESETS } from './key-record';
import { LIMITS } from './limits';
import { MODEL_STATUSES } from './provider-health';
import { CACHE_STATUSES, REQUEST_KINDS } from './settlement';
import { RESEARCH_ATTEMPT_STATUSES, RESEARCH_METERING, RESEARCH_MODELS, RESEARCH_PROVIDERS, RESEARCH_STATUSES } from './research';

/**
 * The JSON Schemas (2020-12) of the answers that several places describe, written once:
 * the search answer (POST /v1/search's 200), the model list (GET /v1/models), the credits
 * (GET /v1/credits), the API key record and the usage row. The
 * OpenAPI document puts them in its components as they are (tools/openapi), the MCP tool
 * tools take their output schemas from here (`inlineAnswerSchema`), and tests check the
 * SDK's types, the services' answer types and the dashboard (which takes the SDK's types)
 * against them (tools/openapi/test/answer-schemas.spec.ts).
 *
 * A schema names another by `$ref` to `#/components/schemas/<Name>`, the place the OpenAPI
 * document keeps it; `inlineAnswerSchema` replaces those references for a consumer that
 * needs one self-contained schema. Objects are closed (additionalProperties: false): a
 * field added to an answer without being declared here fails the contract tests.
 */
export type AnswerSchema = Readonly<Record<string, unknown>>;

const ref = (name: string): AnswerSchema => ({ $ref: `#/components/schemas/${name}` });
const nullable = (schema: { type: string } & Record<string, unknown>): AnswerSchema => ({ ...schema, type: [schema.type, 'null'] });
const usd = (description: string): AnswerSchema => ({ type: 'number', description });
const timestamp = (description?: string): AnswerSchema => ({ type: 'string', format: 'date-time', ...(description === undefined ? {} : { description }) });
const id = (kind: IdKind, description: string): AnswerSchema => ({ type: 'string', pattern: idPatternSource(kind), description });

/** A request id, as every answer of the public edge carries it. */
export const REQUEST_ID_SCHEMA: AnswerSchema = id('request', 'The same as the x-svc-request-id response header.');

/** An object whose listed fields are all required (but those in `optional`) and whose other fields are refused. */
export function closedObject(properties: Record<string, AnswerSchema>, optional: readonly string[] = [], description?: string): AnswerSchema {
  return {
    type: 'object',
    ...(description === undefined ? {} : { description }),
    required: Object.keys(properties).filter((name) => !optional.includes(name)),
    properties,
    additionalProperties: false,
  };
}

/** The API key record's fields (docs/api.md 9.1): the list, get, create and update answers all carry them. */
export const API_KEY_FIELDS: Readonly<Record<string, AnswerSchema>> = {
  id: id('apiKey', 'The API key id.'),
  name: { type: 'string', maxLength: LIMITS.keyName.max, description: '"" when none was given.' },
  label: { type: 'string', description: 'The masked secret: svc- and the first 4 characters after it, then "…".' },
  limit_usd: nullable({ type: 'number', description: 'Credit limit; null: no limit.' }),
  limit_reset: { enum: [...LIMIT_RESETS, null], description: 'Period after which the limit starts again; null: the limit covers all time.' },
  limit_remaining_usd: nullable({ type: 'number', description: 'max(0, limit_usd - usage_usd); null without a limit.' }),
  usage_usd: usd('Spend in the current period (all time when limit_reset is null).'),
  limit_resets_at: { type: ['string', 'null'], format: 'date-time', description: 'End of the current period; null without a reset.' },
  usage_total_usd: usd('Spend, all time.'),
  expires_at: { type: ['string', 'null'], format: 'date-time', description: 'After it the key gets 401 key_expired; null: never.' },
  disabled: { type: 'boolean', description: 'When true the key gets 401 key_disabled.' },
  created_at: timestamp(),
  updated_at: timestamp(),
  last_used_at: { type: ['string', 'null'], format: 'date-time' },
  allowed_models: {
    type: ['array', 'null'], minItems: LIMITS.allowedModels.min, maxItems: LIMITS.allowedModels.max, items: { type: 'string' },
    description: 'The models the key may search (model ids or `<provider>/*`); null: every model.',
  },
  allowed_ips: {
    type: ['array', 'null'], minItems: LIMITS.allowedIps.min, maxItems: LIMITS.allowedIps.max, items: { type: 'string' },
    description: 'The client addresses (IPv4/IPv6 CIDRs) the key may be used from; null: any.',
  },
};

/** A model's prices (GET /v1/models, and each model of GET /v1/credits/pricing). */
export const MODEL_PRICING_FIELDS: Readonly<Record<string, AnswerSchema>> = {
  base_usd: usd('Price of one search (0 on an extract model: it is priced per URL; 0 on a research model: it is priced per run, usage or credit).'),
  included_results: { type: ['integer', 'null'], description: 'Results covered by base_usd; null when the provider does not price by count.' },
  per_result_usd: usd('Price of each result beyond included_results (0 when not priced by count).'),
  cache_price_usd: { type: ['number', 'null'], description: 'Price of a search answered from the result cache (hit or joined): CACHE_PRICE_PERCENT of base_usd; on an extract model, of one URL served from the cache (CACHE_PRICE_PERCENT of per_url_usd); null when the deployment has no cache (and on research models).' },
  contents_usd: usd('Search models: what a search asking for contents (text or highlights) costs on top of its price; 0 where the provider charges nothing extra.'),
  per_url_usd: usd('Extract models: the price of one URL that came back (a URL that failed is never charged).'),
  url_block: { type: 'integer', minimum: 1, description: 'Extract models: URLs are charged in whole blocks of this many per model call (1: each on its own), as the provider bills them.' },
  // Research models (kind "research"): base_usd and per_result_usd are 0, included_results and cache_price_usd null.
  metering: { enum: [...RESEARCH_METERING], description: 'Research models: per_run (a fixed price per run), usage (the provider\'s reported cost at unit_usd per provider USD), credits (the provider\'s reported credits at unit_usd each).' },
  unit_usd: usd('Research models: the price of one run (per_run), of one USD the provider reports (usage), or of one provider credit (credits).'),
  max_cost_usd: usd('Research models: the most one run can cost (a metered model with its largest budget); a run never costs more than its max_cost_usd either.'),
  min_cap_usd: usd('Research models: the least a run\'s max_cost_usd (what the cap leaves, after a model before it) must be for this model to run; below it the model is skipped.'),
};

/** The fields of MODEL_PRICING_FIELDS only research models have. */
export const RESEARCH_PRICING_FIELDS: readonly string[] = ['metering', 'unit_usd', 'max_cost_usd', 'min_cap_usd'];

/** A research run's fields, in a list and alone (docs/api.md, "Research runs"). */
const RESEARCH_RUN_FIELDS: Readonly<Record<string, AnswerSchema>> = {
  id: id('researchRun', 'The run id.'),
  object: { const: 'research_run' },
  status: { enum: [...RESEARCH_STATUSES], description: 'queued; running; completed, failed or cancelled (settled: cost_usd is final).' },
  input: { type: 'string' },
  models: { type: 'array', items: ref('ResearchModelId'), description: 'The models asked for, in fallback order.' },
  model: { type: ['string', 'null'], description: 'The model that answered; else the one running or next to run; else the last one that failed or was cancelled; null when none ran.' },
  max_cost_usd: usd('The hard cap.'),
  held_usd: usd('What the run holds from the balance now: min(the cap, the most its models can cost) until it is settled, then 0.'),
  cost_usd: { type: ['number', 'null'], description: 'What the run was charged, never above max_cost_usd; null until it is settled.' },
  attempts: { type: 'array', items: ref('ResearchAttempt') },
  error: { type: ['string', 'null'] },
  metadata: { anyOf: [{ type: 'object', additionalProperties: { type: 'string' } }, { type: 'null' }], description: 'The labels given at creation; null without any.' },
  created_at: timestamp(),
  started_at: { type: ['string', 'null'], format: 'date-time' },
  completed_at: { type: ['string', 'null'], format: 'date-time', description: 'When the run was settled.' },
  cancel_requested_at: { type: ['string', 'null'], format: 'date-time' },
  request_id: REQUEST_ID_SCHEMA,
};

/** A search result's fields (POST /v1/search's `results[]`); a fan-out's merged result has them too. */
const SEARCH_RESULT_FIELDS: Readonly<Record<string, AnswerSchema>> = {
  position: { type: 'integer', minimum: 1 },
  title: { type: 'string' },
  url: { type: 'string' },
  snippet: { type: 'string' },
  published_at: { type: ['string', 'null'] },
  score: { type: ['number', 'null'] },
  text: { type: 'string', description: 'With contents "text": the page\'s text, at most max_chars_per_result characters.' },
  highlights: { type: 'array', items: { type: 'string' }, description: 'With contents "highlights": the page\'s most relevant passages, at most max_chars_per_result characters in all.' },
  truncated: { type: 'boolean', description: 'With contents: whether text or highlights were cut (max_chars_per_result, or the answer\'s max_total_chars).' },
};
const SEARCH_RESULT_OPTIONAL = ['text', 'highlights', 'truncated'];

/** The optional fields of MODEL_PRICING_FIELDS: by kind of model. */
const MODEL_PRICING_OPTIONAL = ['contents_usd', 'per_url_usd', 'url_block', ...RESEARCH_PRICING_FIELDS];

/** The schemas, by the name the OpenAPI document gives them. */
export const ANSWER_SCHEMAS = {
  Provider: { enum: [...PROVIDERS] },
  ModelId: { enum: [...MODELS.map((model) => model.id), ...RESEARCH_MODELS.map((model) => model.id)], description: 'A model of the catalog (GET /v1/models).' },
  ModelKind: { enum: [...MODEL_KINDS], description: 'search: a model of POST /v1/search; extract: of POST /v1/extract; research: of POST /v1/research.' },
  SearchContents: { enum: [...SEARCH_CONTENTS], description: 'What a search result carries besides its snippet (POST /v1/search contents).' },
  ExtractFormat: { enum: [...EXTRACT_FORMATS], description: 'The text format of POST /v1/extract.' },
  ExtractOption: { enum: [...EXTRACT_OPTIONS], description: 'An optional field of POST /v1/extract a model may honour: max_age_s (freshness control), query (text ranked or trimmed by relevance).' },
  Attempt: closedObject(
    {
      model: { type: 'string' },
      source: { enum: ['platform', 'byok'], description: 'Whose provider key the attempt used; absent when the provider is not configured.' },
      status: { enum: ['error', 'skipped'] },
      error: { type: 'string', description: 'Short reason, e.g. "provider returned 500".' },
      cost_usd: usd('Only on an attempt that timed out: its base price, which is kept.'),
    },
    ['source', 'cost_usd'],
    'An attempt that did not answer.',
  ),
  SearchResult: closedObject(SEARCH_RESULT_FIELDS, SEARCH_RESULT_OPTIONAL),
  SearchResponse: closedObject({
    request_id: REQUEST_ID_SCHEMA,
    model: ref('ModelId'),
    provider: ref('Provider'),
    source: { enum: ['platform', 'byok'], description: 'Whose provider key served the search.' },
    results: { type: 'array', items: ref('SearchResult') },
    cost_usd: usd('The total charged for this request.'),
    attempts: { type: 'array', items: ref('Attempt'), description: 'The attempts before the one that answered.' },
    latency_ms: { type: 'integer', minimum: 0, description: 'Milliseconds from the request\'s arrival to the answer, rounded.' },
    cache: closedObject({
      status: { enum: [...CACHE_STATUSES], description: 'hit: a stored answer of this model; joined: the answer of an identical search in flight; both cost cache_price_usd. miss: the model answered (and the answer was stored). off: the search asked for no cache, or the deployment has none.' },
      age_s: { type: 'integer', minimum: 0, description: 'Seconds since the answer was stored; 0 on miss and off.' },
    }),
    truncated: { const: true, description: 'Present when max_total_chars cut the last results\' text or dropped them.' },
  }, ['truncated']),
  SearchStrategy: { enum: [...SEARCH_STRATEGIES], description: 'fallback (the default): the models in order, the first answer; fanout: every model at once, the answers merged.' },
  FanoutSource: closedObject({
    model: ref('ModelId'),
    position: { type: 'integer', minimum: 1, description: 'The result\'s position in that model\'s own answer.' },
  }, [], 'A model that returned the result.'),
  FanoutResult: closedObject({
    ...SEARCH_RESULT_FIELDS,
    position: { type: 'integer', minimum: 1, description: 'Its place in the merged list (1, 2, …).' },
    url: { type: 'string', description: 'As the best-ranked source returned it (the one whose title and snippet are kept).' },
    score: { type: 'number', description: 'Its reciprocal rank fusion score: the sum over its sources of 1 / (k + position); the list is ordered by it.' },
    sources: { type: 'array', minItems: 1, items: ref('FanoutSource'), description: 'Every model that returned it (its URL in the same normal form), best-ranked first.' },
  }, SEARCH_RESULT_OPTIONAL, 'A merged result: the best-ranked source\'s fields, and every model that returned it.'),
  FanoutAttempt: closedObject(
    {
      model: { type: 'string' },
      source: { enum: ['platform', 'byok'], description: 'Whose provider key the attempt used; absent when the provider is not configured.' },
      status: { enum: ['success', 'error', 'skipped'], description: 'success: the model answered; error: called, it failed or was cancelled at fanout_wait_ms; skipped: not called.' },
      results: { type: 'integer', minimum: 0, description: 'On success: how many results the model returned (what it is charged for).' },
      cost_usd: usd('What this attempt was charged: its price for the results it returned, a timeout\'s base price, else 0.'),
      error: { type: 'string', description: 'Why it was skipped or failed; absent on success.' },
      cache: closedObject({
        status: { enum: [...CACHE_STATUSES] },
        age_s: { type: 'integer', minimum: 0 },
      }, [], 'On success: how the result cache took part in this model\'s answer.'),
    },
    ['source', 'results', 'error', 'cache'],
    'One model of a fan-out: called or skipped.',
  ),
  FanoutSearchResponse: closedObject({
    request_id: REQUEST_ID_SCHEMA,
    strategy: { const: 'fanout' },
    models: { type: 'array', minItems: 1, items: ref('ModelId'), description: 'The models that answered, in the order asked.' },
    results: { type: 'array', items: ref('FanoutResult'), description: 'The answers merged: each URL once, by reciprocal rank fusion, the filters applied again, at most max_results.' },
    cost_usd: usd('The total charged for this request: the sum of the attempts\' cost_usd.'),
    attempts: { type: 'array', items: ref('FanoutAttempt'), description: 'Every model asked, in the order asked.' },
    duplicates_removed: { type: 'integer', minimum: 0, description: 'Results dropped because another (or the same) model returned the same URL.' },
    latency_ms: { type: 'integer', minimum: 0, description: 'Milliseconds from the request\'s arrival to the answer, rounded.' },
    cache: closedObject({
      status: { enum: [...CACHE_STATUSES], description: 'hit: every answer came from the cache (hit or joined); miss: at least one model was called and its answer stored; off: no cache.' },
      age_s: { type: 'integer', minimum: 0, description: 'On hit: seconds since the oldest answer was stored; else 0.' },
    }),
    truncated: { const: true, description: 'Present when max_total_chars cut the last results\' text or dropped them.' },
  }, ['truncated']),
  SearchAnswer: {
    oneOf: [ref('SearchResponse'), ref('FanoutSearchResponse')],
    description: 'POST /v1/search\'s 200: a fallback search\'s answer (SearchResponse), or a fan-out\'s (FanoutSearchResponse, strategy "fanout").',
  },
  ExtractResult: closedObject({
    url: { type: 'string', description: 'The URL in its normal form (the one the provider was sent).' },
    model: ref('ModelId'),
    provider: ref('Provider'),
    source: { enum: ['platform', 'byok'], description: 'Whose provider key served it.' },
    title: { type: ['string', 'null'] },
    text: { type: 'string', description: 'The page\'s text in the format asked, at most max_chars_per_url characters.' },
    published_at: { type: ['string', 'null'], description: 'RFC 3339 UTC, or null when the provider gives none.' },
    chars: { type: 'integer', minimum: 0, description: 'The length of text, in characters (UTF-16 code units).' },
    truncated: { type: 'boolean', description: 'Whether text was cut (max_chars_per_url, or the answer\'s max_total_chars).' },
    cache: closedObject({
      status: { enum: [...CACHE_STATUSES], description: 'hit: the stored text of this URL and model (cache_price_usd); miss: the model fetched it (and it was stored); off: no cache.' },
      age_s: { type: 'integer', minimum: 0, description: 'Seconds since it was stored; 0 on miss and off.' },
    }),
  }),
  ExtractFailure: closedObject({
    url: { type: 'string', description: 'The URL in its normal form.' },
    error: { type: 'string', description: 'Why the last model tried could not fetch it (short, in the platform\'s words).' },
  }),
  ExtractAttempt: closedObject(
    {
      model: { type: 'string' },
      source: { enum: ['platform', 'byok'], description: 'Whose provider key the attempt used; absent when the provider is not configured.' },
      status: { enum: ['success', 'error', 'skipped'], description: 'success: at least one URL came back; error: called, none came back; skipped: not called.' },
      urls: { type: 'integer', minimum: 0, description: 'URLs this model was asked for (those no model before it fetched).' },
      succeeded: { type: 'integer', minimum: 0 },
      failed: { type: 'integer', minimum: 0 },
      cost_usd: usd('What this attempt was charged: its URLs that came back (cache hits at the cache price).'),
      error: { type: 'string', description: 'Why it was skipped, failed, or did not fetch every URL; absent when every URL came back.' },
    },
    ['source', 'error'],
    'One model called (or skipped) for the URLs still missing.',
  ),
  ExtractResponse: closedObject({
    request_id: REQUEST_ID_SCHEMA,
    results: { type: 'array', items: ref('ExtractResult'), description: 'One per URL that came back, in the order the URLs were sent.' },
    failed: { type: 'array', items: ref('ExtractFailure'), description: 'The URLs no model could fetch.' },
    attempts: { type: 'array', items: ref('ExtractAttempt'), description: 'Every model tried or skipped, in order.' },
    cost_usd: usd('The total charged for this request: the sum of the attempts\' cost_usd.'),
    latency_ms: { type: 'integer', minimum: 0, description: 'Milliseconds from the request\'s arrival to the answer, rounded.' },
    cache: closedObject({
      status: { enum: [...CACHE_STATUSES], description: 'hit: every result came from the cache; miss: at least one was fetched; off: no cache.' },
      age_s: { type: 'integer', minimum: 0, description: 'On hit: seconds since the oldest result was stored; else 0.' },
    }),
    truncated: { type: 'boolean', description: 'Whether any text was cut or a result dropped by max_chars_per_url or max_total_chars.' },
  }),
  ApiKey: closedObject(API_KEY_FIELDS),
  ModelPricing: closedObject(MODEL_PRICING_FIELDS, MODEL_PRICING_OPTIONAL),
  Model: closedObject({
    id: ref('ModelId'),
    kind: ref('ModelKind'),
    provider: ref('Provider'),
    variant: { type: 'string' },
    description: { type: 'string' },
    max_results: { type: 'integer', description: 'Most results the upstream returns (extract models: most URLs one call takes; research models: 0, a run is not priced by count).' },
    pricing: ref('ModelPricing'),
    available: { type: 'boolean', description: 'False when this deployment has no platform key for the provider.' },
    supported_filters: { type: 'array', items: ref('FilterName'), description: 'The search filters this model honours; a search with any other filter skips it (none on extract and research models).' },
    supported_contents: { type: 'array', items: ref('SearchContents'), description: 'Search models: the contents its results can carry; a search asking for another skips it.' },
    supported_formats: { type: 'array', items: ref('ExtractFormat'), description: 'Extract models: the formats it returns; an extract asking for another skips it.' },
    supported_options: { type: 'array', items: ref('ExtractOption'), description: 'Extract models: the optional fields it honours; an extract sending another skips it.' },
    status: ref('ModelStatus'),
    research_rules: closedObject({
      failed: { type: 'string', description: 'What a failed run of this model is charged.' },
      cancelled: { type: 'string', description: 'What a cancelled run of this model is charged.' },
      not_started: { type: 'string', description: 'What a run the provider never started is charged (nothing).' },
    }, [], 'Research models: the rules for a run that did not complete.'),
  }, ['supported_contents', 'supported_formats', 'supported_options', 'research_rules']),
  FilterName: { enum: [...FILTER_NAMES], description: 'A search filter of POST /v1/search.' },
  ModelList: closedObject({ data: { type: 'array', items: ref('Model') }, request_id: REQUEST_ID_SCHEMA }),
  ModelStatus: {
    enum: [...MODEL_STATUSES],
    description: 'operational; degraded (many of its calls failed over the last 5 minutes); unavailable (its provider\'s breaker is open, or no platform key).',
  },
  Credits: closedObject({
    balance_usd: usd('What the account can spend now.'),
    reserved_usd: usd('Held by searches in flight.'),
    total_purchased_usd: usd('Bought with checkout, all time, net of refunds and disputes.'),
    total_spent_usd: usd('Settled search spend, all time.'),
    request_id: REQUEST_ID_SCHEMA,
  }),
  UsageRow: closedObject(
    {
      date: { type: 'string', format: 'date' },
      model: { type: 'string' },
      key_id: id('apiKey', 'The API key.'),
      kind: { enum: [...REQUEST_KINDS], description: 'search, extract or research (group_by=kind).' },
      searches: { type: 'integer', description: 'Requests settled: searches, extracts and research runs (each extract request and each run counts once).' },
      failed_attempts: { type: 'integer' },
      cost_usd: usd('What was charged.'),
      byok_fee_usd: usd("The part of cost_usd charged as BYOK fees (attempts with the account's own provider key)."),
      cache_hits: { type: 'integer', minimum: 0, description: 'Searches answered from the result cache (hit or joined).' },
      cache_saved_usd: usd('What those searches saved against the price of the same answers from the provider.'),
    },
    ['date', 'model', 'key_id', 'kind'],
    'One group; its group field (date, model, key_id or kind) matches group_by.',
  ),
  // Research runs (docs/api.md, "Research runs"; docs/decisions/0062).
  ResearchModelId: { enum: RESEARCH_MODELS.map((model) => model.id), description: 'A research model (GET /v1/models, kind "research").' },
  ResearchAttempt: closedObject({
    model: ref('ResearchModelId'),
    provider: { enum: [...RESEARCH_PROVIDERS] },
    status: { enum: [...RESEARCH_ATTEMPT_STATUSES], description: 'pending: waits its turn; skipped: not run (error says why); running; completed; failed; cancelled.' },
    error: { type: ['string', 'null'], description: 'Why it was skipped or failed, or how it was cancelled; null otherwise.' },
    cost_usd: { type: ['number', 'null'], description: 'What this attempt was charged; null until it ended.' },
  }),
  ResearchSource: closedObject({ url: { type: 'string' }, title: { type: ['string', 'null'] } }),
  ResearchRunSummary: closedObject(RESEARCH_RUN_FIELDS, ['request_id'], 'A research run without its output (GET /v1/research).'),
  ResearchRun: closedObject({
    ...RESEARCH_RUN_FIELDS,
    output: {
      anyOf: [
        closedObject({
          text: { type: ['string', 'null'], description: 'The answer as text.' },
          structured: { description: 'The answer in the shape of output_schema (null without one).' },
        }),
        { type: 'null' },
      ],
      description: 'Null until the run completed (and on a failed or cancelled run).',
    },
    sources: { type: 'array', items: ref('ResearchSource'), description: 'The pages the answer cites.' },
  }, ['request_id'], 'A research run (POST /v1/research, GET /v1/research/{id}, the cancel answer, and the data of research.completed and research.failed).'),
  ResearchRunList: closedObject({
    data: { type: 'array', items: ref('ResearchRunSummary') },
    next_cursor: { type: ['string', 'null'] },
    request_id: REQUEST_ID_SCHEMA,
  }),
} as const satisfies Record<string, AnswerSchema>;

export type AnswerSchemaName = keyof typeof ANSWER_SCHEMAS;

/**
 * One schema with every `$ref` to another answer schema replaced by that schema, for a
 * consumer that takes a single self-contained schema (the MCP tool's output schema).
 */
export function inlineAnswerSchema(schema: AnswerSchema): AnswerSchema {
  const walk = (value: unknown, depth: number): unknown => {
    if (depth > 20) throw new Error('answer schema too deep');
    if (Array.isArray(value)) return value.map((item) => walk(item, depth + 1));
    if (typeof value !== 'object' || value === null) return value;
    const object = value as Record<string, unknown>;
    const target = typeof object.$ref === 'string' ? /^#\/components\/schemas\/(\w+)$/.exec(object.$ref)?.[1] : undefined;
    if (target !== undefined) {
      if (!(target in ANSWER_SCHEMAS)) throw new Error(`${String(object.$ref)} is not an answer schema`);
      return walk(ANSWER_SCHEMAS[target as AnswerSchemaName], depth + 1);
    }
    return Object.fromEntries(Object.entries(object).map(([key, item]) => [key, walk(item, depth + 1)]));
  };
  return walk(schema, 0) as AnswerSchema;
}
