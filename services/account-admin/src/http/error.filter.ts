import { Catch, HttpException } from '@nestjs/common';
import type { ArgumentsHost, ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, errorBody, methodNotAllowedBody, routeNotFoundBody } from '@svc/errors';
import type { ErrorBody } from '@svc/errors';
import type { Logger } from '../logging/logger';
import { contextOf } from './request-context';
import { allowedMethods } from './routes';

export interface ErrorReply {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
}

/**
 * The one mapping from a thrown value to the spec's error body: AppError by its code, an
 * unmatched route to 404 or 405, a framework 4xx (e.g. a body over the size limit) to 400
 * invalid_request, anything else to a 500 that never echoes the fault's message.
 */
export function toErrorReply(error: unknown, method: string, url: string, requestId: string, log: Logger): ErrorReply {
  if (error instanceof AppError) {
    const headers: Record<string, string> = {};
    if (error.extra.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.extra.retryAfterSeconds);
    return { status: error.status, body: errorBody(error, requestId), headers };
  }
  const path = url.split('?')[0] ?? url;
  const status = error instanceof HttpException ? error.getStatus() : statusOfFrameworkError(error);
  if (status === 404 && error instanceof HttpException) {
    const allowed = allowedMethods(path);
    if (allowed === null || allowed.includes(method)) return { status: 404, body: routeNotFoundBody(method, path, requestId), headers: {} };
    return { status: 405, body: methodNotAllowedBody(method, path, allowed, requestId), headers: { allow: allowed.join(', ') } };
  }
  if (status !== undefined && status >= 400 && status < 500) {
    const message = status === 413 ? 'body is too large' : 'malformed request';
    return { status: 400, body: errorBody(new AppError('invalid_request', message), requestId), headers: {} };
  }
  log.error({ err: error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error) }, 'unexpected error');
  return { status: 500, body: errorBody(error, requestId), headers: {} };
}

function statusOfFrameworkError(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const status = (error as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' ? status : undefined;
}

@Catch()
export class ErrorFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const context = contextOf(request, this.logger);
    const out = toErrorReply(exception, request.method, request.url, context.requestId, context.log);
    void reply.status(out.status).headers(out.headers).header('content-type', 'application/json; charset=utf-8').send(out.body);
  }
}
