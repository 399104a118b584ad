import { accepts, bearerOf } from './accepted-keys';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { checkEnum, checkInt, checkStringArray, checkType, firstProblem, isObject, unknownField } from './body-checks';
import { failsAt, pageFor, passagesOf } from './pages';
import { resultsFor } from './results';
import type { ResultConstraints } from './results';
import { endpoint, registerProviderApi } from './simulate';
import type { FailureKind, ProviderSpec, SimContext, SimReply, Validation } from './simulate';
import { tavilyResearchRoutes } from './research';
import type { ResearchSim } from './research';

/** Tavily: POST /search and POST /extract. */

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
  /** include_raw_content: each result's page as markdown (`true` or `markdown`) or plain text (`text`); null: none. */
  readonly rawContent: 'markdown' | 'text' | null;
  readonly constraints: ResultConstraints;
}

/** include_raw_content as a format, null when not asked. */
function rawContentOf(value: unknown): 'markdown' | 'text' | null {
  if (value === true || value === 'markdown') return 'markdown';
  return value === 'text' ? 'text' : null;
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
    typeof body.include_raw_content === 'string' ? checkEnum(body.include_raw_content, 'include_raw_content', ['markdown', 'text']) : undefined,
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
      rawContent: rawContentOf(body.include_raw_content),
      constraints: {
        includeDomains: body.include_domains as string[] | undefined,
        excludeDomains: body.exclude_domains as string[] | undefined,
        fromMs: body.start_date === undefined ? undefined : dayMs(body.start_date),
        toMs: body.end_date === undefined ? undefined : dayMs(body.end_date) + 86_400_000 - 1000,
      },
    },
  };
}

function success(params: TavilyParams, query: string, empty: boolean, startedAt: number, unfiltered = false): SimReply {
  const results = empty ? [] : resultsFor(`tavily/${params.depth}`, query, params.maxResults, 0, unfiltered ? {} : params.constraints);
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
        raw_content: params.rawContent === null ? null : rawPage(result.pageUrl, params.rawContent),
        // A date only for news, or when the request asked for a date range.
        ...(params.news || params.constraints.fromMs !== undefined || params.constraints.toMs !== undefined ? { published_date: result.publishedAt.toUTCString() } : {}),
      })),
      response_time: Math.round(Date.now() - startedAt) / 1000,
      ...(params.usage ? { usage: { credits: params.depth === 'advanced' ? 2 : 1 } } : {}),
      request_id: randomUUID(),
    },
  };
}

/** A page as Tavily returns it in `raw_content`: markdown (its default) or plain text. */
function rawPage(url: string, format: 'markdown' | 'text'): string {
  const page = pageFor(url);
  return format === 'markdown' ? page.markdown : page.text;
}

// ---------------------------------------------------------------------------------------
// POST /extract: the pages of known URLs (@tavily/core extract sends the options in snake_case)

const EXTRACT_FIELDS = [
  'urls', 'include_images', 'extract_depth', 'format', 'include_favicon', 'timeout', 'include_usage', 'query', 'chunks_per_source',
];
const EXTRACT_DEPTHS = ['basic', 'advanced'] as const;
const FORMATS = ['markdown', 'text'] as const;
/** Most URLs one /extract call takes. */
const MAX_EXTRACT_URLS = 20;
/** Tavily's chunks are at most 500 characters each, 3 per source by default (1 to 5), only with a query. */
const CHUNK_CHARS = 500;

interface ExtractParams {
  readonly urls: readonly string[];
  readonly advanced: boolean;
  readonly format: 'markdown' | 'text';
  readonly usage: boolean;
  readonly query: string | undefined;
  readonly chunks: number;
}

function badExtract(problem: string): Validation<ExtractParams> {
  return { ok: false, reply: errorReply(400, problem) };
}

