import { accepts, bearerOf } from './accepted-keys';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { checkEnum, checkInt, checkStringArray, checkType, dollars, firstProblem, isObject, unknownField } from './body-checks';
import { resultsFor } from './results';
import type { ResultConstraints } from './results';
import { registerProviderApi } from './simulate';
import type { FailureKind, ProviderSpec, SimContext, SimReply, Validation } from './simulate';
import { exaAgentRoutes } from './research';
import type { ResearchSim } from './research';

/** Exa: POST /search. */

/** Exa's search types (as exa-js 2.23 types them); anything else is refused as Exa refuses it. */
const TYPES = ['keyword', 'neural', 'auto', 'hybrid', 'fast', 'instant', 'deep-lite', 'deep', 'deep-reasoning'] as const;
type SearchType = (typeof TYPES)[number];

const FIELDS = [
  'query', 'type', 'numResults', 'includeDomains', 'excludeDomains', 'startPublishedDate', 'endPublishedDate',
  'startCrawlDate', 'endCrawlDate', 'category', 'userLocation', 'includeText', 'excludeText', 'contents', 'moderation',
];

/** Price per request by type, in micro-USD, plus per result beyond 10. */
const PRICE_MICROS: Record<SearchType, number> = {
  keyword: 7_000, neural: 7_000, auto: 7_000, hybrid: 7_000, fast: 4_000, instant: 4_000, 'deep-lite': 12_000, deep: 12_000, 'deep-reasoning': 15_000,
};
const PER_EXTRA_RESULT_MICROS = 1_000;

interface ExaParams {
  readonly type: SearchType;
  readonly numResults: number;
  readonly highlights: boolean;
  readonly text: boolean;
  readonly constraints: ResultConstraints;
}

/** An ISO 8601 date or date-time as Exa takes it for start/endPublishedDate, in ms; NaN when not one. */
function isoMs(value: unknown): number {
  return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
}

function requestId(): string {
  return randomBytes(16).toString('hex');
}

function errorReply(status: number, tag: string, error: string, headers?: Record<string, string>): SimReply {
  return { status, body: { requestId: requestId(), error, tag }, ...(headers === undefined ? {} : { headers }) };
}

function failure(kind: FailureKind, detail: string): SimReply {
  switch (kind) {
    case 'badkey':
      return errorReply(401, 'INVALID_API_KEY', 'Invalid API key');
    case 'error500':
      return errorReply(500, 'INTERNAL_ERROR', 'Internal server error');
    case 'error429':
      return errorReply(429, 'RATE_LIMIT_EXCEEDED', 'Rate limit exceeded', { 'retry-after': '1' });
    case 'quota':
      return errorReply(402, 'NO_MORE_CREDITS', 'You have exceeded your credits limit. Please add more credits.');
    case 'directive':
      return errorReply(400, 'INVALID_REQUEST_BODY', detail);
  }
}

function badRequest(problem: string): Validation<ExaParams> {
  return { ok: false, reply: errorReply(400, 'INVALID_REQUEST_BODY', problem) };
}

function validate(request: FastifyRequest): Validation<ExaParams> {
  const body = request.body;
  if (!isObject(body)) return badRequest('Request body must be a JSON object');
  const extra = unknownField(body, FIELDS);
  if (extra !== undefined) return badRequest(`Unrecognized key in body: "${extra}"`);
  if (typeof body.query !== 'string' || body.query.trim() === '') return badRequest('query: Required non-empty string');
  const contents = body.contents;
  const problem = firstProblem(
    checkEnum(body.type, 'type', TYPES),
    checkInt(body.numResults, 'numResults', 1, 100),
    checkStringArray(body.includeDomains, 'includeDomains'),
    checkStringArray(body.excludeDomains, 'excludeDomains'),
    checkType(body.startPublishedDate, 'startPublishedDate', ['string']),
    checkType(body.endPublishedDate, 'endPublishedDate', ['string']),
    checkType(body.category, 'category', ['string']),
    checkType(body.userLocation, 'userLocation', ['string']),
    body.startPublishedDate !== undefined && Number.isNaN(isoMs(body.startPublishedDate)) ? 'startPublishedDate must be an ISO 8601 date' : undefined,
    body.endPublishedDate !== undefined && Number.isNaN(isoMs(body.endPublishedDate)) ? 'endPublishedDate must be an ISO 8601 date' : undefined,
    checkType(contents, 'contents', ['object']),
    isObject(contents) ? checkType(contents.highlights, 'contents.highlights', ['boolean', 'object']) : undefined,
    isObject(contents) ? checkType(contents.text, 'contents.text', ['boolean', 'object']) : undefined,
  );
  if (problem !== undefined) return badRequest(problem);
  const wants = (value: unknown): boolean => value === true || isObject(value);
  return {
    ok: true,
    query: body.query,
    params: {
      type: (body.type as SearchType | undefined) ?? 'auto',
      numResults: (body.numResults as number | undefined) ?? 10,
      highlights: isObject(contents) && wants(contents.highlights),
      text: isObject(contents) && wants(contents.text),
      constraints: {
        includeDomains: body.includeDomains as string[] | undefined,
        excludeDomains: body.excludeDomains as string[] | undefined,
        fromMs: body.startPublishedDate === undefined ? undefined : isoMs(body.startPublishedDate),
        toMs: body.endPublishedDate === undefined ? undefined : isoMs(body.endPublishedDate),
      },
    },
  };
}

function success(params: ExaParams, query: string, empty: boolean, startedAt: number): SimReply {
  const results = empty ? [] : resultsFor(`exa/${params.type}`, query, params.numResults, 0, params.constraints);
  const priceMicros = PRICE_MICROS[params.type] + Math.max(0, results.length - 10) * PER_EXTRA_RESULT_MICROS;
  return {
    status: 200,
    body: {
      requestId: requestId(),
      ...(params.type === 'auto' ? { resolvedSearchType: 'neural' } : {}),
      results: results.map((result) => ({
        id: result.url,
        title: result.title,
        url: result.url,
        publishedDate: result.publishedAt.toISOString(),
        author: result.author,
        ...(params.type === 'auto' ? {} : { score: result.score }),
        ...(params.highlights ? { highlights: [result.snippet], highlightScores: [result.score] } : {}),
        ...(params.text ? { text: `${result.snippet} ${result.extraSnippets.join(' ')}` } : {}),
      })),
      costDollars: { total: dollars(priceMicros), search: { [params.type]: dollars(priceMicros) } },
      searchTime: Date.now() - startedAt,
    },
  };
}

export const EXA_DEFAULT_KEY = 'sim-exa-key';

export function exaRoutes(context: SimContext, apiKey: string, research?: ResearchSim) {
  return async (app: FastifyInstance): Promise<void> => {
    const spec: ProviderSpec<ExaParams> = {
      provider: 'exa',
      authorize: (request) =>
        accepts(apiKey, request.headers['x-api-key']) || accepts(apiKey, bearerOf(request.headers.authorization)),
      validate,
      failure,
      success,
    };
    registerProviderApi(app, context, {
      provider: 'exa',
      endpoints: [{ method: 'POST', path: '/search', spec }],
      notFound: () => errorReply(404, 'NOT_FOUND', 'Not found'),
      badRequest: () => errorReply(400, 'INVALID_REQUEST_BODY', 'Request body must be valid JSON'),
      serverError: () => failure('error500', ''),
    });
    if (research !== undefined) exaAgentRoutes(app, context, research, apiKey);
  };
}
