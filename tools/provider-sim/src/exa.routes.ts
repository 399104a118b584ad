import { accepts, bearerOf } from './accepted-keys';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { checkEnum, checkInt, checkStringArray, checkType, dollars, firstProblem, isObject, unknownField } from './body-checks';
import { failsAt, pageFor, passagesOf } from './pages';
import { resultsFor } from './results';
import type { ResultConstraints } from './results';
import { endpoint, registerProviderApi } from './simulate';
import type { FailureKind, ProviderSpec, SimContext, SimReply, Validation } from './simulate';
import { exaAgentRoutes } from './research';
import type { ResearchSim } from './research';

/** Exa: POST /search and POST /contents. */

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
  readonly highlights: ContentAsk | null;
  readonly text: ContentAsk | null;
  readonly constraints: ResultConstraints;
}

/** What a request asks of one content type (`text` or `highlights`): `true`, or an object with a character cap (and a query for highlights). */
interface ContentAsk {
  readonly maxCharacters: number | undefined;
  readonly query: string | undefined;
}

/** A page's default text cap, as Exa documents it (10,000 characters) when `text: true`. */
const DEFAULT_TEXT_CHARS = 10_000;
/** Highlights without a cap: a few sentences. */
const DEFAULT_HIGHLIGHT_CHARS = 1_000;

/** `true` or an object as a ContentAsk; null when not asked (undefined or false). */
function contentAsk(value: unknown): ContentAsk | null {
  if (value === true) return { maxCharacters: undefined, query: undefined };
  if (!isObject(value)) return null;
  return {
    maxCharacters: typeof value.maxCharacters === 'number' ? value.maxCharacters : undefined,
    query: typeof value.query === 'string' ? value.query : undefined,
  };
}

/** The problems of a content type's options (`text` or `highlights`), as Exa refuses them. */
function contentProblem(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (value !== true && value !== false && !isObject(value)) return `${name} must be a boolean or an object`;
  if (!isObject(value)) return undefined;
  return firstProblem(
    checkInt(value.maxCharacters, `${name}.maxCharacters`, 1, 1_000_000),
    checkType(value.query, `${name}.query`, ['string']),
    checkType(value.includeHtmlTags, `${name}.includeHtmlTags`, ['boolean']),
  );
}

/** A page's text as a content type asks for it: its first `maxCharacters`. */
function pageText(url: string, ask: ContentAsk): string {
  return pageFor(url).text.slice(0, ask.maxCharacters ?? DEFAULT_TEXT_CHARS);
}

/** A page's highlights as asked: the passages most relevant to its query (else to `fallbackQuery`). */
function pageHighlights(url: string, ask: ContentAsk, fallbackQuery: string | undefined): string[] {
  return passagesOf(pageFor(url), ask.query ?? fallbackQuery, ask.maxCharacters ?? DEFAULT_HIGHLIGHT_CHARS);
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
    isObject(contents) ? contentProblem(contents.highlights, 'contents.highlights') : undefined,
    isObject(contents) ? contentProblem(contents.text, 'contents.text') : undefined,
  );
  if (problem !== undefined) return badRequest(problem);
  return {
    ok: true,
    query: body.query,
    params: {
      type: (body.type as SearchType | undefined) ?? 'auto',
      numResults: (body.numResults as number | undefined) ?? 10,
      highlights: isObject(contents) ? contentAsk(contents.highlights) : null,
      text: isObject(contents) ? contentAsk(contents.text) : null,
      constraints: {
        includeDomains: body.includeDomains as string[] | undefined,
        excludeDomains: body.excludeDomains as string[] | undefined,
        fromMs: body.startPublishedDate === undefined ? undefined : isoMs(body.startPublishedDate),
        toMs: body.endPublishedDate === undefined ? undefined : isoMs(body.endPublishedDate),
      },
    },
  };
}

function success(params: ExaParams, query: string, empty: boolean, startedAt: number, unfiltered = false): SimReply {
  const results = empty ? [] : resultsFor(`exa/${params.type}`, query, params.numResults, 0, unfiltered ? {} : params.constraints);
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
        ...(params.highlights === null ? {} : highlightsOf(result.pageUrl, result.snippet, result.score, params.highlights, query)),
        ...(params.text === null ? {} : { text: pageText(result.pageUrl, params.text) }),
      })),
      costDollars: { total: dollars(priceMicros), search: { [params.type]: dollars(priceMicros) } },
      searchTime: Date.now() - startedAt,
    },
  };
}

/**
 * A search result's highlights: with only `true` asked (what the gateway's plain search
 * sends), its snippet, as before; with a query or a cap, the passages of the result's page.
 */
function highlightsOf(url: string, snippet: string, score: number, ask: ContentAsk, query: string): Record<string, unknown> {
  if (ask.maxCharacters === undefined && ask.query === undefined) return { highlights: [snippet], highlightScores: [score] };
  const highlights = pageHighlights(url, ask, query);
  return { highlights, highlightScores: highlights.map(() => score) };
}

// ---------------------------------------------------------------------------------------
// POST /contents: the pages of known URLs (exa-js getContents sends `{urls, ...options}`)

