import { accepts } from './accepted-keys';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { resultsFor } from './results';
import type { ResultConstraints } from './results';
import { endpoint as simEndpoint, registerProviderApi } from './simulate';
import type { FailureKind, ProviderSpec, SimContext, SimReply, Validation } from './simulate';

/** Brave Search API: GET /res/v1/web/search and /res/v1/news/search. */

type Endpoint = 'web' | 'news';

interface BraveParams {
  readonly endpoint: Endpoint;
  readonly count: number;
  readonly offset: number;
  readonly constraints: ResultConstraints;
}

const DAY_MS = 86_400_000;
const RELATIVE_DAYS: Readonly<Record<string, number>> = { pd: 1, pw: 7, pm: 31, py: 365 };

/** Brave's freshness as a time range: pd|pw|pm|py back from now, or YYYY-MM-DDtoYYYY-MM-DD (whole days). */
function freshnessRange(freshness: string): ResultConstraints {
  const days = RELATIVE_DAYS[freshness];
  if (days !== undefined) return { fromMs: Date.now() - days * DAY_MS, toMs: Date.now() };
  const [from, to] = freshness.split('to');
  return { fromMs: Date.parse(`${from}T00:00:00Z`), toMs: Date.parse(`${to}T00:00:00Z`) + DAY_MS - 1000 };
}

const COUNT_CAP: Record<Endpoint, number> = { web: 20, news: 50 };
const DEFAULT_COUNT = 20;

function errorBody(status: number, code: string, detail: string, meta?: Record<string, unknown>): SimReply {
  return {
    status,
    body: {
      type: 'ErrorResponse',
      error: { id: randomUUID(), status, code, detail, ...(meta === undefined ? {} : { meta }) },
      time: Math.floor(Date.now() / 1000),
    },
  };
}

function validationError(location: string, message: string, input: unknown): SimReply {
  return errorBody(422, 'VALIDATION', 'Unable to validate request parameter(s)', {
    errors: [{ type: 'value_error', loc: ['query', location], msg: message, input: input ?? null }],
  });
}

function rateMeta(component: string): Record<string, unknown> {
  return { plan: 'Free', rate_limit: 50, rate_current: 51, quota_limit: 2000, quota_current: 2000, component };
}

function failure(kind: FailureKind, detail: string): SimReply {
  switch (kind) {
    case 'badkey':
      return errorBody(422, 'SUBSCRIPTION_TOKEN_INVALID', 'The provided subscription token is invalid.');
    case 'error500':
      return errorBody(500, 'INTERNAL_ERROR', 'An internal error occurred.');
    case 'error429':
      return { ...errorBody(429, 'RATE_LIMITED', 'Request rate limit exceeded for plan.', rateMeta('rate_limiter')), headers: { 'x-ratelimit-remaining': '0, 1000' } };
    case 'quota':
      return errorBody(429, 'QUOTA_LIMITED', 'Request quota limit exceeded for plan.', rateMeta('quota_limiter'));
    case 'directive':
      return validationError('q', detail, null);
  }
}

function single(value: unknown): string | undefined {
  if (Array.isArray(value)) return single(value[value.length - 1]);
  return typeof value === 'string' ? value : undefined;
}

function intParam(raw: string | undefined, name: string, min: number, max: number, fallback: number): number | SimReply {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    return validationError(name, `Input should be less than or equal to ${max} and greater than or equal to ${min}`, raw);
  }
  return Number(raw);
}

function validate(endpoint: Endpoint, request: FastifyRequest): Validation<BraveParams> {
  const query = (request.query ?? {}) as Record<string, unknown>;
  const q = single(query.q);
  if (q === undefined || q.trim() === '') return { ok: false, reply: validationError('q', 'Field required', q) };
  if (q.length > 400 || q.trim().split(/\s+/).length > 50) {
    return { ok: false, reply: validationError('q', 'Query is longer than 400 characters or 50 words', q) };
  }
  const count = intParam(single(query.count), 'count', 1, COUNT_CAP[endpoint], DEFAULT_COUNT);
  if (typeof count !== 'number') return { ok: false, reply: count };
  const offset = intParam(single(query.offset), 'offset', 0, 9, 0);
  if (typeof offset !== 'number') return { ok: false, reply: offset };
  const freshness = single(query.freshness);
  if (freshness !== undefined && !/^(pd|pw|pm|py|\d{4}-\d{2}-\d{2}to\d{4}-\d{2}-\d{2})$/.test(freshness)) {
    return { ok: false, reply: validationError('freshness', 'Invalid freshness value', freshness) };
  }
  const safesearch = single(query.safesearch);
  if (safesearch !== undefined && !['off', 'moderate', 'strict'].includes(safesearch)) {
    return { ok: false, reply: validationError('safesearch', "Input should be 'off', 'moderate' or 'strict'", safesearch) };
  }
  const country = single(query.country);
  if (country !== undefined && !/^([A-Za-z]{2}|ALL)$/.test(country)) {
    return { ok: false, reply: validationError('country', 'Invalid country code', country) };
  }
  const searchLang = single(query.search_lang);
  if (searchLang !== undefined && !/^[a-z]{2}(-[a-z]{2,4})?$/.test(searchLang)) {
    return { ok: false, reply: validationError('search_lang', 'Invalid search language', searchLang) };
  }
  if (freshness !== undefined && !(freshness in RELATIVE_DAYS)) {
    const range = freshnessRange(freshness);
    if (Number.isNaN(range.fromMs) || Number.isNaN(range.toMs) || (range.fromMs ?? 0) > (range.toMs ?? 0)) {
      return { ok: false, reply: validationError('freshness', 'Invalid freshness value', freshness) };
    }
  }
  return { ok: true, query: q, params: { endpoint, count, offset, constraints: freshness === undefined ? {} : freshnessRange(freshness) } };
}

