import { AppError } from '@svc/errors';
import { sendError } from '@svc/http-edge';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { AuthChain } from '../auth/auth-chain';
import { idempotencyDigest } from './idempotency';
import { UpstreamTimer } from './server-timing';
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
 * POST /v1/search, Fastify-native: the key and its address fence are checked in onRequest
 * (before the body is read), the body by the route's JSON schema, then the search runs
 * through SearchEntry (the same path as MCP's web_search). A refusal is answered here as the
 * edge answers every error (sendError), with the request id it carries (the first request's
 * for a copy that waited for it).
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
      const upstreamMs = upstream.ms;
      // Counted and logged in the edge's onResponse, after the reply is written.
      if (result.kind === 'refused') {
        metrics?.refused(request, record, result.code, upstreamMs);
        return sendError(reply, result.requestId, refusalError(result), log);
      }
      metrics?.replied(request, record, result, upstreamMs);
      if (result.requestId !== request.id) reply.header('x-svc-request-id', result.requestId);
      if (result.status === 200 && result.rateLimit !== undefined) {
        reply.header('x-ratelimit-limit', limitHeader).header('x-ratelimit-remaining', String(result.rateLimit.remaining));
      }
      if (result.cache !== undefined) reply.header('x-svc-cache', result.cache);
      if (result.status === 503) reply.header('retry-after', String(result.retryAfterSeconds ?? 1));
      return reply.code(result.status).type('application/json; charset=utf-8').send(result.body);
    },
  });
}