function validateExtract(request: FastifyRequest): Validation<ExtractParams> {
  const body = request.body;
  if (!isObject(body)) return badExtract('Request body must be a JSON object.');
  const extra = unknownField(body, EXTRACT_FIELDS);
  if (extra !== undefined) return badExtract(`Unknown parameter: ${extra}.`);
  const urls = typeof body.urls === 'string' ? [body.urls] : body.urls;
  if (!Array.isArray(urls) || urls.length === 0 || !urls.every((url) => typeof url === 'string' && url !== '')) return badExtract('No URLs provided.');
  if (urls.length > MAX_EXTRACT_URLS) return badExtract(`Too many URLs: at most ${MAX_EXTRACT_URLS}.`);
  const problem = firstProblem(
    checkEnum(body.extract_depth, 'extract_depth', EXTRACT_DEPTHS),
    checkEnum(body.format, 'format', FORMATS),
    checkType(body.include_images, 'include_images', ['boolean']),
    checkType(body.include_favicon, 'include_favicon', ['boolean']),
    checkType(body.include_usage, 'include_usage', ['boolean']),
    checkType(body.query, 'query', ['string']),
    checkInt(body.chunks_per_source, 'chunks_per_source', 1, 5),
    body.timeout !== undefined && !(typeof body.timeout === 'number' && body.timeout >= 1 && body.timeout <= 60) ? 'timeout must be a number from 1 to 60' : undefined,
    body.chunks_per_source !== undefined && body.query === undefined ? 'chunks_per_source is only available with a query' : undefined,
  );
  if (problem !== undefined) return badExtract(`Invalid ${problem}.`);
  return {
    ok: true,
    // Directives ride in the query, as in a search's.
    query: typeof body.query === 'string' ? body.query : '',
    params: {
      urls: urls as string[],
      advanced: body.extract_depth === 'advanced',
      format: (body.format as 'markdown' | 'text' | undefined) ?? 'markdown',
      usage: body.include_usage === true,
      query: typeof body.query === 'string' ? body.query : undefined,
      chunks: (body.chunks_per_source as number | undefined) ?? 3,
    },
  };
}

/**
 * The /extract answer: `results` for the pages it fetched, `failed_results` (url, error) for
 * the others; a URL failing is no error of the request. Credits: 1 per 5 successful URLs
 * (2 with advanced depth), rounded up per request; failed URLs are free.
 */
function extractSuccess(params: ExtractParams, query: string, empty: boolean, startedAt: number): SimReply {
  const results: Record<string, unknown>[] = [];
  const failed: Record<string, unknown>[] = [];
  for (const url of params.urls) {
    if (empty || failsAt(url, 'tavily')) {
      failed.push({ url, error: 'Failed to fetch url' });
      continue;
    }
    const page = pageFor(url);
    const content = params.query === undefined
      ? (params.format === 'markdown' ? page.markdown : page.text)
      : passagesOf(page, query, params.chunks * CHUNK_CHARS, params.chunks).map((chunk) => chunk.slice(0, CHUNK_CHARS)).join(' [...] ');
    results.push({ url, title: page.title, raw_content: content, images: [] });
  }
  const credits = Math.ceil(results.length / 5) * (params.advanced ? 2 : 1);
  return {
    status: 200,
    body: {
      results,
      failed_results: failed,
      response_time: Math.round(Date.now() - startedAt) / 1000,
      ...(params.usage ? { usage: { credits } } : {}),
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
    const extract: ProviderSpec<ExtractParams> = { provider: 'tavily', authorize: spec.authorize, failure, validate: validateExtract, success: extractSuccess };
    registerProviderApi(app, context, {
      provider: 'tavily',
      endpoints: [endpoint('POST', '/search', spec), endpoint('POST', '/extract', extract)],
      notFound: () => errorReply(404, 'Not Found'),
      badRequest: () => errorReply(400, 'Invalid request body.'),
      serverError: () => failure('error500', ''),
    });
    if (research !== undefined) tavilyResearchRoutes(app, context, research, apiKey);
  };
}
