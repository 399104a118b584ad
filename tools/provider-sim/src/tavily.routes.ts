import { accepts, bearerOf } from './accepted-keys';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { checkEnum, checkInt, checkStringArray, checkType, firstProblem, isObject, unknownField } from './body-checks';
import { resultsFor } from './results';
import { clientError, sendReply, simulatedHandler } from './simulate';
import type { FailureKind, ProviderSpec, SimContext, SimReply, Validation } from './simulate';

/** Tavily: POST /search. */

const DEPTHS = ['basic', 'advanced'] as const;
type Depth = (typeof DEPTHS)[number];
const TOPICS = ['general', 'news', 'finance'] as const;
const TIME_RANGES = ['day', 'week', 'month', 'year', 'd', 'w', 'm', 'y'];
const FIELDS = [
  'query', 'search_depth', 'max_results', 'topic', 'time_range', 'days', 'start_date', 'end_date',
  'include_domains', 'exclude_domains', 'include_usage', 'include_answer', 'include_raw_content',
  'include_images', 'include_image_descriptions', 'include_favicon', 'chunks_per_source', 'country', 'auto_parameters',
];

interface TavilyParams {
  readonly depth: Depth;
  readonly maxResults: number;
  readonly news: boolean;
  readonly usage: boolean;
  readonly answer: boolean;
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
    },
  };
}

function success(params: TavilyParams, query: string, empty: boolean, startedAt: number): SimReply {
  const results = empty ? [] : resultsFor(`tavily/${params.depth}`, query, params.maxResults);
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
        ...(params.news ? { published_date: result.publishedAt.toUTCString() } : {}),
      })),
      response_time: Math.round(Date.now() - startedAt) / 1000,
      ...(params.usage ? { usage: { credits: params.depth === 'advanced' ? 2 : 1 } } : {}),
      request_id: randomUUID(),
    },
  };
}

export const TAVILY_DEFAULT_KEY = 'tvly-sim-key';

export function tavilyRoutes(context: SimContext, apiKey: string) {
  return async (app: FastifyInstance): Promise<void> => {
    app.addHook('onRequest', async (request) => context.begin(request, 'tavily'));
    app.addHook('onResponse', async (request) => context.end(request, 'tavily'));
    const spec: ProviderSpec<TavilyParams> = {
      provider: 'tavily',
      authorize: (request) => accepts(apiKey, bearerOf(request.headers.authorization)),
      validate,
      failure,
      success,
    };
    app.post('/search', simulatedHandler(spec, context));
    app.setNotFoundHandler((_request, reply) => sendReply(reply, errorReply(404, 'Not Found')));
    app.setErrorHandler((error: { statusCode?: number }, _request, reply) =>
      sendReply(reply, clientError(error) ? errorReply(400, 'Invalid request body.') : failure('error500', '')),
    );
  };
}
