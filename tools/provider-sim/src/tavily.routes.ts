import { accepts, bearerOf } from './accepted-keys';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { checkEnum, checkInt, checkStringArray, checkType, firstProblem, isObject, unknownField } from './body-checks';
import { resultsFor } from './results';
import type { ResultConstraints } from './results';
import { registerProviderApi } from './simulate';
import type { FailureKind, ProviderSpec, SimContext, SimReply, Validation } from './simulate';
import { tavilyResearchRoutes } from './research';
import type { ResearchSim } from './research';

/** Tavily: POST /search. */

/** Tavily's search depths (as @tavily/core 0.7.13 types them). */
const DEPTHS = ['basic', 'advanced', 'fast', 'ultra-fast'] as const;
type Depth = (typeof DEPTHS)[number];
const TOPICS = ['general', 'news', 'finance'] as const;
const TIME_RANGES = ['day', 'week', 'month', 'year', 'd', 'w', 'm', 'y'];
const FIELDS = [
  'query', 'search_depth', 'max_results', 'topic', 'time_range', 'days', 'start_date', 'end_date',
  'include_domains', 'exclude_domains', 'include_usage', 'include_answer', 'include_raw_content',
  'include_images', 'include_image_descriptions', 'include_favicon', 'chunks_per_source', 'country', 'auto_parameters',
  'include_domains_mode', 'max_tokens', 'max_hours', 'exact_match', 'fetch_timeout', 'cache_fallback', 'language', 'filter_by_language',
];

/** A YYYY-MM-DD date as Tavily takes it for start_date and end_date: its first ms, or NaN. */
function dayMs(value: unknown): number {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return Number.NaN;
  const ms = Date.parse(`${value}T00:00:00Z`);
  return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value ? Number.NaN : ms;
}

interface TavilyParams {
  readonly depth: Depth;
  readonly maxResults: number;
  readonly news: boolean;
  readonly usage: boolean;
  readonly answer: boolean;
  readonly constraints: ResultConstraints;
}

function errorReply(status: number, error: string, headers?: Record<string, string>): SimReply {
  return { status, body: { detail: { error } }, ...(headers === undefined ? {} : { headers }) };
}

function failure(kind: FailureKind, detail: string): SimReply {
  switch (kind) {
    case 'badkey':
      return errorReply(401, 'Unauthorized: missing or invalid API key.');
    case 'error500':
      return errorReply(500, 'Internal Server Error');
    case 'error429':
      return errorReply(429, 'Your request has been blocked due to excessive requests. Please reduce the rate of requests.', { 'retry-after': '1' });
    case 'quota':
      return errorReply(432, "This request exceeds your plan's set usage limit. Please upgrade your plan or contact support@tavily.com");
    case 'directive':
      return errorReply(400, detail);
  }
}

function badRequest(problem: string): Validation<TavilyParams> {
  return { ok: false, reply: errorReply(400, problem) };
}

function validate(request: FastifyRequest): Validation<TavilyParams> {
  const body = request.body;
  if (!isObject(body)) return badRequest('Request body must be a JSON object.');
  const extra = unknownField(body, FIELDS);
  if (extra !== undefined) return badRequest(`Unknown parameter: ${extra}.`);
  if (typeof body.query !== 'string' || body.query.trim() === '') return badRequest('Query is missing.');
  const problem = firstProblem(
    checkEnum(body.search_depth, 'search_depth', DEPTHS),
    checkInt(body.max_results, 'max_results', 0, 20),
    checkEnum(body.topic, 'topic', TOPICS),
    checkEnum(body.time_range, 'time_range', TIME_RANGES),
    checkStringArray(body.include_domains, 'include_domains'),
    checkStringArray(body.exclude_domains, 'exclude_domains'),
    checkType(body.include_usage, 'include_usage', ['boolean']),
    checkType(body.include_answer, 'include_answer', ['boolean', 'string']),
    checkType(body.include_raw_content, 'include_raw_content', ['boolean', 'string']),
    checkType(body.include_images, 'include_images', ['boolean']),
    body.start_date !== undefined && Number.isNaN(dayMs(body.start_date)) ? 'start_date must be a date in YYYY-MM-DD format' : undefined,
    body.end_date !== undefined && Number.isNaN(dayMs(body.end_date)) ? 'end_date must be a date in YYYY-MM-DD format' : undefined,
  );
  if (problem !== undefined) return badRequest(`Invalid ${problem}.`);
  return {
    ok: true,
    query: body.query,
    params: {
      depth: (body.search_depth as Depth | undefined) ?? 'basic',
      maxResults: (body.max_results as number | undefined) ?? 5,
      news: body.topic === 'news',
      usage: body.include_usage === true,
      answer: body.include_answer === true || body.include_answer === 'basic' || body.include_answer === 'advanced',
      constraints: {
        includeDomains: body.include_domains as string[] | undefined,
        excludeDomains: body.exclude_domains as string[] | undefined,
        fromMs: body.start_date === undefined ? undefined : dayMs(body.start_date),
        toMs: body.end_date === undefined ? undefined : dayMs(body.end_date) + 86_400_000 - 1000,
      },
    },
  };
}

function success(params: TavilyParams, query: string, empty: boolean, startedAt: number): SimReply {
  const results = empty ? [] : resultsFor(`tavily/${params.depth}`, query, params.maxResults, 0, params.constraints);
  return {
    status: 200,
    body: {
      query,
      follow_up_questions: null,
      answer: params.answer && results.length > 0 ? `In short: ${results[0]?.snippet ?? ''}` : null,
      images: [],
      results: results.map((result) => ({
        url: result.url,
        title: result.title,
        content: result.snippet,
        score: result.score,
        raw_content: null,
        // A date only for news, or when the request asked for a date range.
        ...(params.news || params.constraints.fromMs !== undefined || params.constraints.toMs !== undefined ? { published_date: result.publishedAt.toUTCString() } : {}),
      })),
      response_time: Math.round(Date.now() - startedAt) / 1000,
      ...(params.usage ? { usage: { credits: params.depth === 'advanced' ? 2 : 1 } } : {}),
      request_id: randomUUID(),
    },
  };
}

export const TAVILY_DEFAULT_KEY = 'tvly-sim-key';

export function tavilyRoutes(context: SimContext, apiKey: string, research?: ResearchSim) {
  return async (app: FastifyInstance): Promise<void> => {
    const spec: ProviderSpec<TavilyParams> = {
      provider: 'tavily',
      authorize: (request) => accepts(apiKey, bearerOf(request.headers.authorization)),
      validate,
      failure,
      success,
    };
    registerProviderApi(app, context, {
      provider: 'tavily',
      endpoints: [{ method: 'POST', path: '/search', spec }],
      notFound: () => errorReply(404, 'Not Found'),
      badRequest: () => errorReply(400, 'Invalid request body.'),
      serverError: () => failure('error500', ''),
    });
    if (research !== undefined) tavilyResearchRoutes(app, context, research, apiKey);
  };
}
