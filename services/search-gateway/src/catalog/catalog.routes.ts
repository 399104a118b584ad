import type { FastifyInstance } from 'fastify';
import type { CatalogService } from './catalog.service';

/** The two public catalog routes; bodies are prebuilt JSON plus the request id. */
export function registerCatalogRoutes(scope: FastifyInstance, catalog: CatalogService): void {
  scope.get('/v1/models', (request, reply) => {
    void reply.type('application/json; charset=utf-8').send(catalog.modelsJson(request.id));
  });
  scope.get('/v1/credits/pricing', (request, reply) => {
    void reply.type('application/json; charset=utf-8').send(catalog.pricingJson(request.id));
  });
}
