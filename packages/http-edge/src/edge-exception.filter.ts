import { Catch } from '@nestjs/common';
import type { ArgumentsHost, ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { sendError } from './error-reply';

/**
 * The Nest side of the edge: whatever a controller, guard or pipe throws is answered by the
 * same `sendError` the Fastify hooks use.
 */
@Catch()
export class EdgeExceptionFilter implements ExceptionFilter {
  constructor(private readonly log: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    sendError(http.getResponse<FastifyReply>(), request.id, exception, this.log);
  }
}
