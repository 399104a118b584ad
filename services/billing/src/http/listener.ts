import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppError } from '@svc/errors';
import type { Logger } from 'pino';
import { ErrorFilter } from './exception.filter';
import type { RequestIdGenerator } from './request-id';
import { RouteTable } from './route-table';

export interface ListenerOptions {
  module: DynamicModule;
  logger: Logger;
  requestIds: RequestIdGenerator;
}

function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const type = (value.split(';')[0] ?? '').trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/**
 * One Nest application on its own Fastify instance. Every response carries
 * x-svc-request-id; every error goes through ErrorFilter; a body that is not JSON is
 * 400 invalid_request (Nest also registers a form parser, which this API never accepts).
 */
export async function createListener(options: ListenerOptions): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    loggerInstance: options.logger,
    genReqId: options.requestIds,
  });
  const fastify = adapter.getInstance();
  const routes = new RouteTable();
  fastify.addHook('onRoute', (route) => routes.add(route.url, route.method));
  fastify.addHook('onRequest', async (request, reply) => {
    void reply.header('x-svc-request-id', request.id);
  });
  fastify.addHook('preValidation', async (request) => {
    if (request.body !== undefined && !isJsonContentType(request.headers['content-type'])) {
      throw new AppError('invalid_request', 'body must be JSON (content-type: application/json)');
    }
  });
  const app = await NestFactory.create<NestFastifyApplication>(options.module, adapter, { logger: false, abortOnError: false });
  app.useGlobalFilters(new ErrorFilter(routes));
  await app.init();
  return app;
}
