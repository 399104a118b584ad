import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { checkBodyDepth, DrainState, DtoValidationPipe, EdgeExceptionFilter, edgeServerOptions, installEdge, trustedRequestIds } from '@svc/http-edge';
import { requestTracing } from '@svc/tracing';
import { AppModule } from './app.module';
import type { AppConfig } from './config';
import { installRequestContext } from './http/request-context';
import type { Logger } from './logging/logger';
import { AccountAdminMetrics } from './metrics/metrics';

/** Largest request body accepted; key and dashboard bodies are a few hundred bytes. */
const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * Builds the application (HTTP on Fastify, gRPC started on bootstrap) without listening:
 * main.ts and the integration tests both call this. The HTTP edge (request ids, errors,
 * 404/405, timeouts, access log, `connection: close` while draining) and body validation
 * are @svc/http-edge's. The drain state is the app's `DrainState` provider (main.ts starts
 * it on SIGTERM).
 */
export async function createApp(config: AppConfig, logger: Logger, metrics: AccountAdminMetrics = new AccountAdminMetrics()): Promise<NestFastifyApplication> {
  const drain = new DrainState();
  const adapter = new FastifyAdapter(
    edgeServerOptions({
      requestIds: trustedRequestIds(config.INTERNAL_TOKEN),
      bodyLimitBytes: BODY_LIMIT_BYTES,
      requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
      log: logger,
    }),
  );
  const fastify = adapter.getInstance();
  installEdge(fastify, logger, undefined, {
    tracing: requestTracing(),
    observe: (request, route, status, durationMs) => {
      metrics.http.observe(request.method, route, status, durationMs);
      return undefined;
    },
    drain,
    maxBodyDepth: config.HTTP_MAX_BODY_DEPTH,
  });
  // Bodies arrive as text whatever their content-type; the validation pipe reads them, so
  // every bad body is the platform's 400 naming the problem. One nested too deep is refused
  // here, before anything parses it.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', { parseAs: 'string' }, (_request, body: string, done) => {
    try {
      checkBodyDepth(body, config.HTTP_MAX_BODY_DEPTH);
      done(null, body);
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  installRequestContext(fastify, config.INTERNAL_TOKEN);
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config, logger, metrics, drain), adapter, { logger: false, bodyParser: false });
  app.useGlobalFilters(new EdgeExceptionFilter(logger));
  app.useGlobalPipes(new DtoValidationPipe({ maxBodyDepth: config.HTTP_MAX_BODY_DEPTH }));
  return app;
}
