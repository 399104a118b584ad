import { AjvCompiler } from '@fastify/ajv-compiler';
import { canonicalFilters, FILTER_HINTS, FILTER_NAMES, FILTER_SCHEMAS, FilterError, findModel, LIMITS, SEARCH_CONTENTS } from '@svc/contracts';
import type { FilterName, ModelSpec, SafeSearch, SearchContents, SearchFilters } from '@svc/contracts';
import { AppError } from '@svc/errors';
import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';
import { normaliseQuery } from '../cache/cache.key';
import { CACHE_MODES } from '../cache/cache.ticket';
import type { CacheMode } from '../cache/cache.ticket';

export const MAX_QUERY_CHARS = 2000;
export const MAX_MODELS = 10;
export const DEFAULT_MAX_RESULTS = 10;
/** The oldest `cache_max_age_s` accepted: a week, the longest an entry can live (CACHE_TTL_S). */
export const MAX_CACHE_MAX_AGE_S = 604_800;

/** The body as the JSON schema admits it (before trimming and catalog checks). */
export interface SearchBody {
  query: string;
  model?: string;
  models?: string[];
  max_results: number;
  cache: CacheMode;
  cache_max_age_s?: number;
  include_domains?: string[];
  exclude_domains?: string[];
  country?: string;
  language?: string;
  published_after?: string;
  published_before?: string;
  safesearch?: SafeSearch;
  contents?: SearchContents;
  max_chars_per_result?: number;
  max_total_chars?: number;
}

/**
 * The output fields of POST /v1/search: what each result carries besides its snippet, and the
 * budgets on the answer's text (docs/api.md, "Page text and output budgets"). No defaults in
 * the schema: a body without them is left as it was sent (its Idempotency-Key digest too).
 */
export const CONTENTS_SCHEMAS = {
  contents: { type: 'string', enum: SEARCH_CONTENTS },
  max_chars_per_result: { type: 'integer', minimum: LIMITS.searchCharsPerResult.min, maximum: LIMITS.searchCharsPerResult.max },
  max_total_chars: { type: 'integer', minimum: LIMITS.maxTotalChars.min, maximum: LIMITS.maxTotalChars.max },
} as const;

/** POST /v1/search (docs/api.md 10.1): unknown fields rejected, no type coercion. */
export const SEARCH_BODY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['query'],
  properties: {
    query: { type: 'string' },
    model: { type: 'string' },
    models: { type: 'array', minItems: 1, maxItems: MAX_MODELS, items: { type: 'string' } },
    max_results: { type: 'integer', minimum: 1, maximum: 100, default: DEFAULT_MAX_RESULTS },
    cache: { type: 'string', enum: CACHE_MODES, default: 'default' },
    cache_max_age_s: { type: 'integer', minimum: 0, maximum: MAX_CACHE_MAX_AGE_S },
    // The filters, as packages/contracts declares them (docs/api.md, "Filters").
    ...FILTER_SCHEMAS,
    ...CONTENTS_SCHEMAS,
  },
} as const;

/**
 * Fastify's default Ajv removes unknown fields and coerces types; this route needs both
 * off, so it compiles its schema with its own options (defaults still applied).
 */
const buildCompiler = AjvCompiler()({}, { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: true, allErrors: false } });
export const searchValidatorCompiler: FastifySchemaCompiler<unknown> = (route) => buildCompiler(route);

/** A validation failure as one message naming the field (after "body"). */
export function formatSearchBodyErrors(errors: FastifySchemaValidationError[]): Error {
  const first = errors[0];
  if (first === undefined) return new Error('is invalid');
  const field = first.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const params = first.params as Record<string, unknown>;
  if (first.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    return new Error(`has an unknown field "${params.additionalProperty}"`);
  }
  if (first.keyword === 'required' && typeof params.missingProperty === 'string') {
    return new Error(`is missing the field "${params.missingProperty}"`);
  }
  if (field === '') return new Error(first.keyword === 'type' ? 'must be a JSON object' : `${first.message ?? 'is invalid'}`);
  const root = field.split('.')[0] as FilterName;
  if ((FILTER_NAMES as readonly string[]).includes(root)) return new Error(`field ${field} ${FILTER_HINTS[root]}`);
  return new Error(`field ${field} ${first.message ?? 'is invalid'}`);
}

export interface SearchRequest {
  /**
   * The query in its one normal form (normaliseQuery: NFC, trimmed, every run of Unicode
   * whitespace one space, case kept): what every provider receives, and what the result
   * cache's key is made of, so an entry only ever holds the answer to its own text
   * (docs/decisions/0043).
   */
  readonly query: string;
  /** Fallback order: `model` first, then `models`, duplicates removed. */
  readonly models: readonly ModelSpec[];
  readonly maxResults: number;
  /** The result cache: `default` (look up, store), `refresh` (store only), `off` (neither). */
  readonly cache: CacheMode;
  /** The oldest entry accepted, in seconds; null: any live entry. */
  readonly cacheMaxAgeS: number | null;
  /** The filters in canonical form (canonicalFilters), or undefined when none was sent. */
  readonly filters?: SearchFilters | undefined;
  /** What each result carries besides its snippet (`none` when not sent). */
  readonly contents: SearchContents;
  /** The most characters of text (or of all highlights) one result carries, with contents. */
  readonly maxCharsPerResult: number;
  /** The most characters of text the whole answer carries (its results' titles, snippets, text and highlights); null: no budget. */
  readonly maxTotalChars: number | null;
}

/** The rules a schema cannot say: the trimmed query's length, at least one model, every id known; the query in its normal form. */
export function toSearchRequest(body: SearchBody): SearchRequest {
  const trimmed = body.query.trim();
  if (trimmed.length === 0) throw new AppError('invalid_request', 'query must not be empty');
  if (trimmed.length > MAX_QUERY_CHARS) throw new AppError('invalid_request', `query must be at most ${MAX_QUERY_CHARS} characters`);
  const query = normaliseQuery(trimmed);
  const ids: string[] = [];
  if (body.model !== undefined) ids.push(body.model);
  if (body.models !== undefined) ids.push(...body.models);
  if (ids.length === 0) throw new AppError('invalid_request', 'give a model or models');
  const models: ModelSpec[] = [];
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) continue;
    seen.add(id);
    const model = findModel(id);
    if (model === undefined) throw new AppError('unknown_model', `unknown model "${id}"; see GET /v1/models`);
    models.push(model);
  }
  if (models.length > MAX_MODELS) throw new AppError('invalid_request', `at most ${MAX_MODELS} models`);
  let filters: SearchFilters | undefined;
  try {
    filters = canonicalFilters(body);
  } catch (error) {
    if (error instanceof FilterError) throw new AppError('invalid_request', error.message);
    throw error;
  }
  if (body.max_chars_per_result !== undefined && (body.contents ?? 'none') === 'none') {
    throw new AppError('invalid_request', 'max_chars_per_result needs contents "text" or "highlights"');
  }
  return {
    query, models, maxResults: body.max_results, filters, cache: body.cache, cacheMaxAgeS: body.cache_max_age_s ?? null,
    contents: body.contents ?? 'none', maxCharsPerResult: body.max_chars_per_result ?? LIMITS.searchCharsPerResult.default, maxTotalChars: body.max_total_chars ?? null,
  };
}
