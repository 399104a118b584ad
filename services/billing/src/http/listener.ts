import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppError } from '@svc/errors';
import { DEFAULT_MAX_BODY_DEPTH, DtoValidationPipe, EdgeExceptionFilter, edgeServerOptions, installEdge, installJsonBodyParser } from '@svc/http-edge';
import type { DrainState, RequestIdSource } from '@svc/http-edge';
import type { HttpMetrics } from '@svc/metrics';
import { requestTracing } from '@svc/tracing';
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

export interface ListenerOptions {
  module: DynamicModule;
  logger: Logger;
  requestIds: RequestIdSource;
  requestTimeoutMs: number;
  /** Counts every answered request (http_requests_total, http_request_duration_seconds). */
  http?: HttpMetrics;
  /** The process's drain: while it drains, every reply carries `connection: close`. */
  drain?: DrainState;
  /** HTTP_MAX_BODY_DEPTH (default 32): a JSON body nested deeper is 400 before it is parsed. */
  maxBodyDepth?: number;
}

/** Largest request body accepted (a Stripe event is a few KB). */
const BODY_LIMIT_BYTES = 1024 * 1024;

function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const type = (value.split(';')[0] ?? '').trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/**
 * One Nest application on its own Fastify instance, behind the shared edge (@svc/http-edge:
 * request ids, the error reply, 404/405, timeouts, the access log, `connection: close` while
 * the process drains) with the one DTO
 * validation pipe. A body that is not JSON is 400 invalid_request (Nest also registers a
 * form parser, which this API never accepts).
 */
export async function createListener(options: ListenerOptions): Promise<NestFastifyApplication> {
  const maxBodyDepth = options.maxBodyDepth ?? DEFAULT_MAX_BODY_DEPTH;
  const adapter = new FastifyAdapter(
    edgeServerOptions({
      requestIds: options.requestIds,
      bodyLimitBytes: BODY_LIMIT_BYTES,
      requestTimeoutMs: options.requestTimeoutMs,
      log: options.logger,
      requestLoggers: true,
    }),
  );
  const fastify = adapter.getInstance();
  const http = options.http;
  installEdge(fastify, options.logger, undefined, {
    tracing: requestTracing(),
    ...(http === undefined ? {} : {
      observe: (request: FastifyRequest, route: string | null, status: number, durationMs: number) => {
        http.observe(request.method, route, status, durationMs);
        return undefined;
      },
    }),
    ...(options.drain === undefined ? {} : { drain: options.drain }),
    maxBodyDepth,
    // Nest adds its body parsers on init; the edge's JSON parser replaces them after it.
    jsonBodyParser: false,
  });
  fastify.addHook('preValidation', async (request) => {
    if (request.body !== undefined && !isJsonContentType(request.headers['content-type'])) {
      throw new AppError('invalid_request', 'body must be JSON (content-type: application/json)');
    }
  });
  const app = await NestFactory.create<NestFastifyApplication>(options.module, adapter, { logger: false, abortOnError: false });
  app.useGlobalFilters(new EdgeExceptionFilter(options.logger));
  app.useGlobalPipes(new DtoValidationPipe({ maxBodyDepth }));
  await app.init();
  // Nest registered its own JSON parser on init; the edge's (depth scan first) replaces it.
  installJsonBodyParser(fastify, { maxBodyDepth });
  return app;
}
