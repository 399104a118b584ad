import { EXTRACT_FORMATS, findExtractModel, LIMITS } from '@svc/contracts';
import type { ExtractFormat, ExtractModelSpec } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { normaliseQuery } from '../cache/cache.key';
import { CACHE_MODES } from '../cache/cache.ticket';
import type { CacheMode } from '../cache/cache.ticket';
import { normaliseUrl } from '../providers';
import { MAX_CACHE_MAX_AGE_S, MAX_MODELS } from './search.schema';

/** The body as the JSON schema admits it (before the URLs' normal form and the catalog checks). */
export interface ExtractBody {
  urls: string[];
  model?: string;
  models?: string[];
  format: ExtractFormat;
  max_chars_per_url: number;
  query?: string;
  max_age_s?: number;
  max_total_chars?: number;
  cache: CacheMode;
  cache_max_age_s?: number;
}

/**
 * POST /v1/extract (docs/api.md, "Extract"): unknown fields rejected, no type coercion, bounds
 * from LIMITS. Compiled with the search body's compiler (searchValidatorCompiler): the same
 * Ajv options, defaults applied.
 */
export const EXTRACT_BODY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['urls'],
  properties: {
    urls: {
      type: 'array', minItems: LIMITS.extractUrls.min, maxItems: LIMITS.extractUrls.max,
      items: { type: 'string', minLength: 1, maxLength: LIMITS.extractUrlChars.max },
    },
    model: { type: 'string' },
    models: { type: 'array', minItems: 1, maxItems: MAX_MODELS, items: { type: 'string' } },
    format: { type: 'string', enum: EXTRACT_FORMATS, default: 'text' },
    max_chars_per_url: { type: 'integer', minimum: LIMITS.extractCharsPerUrl.min, maximum: LIMITS.extractCharsPerUrl.max, default: LIMITS.extractCharsPerUrl.default },
    query: { type: 'string' },
    max_age_s: { type: 'integer', minimum: LIMITS.extractMaxAgeS.min, maximum: LIMITS.extractMaxAgeS.max },
    max_total_chars: { type: 'integer', minimum: LIMITS.maxTotalChars.min, maximum: LIMITS.maxTotalChars.max },
    cache: { type: 'string', enum: CACHE_MODES, default: 'default' },
    cache_max_age_s: { type: 'integer', minimum: 0, maximum: MAX_CACHE_MAX_AGE_S },
  },
} as const;

/** An extract as the attempts take it (docs/decisions/0058). */
export interface ExtractRequest {
  readonly kind: 'extract';
  /**
   * The URLs in their one normal form (normaliseUrl), each once, in the order sent: what every
   * provider receives, what the result cache's key is made of, and what the answer names.
   */
  readonly urls: readonly string[];
  /** Fallback order per URL: `model` first, then `models`, duplicates removed. */
  readonly models: readonly ExtractModelSpec[];
  readonly format: ExtractFormat;
  readonly maxCharsPerUrl: number;
  /** Rank or trim each page's text by relevance to it (its normal form, as a search's query); null: none. */
  readonly query: string | null;
  /** Accept provider-cached content at most this many seconds old (0: live); null: the provider's default. */
  readonly maxAgeS: number | null;
  /** The most characters of text the whole answer carries (its results' titles and text); null: no budget. */
  readonly maxTotalChars: number | null;
  readonly cache: CacheMode;
  /** The oldest stored page accepted, in seconds (cache_max_age_s, and max_age_s when sent: the smaller); null: any live entry. */
  readonly cacheMaxAgeS: number | null;
}

/** The rules a schema cannot say: each URL's normal form, the query's length after trimming, at least one model, every id an extract model. */
export function toExtractRequest(body: ExtractBody): ExtractRequest {
  const urls: string[] = [];
  const seen = new Set<string>();
  body.urls.forEach((raw, index) => {
    const url = normaliseUrl(raw);
    if (url === null) throw new AppError('invalid_request', `urls.${index} must be an http or https URL without a user or password, control characters or lone surrogates`);
    if (url.length > LIMITS.extractUrlChars.max) throw new AppError('invalid_request', `urls.${index} is longer than ${LIMITS.extractUrlChars.max} characters in its normal form`);
    if (seen.has(url)) return;
    seen.add(url);
    urls.push(url);
  });
  let query: string | null = null;
  if (body.query !== undefined) {
    const trimmed = body.query.trim();
    if (trimmed.length < LIMITS.extractQuery.min) throw new AppError('invalid_request', 'query must not be empty');
    if (trimmed.length > LIMITS.extractQuery.max) throw new AppError('invalid_request', `query must be at most ${LIMITS.extractQuery.max} characters`);
    query = normaliseQuery(trimmed);
  }
  const ids: string[] = [];
  if (body.model !== undefined) ids.push(body.model);
  if (body.models !== undefined) ids.push(...body.models);
  if (ids.length === 0) throw new AppError('invalid_request', 'give a model or models');
  const models: ExtractModelSpec[] = [];
  const known = new Set<string>();
  for (const id of ids) {
    if (known.has(id)) continue;
    known.add(id);
    const model = findExtractModel(id);
    if (model === undefined) throw new AppError('unknown_model', `unknown extract model "${id}"; see GET /v1/models (kind extract)`);
    models.push(model);
  }
  const maxAgeS = body.max_age_s ?? null;
  const cacheMaxAgeS = body.cache_max_age_s ?? null;
  return {
    kind: 'extract', urls, models, format: body.format, maxCharsPerUrl: body.max_chars_per_url, query, maxAgeS,
    maxTotalChars: body.max_total_chars ?? null, cache: body.cache,
    cacheMaxAgeS: maxAgeS === null ? cacheMaxAgeS : cacheMaxAgeS === null ? maxAgeS : Math.min(maxAgeS, cacheMaxAgeS),
  };
}
