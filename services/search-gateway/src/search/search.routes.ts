import { AppError } from '@svc/errors';
import { sendError } from '@svc/http-edge';
import type { KeyRecord, RequestKind } from '@svc/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { AuthChain } from '../auth/auth-chain';
import { idempotencyDigest } from './idempotency';
import { UpstreamTimer } from './server-timing';
import { EXTRACT_BODY_SCHEMA, toExtractRequest } from './extract.schema';
import type { ExtractBody, ExtractRequest } from './extract.schema';
import { SearchEntry } from './search.entry';
import type { SearchAsked } from './search.entry';
import type { AttemptedRequest } from './search.result';
import { formatSearchBodyErrors, SEARCH_BODY_SCHEMA, searchValidatorCompiler, toSearchRequest } from './search.schema';
import type { SearchBody, SearchRequest } from './search.schema';
import type { SearchMetrics } from './search.metrics';
import type { SearchRefusal, SearchResult, SearchService } from './search.service';

/** x-ratelimit-limit: the configured rate (x-ratelimit-remaining comes from each admission's answer). */
export interface RateLimitHeaders {
  readonly limit: number;
}

/**
 * A search's refusal as the platform's error (the one place, with the MCP tool, where an
 * expected refusal becomes an AppError): its code, message and Retry-After.
 */
export function refusalError(refusal: SearchRefusal): AppError {
  return new AppError(refusal.code, refusal.message, refusal.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: refusal.retryAfterSeconds });
}

/**
 * POST /v1/search and POST /v1/extract, Fastify-native: the key and its address fence are
 * checked in onRequest (before the body is read), the body by the route's JSON schema, then
 * the search (or extract) runs through SearchEntry (the same path as MCP's web_search and
 * web_fetch). A refusal is answered here as the edge answers every error (sendError), with the
 * request id it carries (the first request's for a copy that waited for it).
 */
export function registerSearchRoutes(scope: FastifyInstance, auth: AuthChain, search: SearchService, rateLimit: RateLimitHeaders, log: Logger, metrics?: SearchMetrics): void {
  const entry = new SearchEntry(auth, search);
  // x-ratelimit-limit is the configured rate (RATE_LIMIT_PER_SECOND); x-ratelimit-remaining
  // comes from the admission script's answer (SearchReply.rateLimit).
  const limitHeader = String(rateLimit.limit);

  post<SearchBody, SearchRequest>('/v1/search', SEARCH_BODY_SCHEMA, toSearchRequest, (asked) => entry.run(asked), 'search');
  // POST /v1/extract (docs/decisions/0058): the search route's guard, limits, money and replies.
  post<ExtractBody, ExtractRequest>('/v1/extract', EXTRACT_BODY_SCHEMA, toExtractRequest, (asked) => entry.extract(asked), 'extract');

  /** A route of its kind: its body's schema, the request the body makes, and SearchEntry's way in for it. */
  function post<B, R extends AttemptedRequest>(url: string, schema: object, requestOf: (body: B) => R, run: (asked: SearchAsked<R>) => Promise<SearchResult>, kind: RequestKind): void {
    scope.route({
      method: 'POST',
      url,
      schema: { body: schema },
      validatorCompiler: searchValidatorCompiler,
      schemaErrorFormatter: formatSearchBodyErrors,
      // The key and its address fence, before the body is read.
      onRequest: entry.guard('api_key'),
      handler: async (request, reply) => {
        const record = entry.callerOf(request);
        // The schema's validator has checked the body (a 400 before the handler otherwise).
        const asked = requestOf(request.body as B);
        const keyDigest = idempotencyDigest(request.headers['idempotency-key']);
        const upstream = new UpstreamTimer();
        let result: SearchResult;
        try {
          // Server-Timing (the platform's own time and the providers'), on every answer.
          result = await run({ record, requestId: request.id, request: asked, body: request.body, keyDigest, reply, upstream });
        } catch (error) {
          metrics?.threw(request, record, error, upstream.ms, kind);
          throw error;
        }
        return answer(request, reply, record, result, upstream.ms, kind);
      },
    });
  }

  /** A search's or an extract's result as the HTTP answer: its refusal as the platform's error, or its reply with its headers. */
  function answer(request: FastifyRequest, reply: FastifyReply, record: KeyRecord, result: SearchResult, upstreamMs: number, kind: RequestKind): FastifyReply {
    // Counted and logged in the edge's onResponse, after the reply is written.
    if (result.kind === 'refused') {
      metrics?.refused(request, record, result.code, upstreamMs, kind);
      return sendError(reply, result.requestId, refusalError(result), log);
    }
    metrics?.replied(request, record, result, upstreamMs, kind);
    if (result.requestId !== request.id) void reply.header('x-svc-request-id', result.requestId);
    if (result.status === 200 && result.rateLimit !== undefined) {
      void reply.header('x-ratelimit-limit', limitHeader).header('x-ratelimit-remaining', String(result.rateLimit.remaining));
    }
    if (result.cache !== undefined) void reply.header('x-svc-cache', result.cache);
    if (result.status === 503) void reply.header('retry-after', String(result.retryAfterSeconds ?? 1));
    return reply.code(result.status).type('application/json; charset=utf-8').send(result.body);
  }
}
