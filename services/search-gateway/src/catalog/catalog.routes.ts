import type { FastifyInstance } from 'fastify';
import { PUBLIC_ROUTE_CONFIG } from '@svc/http-edge';
import type { CatalogService } from './catalog.service';

/** The two public catalog routes; bodies are prebuilt JSON plus the request id. */
export function registerCatalogRoutes(scope: FastifyInstance, catalog: CatalogService): void {
  scope.get('/v1/models', { config: PUBLIC_ROUTE_CONFIG }, (request, reply) => {
    void reply.type('application/json; charset=utf-8').send(catalog.modelsJson(request.id));
  });
  scope.get('/v1/credits/pricing', { config: PUBLIC_ROUTE_CONFIG }, (request, reply) => {
    void reply.type('application/json; charset=utf-8').send(catalog.pricingJson(request.id));
  });
}