/** The fields of a /contents body (exa-js 2.23's ContentsOptions at the top level, and `urls`). */
const CONTENTS_FIELDS = [
  'urls', 'ids', 'text', 'highlights', 'summary', 'livecrawl', 'livecrawlTimeout', 'maxAgeHours', 'snapshotAsOf',
  'filterEmptyResults', 'subpages', 'subpageTarget', 'extras', 'context',
];
const LIVECRAWL = ['never', 'fallback', 'always', 'auto', 'preferred'];
/** What Exa bills per page and content type ($1 per 1,000 pages per content type). */
const PER_PAGE_MICROS = 1_000;
/** Most URLs one /contents call takes in the simulator. */
const MAX_CONTENTS_URLS = 100;

interface ContentsParams {
  readonly urls: readonly string[];
  readonly text: ContentAsk | null;
  readonly highlights: ContentAsk | null;
  /** maxAgeHours: 0 fetches live, -1 only the cache, else the oldest cached copy accepted; undefined: Exa's default. */
  readonly maxAgeHours: number | undefined;
}

function validateContents(request: FastifyRequest): Validation<ContentsParams> {
  const body = request.body;
  if (!isObject(body)) return badContents('Request body must be a JSON object');
  const extra = unknownField(body, CONTENTS_FIELDS);
  if (extra !== undefined) return badContents(`Unrecognized key in body: "${extra}"`);
  const urls = body.urls;
  if (!Array.isArray(urls) || urls.length === 0 || !urls.every((url) => typeof url === 'string' && url !== '')) return badContents('urls: Required non-empty array of strings');
  if (urls.length > MAX_CONTENTS_URLS) return badContents(`urls: at most ${MAX_CONTENTS_URLS}`);
  const problem = firstProblem(
    contentProblem(body.text, 'text'),
    contentProblem(body.highlights, 'highlights'),
    checkEnum(body.livecrawl, 'livecrawl', LIVECRAWL),
    checkInt(body.livecrawlTimeout, 'livecrawlTimeout', 0, 90_000),
    checkInt(body.maxAgeHours, 'maxAgeHours', -1, 1_000_000),
    checkType(body.filterEmptyResults, 'filterEmptyResults', ['boolean']),
  );
  if (problem !== undefined) return badContents(problem);
  const text = contentAsk(body.text);
  const highlights = contentAsk(body.highlights);
  return {
    ok: true,
    // Directives ride in the highlights' query, as in a search's query.
    query: highlights?.query ?? '',
    params: {
      urls: urls as string[],
      // No content type asked: Exa returns the text.
      text: text === null && highlights === null ? { maxCharacters: undefined, query: undefined } : text,
      highlights,
      maxAgeHours: body.maxAgeHours as number | undefined,
    },
  };
}

function badContents(problem: string): Validation<ContentsParams> {
  return { ok: false, reply: errorReply(400, 'INVALID_REQUEST_BODY', problem) };
}

/**
 * The /contents answer: a result per page it could fetch, and a status per URL (Exa's
 * `statuses`: `success`, or `error` with a tag and the page's HTTP status; a URL failing is no
 * error of the request). Billed per page fetched and content type.
 */
function contentsSuccess(params: ContentsParams, query: string, empty: boolean): SimReply {
  const results: Record<string, unknown>[] = [];
  const statuses: Record<string, unknown>[] = [];
  for (const url of params.urls) {
    if (empty || failsAt(url, 'exa')) {
      statuses.push({ id: url, status: 'error', source: 'none', error: { tag: 'CRAWL_NOT_FOUND', httpStatusCode: 404 } });
      continue;
    }
    const page = pageFor(url);
    results.push({
      id: url,
      url,
      title: page.title,
      publishedDate: page.publishedAt.toISOString(),
      author: page.author,
      ...(params.text === null ? {} : { text: pageText(url, params.text) }),
      ...(params.highlights === null ? {} : { highlights: pageHighlights(url, params.highlights, query), highlightScores: [0.5] }),
    });
    statuses.push({ id: url, status: 'success', source: params.maxAgeHours === 0 ? 'crawled' : 'cached' });
  }
  const text = params.text === null ? 0 : results.length * PER_PAGE_MICROS;
  const highlights = params.highlights === null ? 0 : results.length * PER_PAGE_MICROS;
  return {
    status: 200,
    body: {
      requestId: requestId(),
      results,
      statuses,
      costDollars: {
        total: dollars(text + highlights),
        contents: { ...(text > 0 ? { text: dollars(text) } : {}), ...(highlights > 0 ? { highlights: dollars(highlights) } : {}) },
      },
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
    const contents: ProviderSpec<ContentsParams> = { provider: 'exa', authorize: spec.authorize, failure, validate: validateContents, success: contentsSuccess };
    registerProviderApi(app, context, {
      provider: 'exa',
      endpoints: [endpoint('POST', '/search', spec), endpoint('POST', '/contents', contents)],
      notFound: () => errorReply(404, 'NOT_FOUND', 'Not found'),
      badRequest: () => errorReply(400, 'INVALID_REQUEST_BODY', 'Request body must be valid JSON'),
      serverError: () => failure('error500', ''),
    });
    if (research !== undefined) exaAgentRoutes(app, context, research, apiKey);
  };
}
