import { Catch, HttpException, NotFoundException } from '@nestjs/common';
import type { ArgumentsHost, ExceptionFilter } from '@nestjs/common';
import { AppError, errorBody, methodNotAllowedBody, routeNotFoundBody } from '@svc/errors';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RouteTable } from './route-table';

interface FastifyLikeError {
  code?: unknown;
  statusCode?: unknown;
}

/**
 * The one mapping from anything thrown to the spec's error body. AppError keeps its code;
 * Nest's own route-not-found becomes 404 or 405; Fastify's body errors (invalid JSON,
 * unsupported media type, too large) become 400 invalid_request; anything else is a bare
 * 500 `internal` whose cause is logged, never echoed.
 */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  constructor(private readonly routes: RouteTable) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const requestId = request.id;
    reply.header('x-svc-request-id', requestId);

    if (exception instanceof AppError) {
      if (exception.extra.retryAfterSeconds !== undefined) reply.header('retry-after', String(exception.extra.retryAfterSeconds));
      void reply.status(exception.status).send(errorBody(exception, requestId));
      return;
    }
    if (exception instanceof NotFoundException) {
      const allowed = this.routes.allowedMethods(request.url);
      const path = request.url.split('?')[0] ?? request.url;
      if (allowed.length > 0) {
        void reply.status(405).header('allow', allowed.join(', ')).send(methodNotAllowedBody(request.method, path, allowed, requestId));
      } else {
        void reply.status(404).send(routeNotFoundBody(request.method, path, requestId));
      }
      return;
    }
    const clientProblem = describeClientError(exception);
    if (clientProblem !== undefined) {
      void reply.status(400).send(errorBody(new AppError('invalid_request', clientProblem), requestId));
      return;
    }
    request.log.error({ err: exception }, 'unhandled error');
    void reply.status(500).send(errorBody(exception, requestId));
  }
}

/** A message for errors the client caused before a handler ran, else undefined. */
function describeClientError(exception: unknown): string | undefined {
  const { code, statusCode } = (typeof exception === 'object' && exception !== null ? exception : {}) as FastifyLikeError;
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return 'body must be JSON (content-type: application/json)';
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return 'body is too large';
  if (code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return 'body is empty; send a JSON object';
  if (typeof code === 'string' && code.startsWith('FST_ERR_CTP_')) return 'body is not valid JSON';
  if (exception instanceof SyntaxError) return 'body is not valid JSON';
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    if (status === 400 || status === 413 || status === 415) return 'body is not valid JSON';
    return undefined;
  }
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) return 'malformed request';
  return undefined;
}
