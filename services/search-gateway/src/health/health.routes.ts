import type { FastifyInstance } from 'fastify';
import type { RedisConnection } from './redis.connection';

/** GET /healthz (the process is up) and GET /readyz (Redis answers). */
export function registerHealthRoutes(scope: FastifyInstance, redis: RedisConnection): void {
  scope.get('/healthz', (request, reply) => {
    void reply.type('application/json; charset=utf-8').send({ status: 'ok', request_id: request.id });
  });
  scope.get('/readyz', async (request, reply) => {
    const redisUp = await redis.isReachable();
    return reply
      .code(redisUp ? 200 : 503)
      .type('application/json; charset=utf-8')
      .send({ status: redisUp ? 'ready' : 'unavailable', checks: { redis: redisUp ? 'ok' : 'down' }, request_id: request.id });
  });
}
