import type { FastifyInstance } from 'fastify';
import { PUBLIC_ROUTE_CONFIG } from '@svc/http-edge';
import type { CatalogService } from './catalog.service';

/** The public catalog routes; bodies are prebuilt JSON plus the request id (GET /v1/status: made at most every few seconds). */
export function registerCatalogRoutes(scope: FastifyInstance, catalog: CatalogService): void {
  scope.get('/v1/models', { config: PUBLIC_ROUTE_CONFIG }, (request, reply) => {
    void reply.type('application/json; charset=utf-8').send(catalog.modelsJson(request.id));
  });
  const health = catalog.health;
  if (health !== undefined) {
    scope.get('/v1/status', { config: PUBLIC_ROUTE_CONFIG }, async (request, reply) => {
      const body = await health.statusJson(request.id);
      return reply.type('application/json; charset=utf-8').header('cache-control', 'no-store').send(body);
    });
  }
  scope.get('/v1/credits/pricing', { config: PUBLIC_ROUTE_CONFIG }, (request, reply) => {
    void reply.type('application/json; charset=utf-8').send(catalog.pricingJson(request.id));
  });
}
