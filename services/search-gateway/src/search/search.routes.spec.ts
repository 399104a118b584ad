import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { installEdge, sendError } from '@svc/http-edge';
import pino from 'pino';
import { RECORD } from '../../test/search-steps.fakes';
import type { AuthChain } from '../auth/auth-chain';
import { SearchMetrics } from './search.metrics';
import { refusalError, registerSearchRoutes } from './search.routes';
import { refuse } from './search.result';
import type { SearchResult } from './search.result';
import type { SearchService } from './search.service';

/**
 * POST /v1/search's handler on a fake SearchService: a refusal (data) becomes the same error
 * reply the edge makes of a thrown AppError, which is how refusals were answered before they
 * were data; replies keep their headers.
 */
describe('the search route', () => {
  let app: FastifyInstance;
  let answer: SearchResult;
  let metrics: SearchMetrics;
  let ids = 0;

  beforeEach(async () => {
    const log = pino({ level: 'silent' });
    metrics = new SearchMetrics();
    ids = 0;
    app = Fastify({ genReqId: () => `req_${++ids}` });
    installEdge(app, log, undefined, { observe: (request, route, status, ms) => (route === '/v1/search' ? metrics.answered(request, status, ms) : undefined) });
    const auth = { authenticate: () => Promise.resolve({ ok: true, record: RECORD }) } as unknown as AuthChain;
    const search = { search: () => Promise.resolve(answer) } as unknown as SearchService;
    await app.register(async (scope) => {
      scope.setErrorHandler((error, request, reply) => sendError(reply, request.id, error, log));
      registerSearchRoutes(scope, auth, search, { limit: 5 }, log, metrics);
      // How a refusal was answered when it was thrown: the edge's error handler.
      scope.post('/thrown', () => {
        if (answer.kind !== 'refused') throw new Error('not a refusal');
        throw refusalError({ ...answer, requestId: 'unused' });
      });
    });
    await app.ready();
  });

  afterEach(() => app.close());

  const post = (url = '/v1/search') => app.inject({ method: 'POST', url, payload: { query: 'q', model: 'exa/fast' } });
  // Server-Timing (on a refused search, not on a thrown error) is checked on its own.
  const headersOf = (response: Awaited<ReturnType<typeof post>>) => {
    const { date: _date, 'server-timing': _timing, ...rest } = response.headers;
    return rest;
  };

  describe('refused', () => {
    it.each([
      ['rate_limited', refuse.rateLimited('req_1', 5, 10, 1_500), 429, '2'],
      ['too_many_concurrent_requests', refuse.tooMany('req_1', 3), 429, '1'],
      ['overloaded (cold)', refuse.cold('req_1'), 503, '1'],
      ['overloaded (saturated)', refuse.saturated('req_1'), 503, '1'],
      ['invalid_request (body mismatch)', refuse.bodyMismatch('req_1'), 400, undefined],
      ['internal (settlement failed)', refuse.settlementFailed('req_1'), 500, undefined],
    ] as const)('%s: the status, Retry-After and body a thrown AppError got', async (_name, refusal, status, retryAfter) => {
      answer = refusal;
      const response = await post();
      expect(response.statusCode).toBe(status);
      expect(response.headers['retry-after']).toBe(retryAfter);
      expect(response.headers['x-svc-request-id']).toBe('req_1');
      // Refused before any provider call: all of it is the platform's own time.
      expect(response.headers['server-timing']).toMatch(/^gateway;dur=[\d.]+, upstream;dur=0$/);
      expect(response.json()).toEqual({ error: { code: refusal.code, message: refusal.message, request_id: 'req_1' } });
      const thrown = await post('/thrown');
      expect(thrown.statusCode).toBe(response.statusCode);
      expect(headersOf(thrown)).toEqual({ ...headersOf(response), 'x-svc-request-id': 'req_2' });
      expect(thrown.body).toBe(response.body.replace('"request_id":"req_1"', '"request_id":"req_2"'));
    });

    it('a copy\'s refusal carries the first request\'s id, in the body and in x-svc-request-id', async () => {
      answer = refuse.tooMany('req_first', 3);
      const response = await post();
      expect(response.headers['x-svc-request-id']).toBe('req_first');
      expect(response.json().error.request_id).toBe('req_first');
    });

    it('is counted as the refusal it is', async () => {
      answer = refuse.rateLimited('req_1', 5, 10, 10);
      await post();
      const text = await metrics.registry.metrics();
      expect(text).toContain('gateway_search_refusals_total{reason="rate_limit"} 1');
      expect(text).toContain('gateway_searches_total{outcome="rate_limited",model="none"} 1');
    });
  });

  describe('replied', () => {
    it('200 with the rate-limit headers; a repeat\'s request id in x-svc-request-id', async () => {
      answer = { kind: 'reply', status: 200, body: '{"ok":true}', requestId: 'req_first', rateLimit: { limit: 5, remaining: 4 }, attempts: undefined };
      const response = await post();
      expect(response.statusCode).toBe(200);
      expect(response.body).toBe('{"ok":true}');
      expect(response.headers).toMatchObject({ 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '4', 'x-svc-request-id': 'req_first', 'content-type': 'application/json; charset=utf-8' });
      expect(response.headers['retry-after']).toBeUndefined();
    });

    it('a 503 (every model at capacity) says Retry-After 1 and no rate-limit headers', async () => {
      answer = { kind: 'reply', status: 503, body: '{}', requestId: 'req_1', rateLimit: { limit: 5, remaining: 4 }, attempts: [] };
      const response = await post();
      expect(response.headers['retry-after']).toBe('1');
      expect(response.headers['x-ratelimit-remaining']).toBeUndefined();
    });
  });
});
