import type { FastifyInstance } from 'fastify';
import { drainingReadiness, PUBLIC_ROUTE_CONFIG } from '@svc/http-edge';
import type { DrainState } from '@svc/http-edge';
import type { MainRedisClient } from '../redis/main-redis.client';

/**
 * GET /healthz (the process is up) and GET /readyz (Redis answers, and, when the gateway
 * serves searches, the search path's batch connection to Redis is up: without it every
 * search would answer 503). While the gateway drains (SIGTERM), /readyz is 503 `draining`.
 */
export function registerHealthRoutes(scope: FastifyInstance, redis: MainRedisClient, searchBatchReady?: () => boolean, drain?: DrainState): void {
  scope.get('/healthz', { config: PUBLIC_ROUTE_CONFIG }, (request, reply) => {
    void reply.type('application/json; charset=utf-8').send({ status: 'ok', request_id: request.id });
  });
  scope.get('/readyz', { config: PUBLIC_ROUTE_CONFIG }, async (request, reply) => {
    if (drain?.draining === true) {
      return reply.code(503).type('application/json; charset=utf-8').send(drainingReadiness(request.id));
    }
    const redisUp = await redis.isReachable();
    const checks: Record<string, 'ok' | 'down'> = { redis: redisUp ? 'ok' : 'down' };
    if (searchBatchReady !== undefined) checks.search_batch = searchBatchReady() ? 'ok' : 'down';
    const ready = Object.values(checks).every((check) => check === 'ok');
    return reply
      .code(ready ? 200 : 503)
      .type('application/json; charset=utf-8')
      .send({ status: ready ? 'ready' : 'unavailable', checks, request_id: request.id });
  });
}