/** Brave marks the query's words in descriptions with <strong>. */
function emphasise(text: string, q: string): string {
  const at = text.toLowerCase().indexOf(q.toLowerCase());
  if (q === '' || at < 0) return text;
  return `${text.slice(0, at)}<strong>${text.slice(at, at + q.length)}</strong>${text.slice(at + q.length)}`;
}

function ageOf(date: Date): string {
  return date.toLocaleDateString('en-US', { month: 'long', day: 'numeric', year: 'numeric', timeZone: 'UTC' });
}

function success(params: BraveParams, q: string, empty: boolean): SimReply {
  const results = empty ? [] : resultsFor(`brave/${params.endpoint}`, q, params.count, params.offset * params.count, params.constraints);
  const headers = {
    'x-ratelimit-limit': '50, 15000000',
    'x-ratelimit-policy': '50;w=1, 15000000;w=2592000',
    'x-ratelimit-remaining': '49, 14999999',
    'x-ratelimit-reset': '1, 2419200',
  };
  const queryInfo = { original: q, show_strict_warning: false, is_navigational: false, more_results_available: !empty };
  if (params.endpoint === 'news') {
    return {
      status: 200,
      headers,
      body: {
        type: 'news',
        query: queryInfo,
        results: results.map((result) => ({
          type: 'news_result',
          title: result.title,
          url: result.url,
          description: emphasise(result.snippet, q),
          age: ageOf(result.publishedAt),
          page_age: result.publishedAt.toISOString().slice(0, 19),
          meta_url: { scheme: 'https', netloc: new URL(result.url).hostname, hostname: new URL(result.url).hostname },
          extra_snippets: result.extraSnippets,
        })),
      },
    };
  }
  return {
    status: 200,
    headers,
    body: {
      type: 'search',
      query: queryInfo,
      mixed: { type: 'mixed', main: results.map((_, index) => ({ type: 'web', index, all: false })) },
      web: {
        type: 'search',
        family_friendly: true,
        results: results.map((result) => ({
          type: 'search_result',
          subtype: 'generic',
          title: result.title,
          url: result.url,
          description: emphasise(result.snippet, q),
          age: ageOf(result.publishedAt),
          page_age: result.publishedAt.toISOString().slice(0, 19),
          language: 'en',
          family_friendly: true,
          is_source_local: false,
          is_source_both: false,
          meta_url: { scheme: 'https', netloc: new URL(result.url).hostname, hostname: new URL(result.url).hostname },
          extra_snippets: result.extraSnippets,
        })),
      },
    },
  };
}

export const BRAVE_DEFAULT_KEY = 'sim-brave-key';

export function braveRoutes(context: SimContext, apiKey: string) {
  return async (app: FastifyInstance): Promise<void> => {
    const spec = (endpoint: Endpoint): ProviderSpec<BraveParams> => ({
      provider: 'brave',
      authorize: (request) => accepts(apiKey, request.headers['x-subscription-token']),
      validate: (request) => validate(endpoint, request),
      failure,
      success: (params, q, empty) => success(params, q, empty),
    });
    registerProviderApi(app, context, {
      provider: 'brave',
      endpoints: [
        simEndpoint('GET', '/res/v1/web/search', spec('web')),
        simEndpoint('GET', '/res/v1/news/search', spec('news')),
      ],
      notFound: () => errorBody(404, 'RESOURCE_NOT_FOUND', 'Resource not found.'),
      badRequest: () => errorBody(400, 'BAD_REQUEST', 'The request could not be processed.'),
      serverError: () => failure('error500', ''),
    });
  };
}
