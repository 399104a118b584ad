import { AppError } from '@svc/errors';
import { sendError } from '@svc/http-edge';
import type { KeyRecord, RequestKind } from '@svc/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { AuthChain } from '../auth/auth-chain';
import { idempotencyDigest } from './idempotency';
import { UpstreamTimer } from './server-timing';
import { EXTRACT_BODY_SCHEMA, toExtractRequest } from './extract.schema';
import type { ExtractBody } from './extract.schema';
import { SearchEntry } from './search.entry';
import { formatSearchBodyErrors, SEARCH_BODY_SCHEMA, searchValidatorCompiler, toSearchRequest } from './search.schema';
import type { SearchBody } from './search.schema';
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

  scope.route<{ Body: SearchBody }>({
    method: 'POST',
    url: '/v1/search',
    schema: { body: SEARCH_BODY_SCHEMA },
    validatorCompiler: searchValidatorCompiler,
    schemaErrorFormatter: formatSearchBodyErrors,
    // The key and its address fence, before the body is read.
    onRequest: entry.guard('api_key'),
    handler: async (request, reply) => {
      const record = entry.callerOf(request);
      const searchRequest = toSearchRequest(request.body);
      const keyDigest = idempotencyDigest(request.headers['idempotency-key']);
      const upstream = new UpstreamTimer();
      let result: SearchResult;
      try {
        // Server-Timing (the platform's own time and the providers'), on every search answer.
        result = await entry.run({ record, requestId: request.id, request: searchRequest, body: request.body, keyDigest, reply, upstream });
      } catch (error) {
        metrics?.threw(request, record, error, upstream.ms);
        throw error;
      }
      return answer(request, reply, record, result, upstream.ms, 'search');
    },
  });

  // POST /v1/extract (docs/decisions/0058): the search route's guard, limits, money and replies.
  scope.route<{ Body: ExtractBody }>({
    method: 'POST',
    url: '/v1/extract',
    schema: { body: EXTRACT_BODY_SCHEMA },
    validatorCompiler: searchValidatorCompiler,
    schemaErrorFormatter: formatSearchBodyErrors,
    onRequest: entry.guard('api_key'),
    handler: async (request, reply) => {
      const record = entry.callerOf(request);
      const extractRequest = toExtractRequest(request.body);
      const keyDigest = idempotencyDigest(request.headers['idempotency-key']);
      const upstream = new UpstreamTimer();
      let result: SearchResult;
      try {
        result = await entry.extract({ record, requestId: request.id, request: extractRequest, body: request.body, keyDigest, reply, upstream });
      } catch (error) {
        metrics?.threw(request, record, error, upstream.ms, 'extract');
        throw error;
      }
      return answer(request, reply, record, result, upstream.ms, 'extract');
    },
  });

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
