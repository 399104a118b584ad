import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { registerCatalogRoutes } from '../catalog/catalog.routes';
import type { CatalogService } from '../catalog/catalog.service';
import type { ForwardService } from '../forward/forward.routes';
import { registerHealthRoutes } from '../health/health.routes';
import { registerOpenApiRoutes } from '../openapi/openapi.routes';
import type { MainRedisClient } from '../redis/main-redis.client';
import { registerSearchRoutes } from '../search';
import type { RateLimitHeaders, SearchService } from '../search';
import type { AuthChain } from '../auth/auth-chain';
import type { McpEndpoint } from '../mcp/mcp.endpoint';
import { checkBodyDepth, DEFAULT_MAX_BODY_DEPTH, installEdge, RouteTable, sendError } from '@svc/http-edge';
import type { DrainState } from '@svc/http-edge';
import type { HttpMetrics } from '@svc/metrics';
import { requestTracing } from '@svc/tracing';
import type { SearchMetrics } from '../search';

const SEARCH_ROUTE = '/v1/search';
const EXTRACT_ROUTE = '/v1/extract';

/**
 * Puts the gateway's routes straight on Fastify (no Nest controllers or enhancers on
 * them): the shared edge (@svc/http-edge) for every request, then one scope for the routes,
 * and inside it a scope for forwarded routes whose body parser keeps the raw bytes.
 */
export class GatewayHttp {
  readonly routes = new RouteTable();

  constructor(
    private readonly catalog: CatalogService,
    private readonly forward: ForwardService,
    private readonly redis: MainRedisClient,
    private readonly log: Logger,
    private readonly search?: { auth: AuthChain; service: SearchService; rateLimit: RateLimitHeaders; metrics?: SearchMetrics },
    private readonly http?: HttpMetrics,
    private readonly drain?: DrainState,
    private readonly mcp?: McpEndpoint,
    /** HTTP_MAX_BODY_DEPTH: JSON bodies (searches, MCP, forwarded ones) deeper than this are 400. */
    private readonly maxBodyDepth: number = DEFAULT_MAX_BODY_DEPTH,
  ) {}

  install(fastify: FastifyInstance): void {
    const http = this.http;
    const searchMetrics = this.search?.metrics;
    installEdge(fastify, this.log, this.routes, {
      tracing: requestTracing(),
      observe: (request, route, status, durationMs) => {
        http?.observe(request.method, route, status, durationMs);
        // A search's (or an extract's) access line also carries its account, key, models, outcome and cost.
        return (route === SEARCH_ROUTE || route === EXTRACT_ROUTE) && searchMetrics !== undefined ? searchMetrics.answered(request, status, durationMs) : undefined;
      },
      // While draining, every reply (searches in flight too) says `connection: close`.
      ...(this.drain === undefined ? {} : { drain: this.drain }),
      maxBodyDepth: this.maxBodyDepth,
    });
    void fastify.register(async (scope) => {
      scope.setErrorHandler((error, request, reply) => sendError(reply, request.id, error, this.log));
      const search = this.search;
      registerHealthRoutes(scope, this.redis, search === undefined ? undefined : () => search.service.batchReady, this.drain);
      registerCatalogRoutes(scope, this.catalog);
      registerOpenApiRoutes(scope);
      if (this.search !== undefined) registerSearchRoutes(scope, this.search.auth, this.search.service, this.search.rateLimit, this.log, this.search.metrics);
      this.mcp?.register(scope);
      await scope.register(async (forwardScope) => {
        forwardScope.removeAllContentTypeParsers();
        // Forwarded bodies stay bytes; one too deep is refused here, before it travels on.
        const maxBodyDepth = this.maxBodyDepth;
        forwardScope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body: Buffer, done) => {
          try {
            checkBodyDepth(body, maxBodyDepth);
            done(null, body);
          } catch (error) {
            done(error as Error, undefined);
          }
        });
        this.forward.register(forwardScope);
      });
    });
  }
}
