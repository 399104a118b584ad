import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import type { AppConfig } from './config';
import { ErrorFilter } from './http/error.filter';
import { installRequestContext } from './http/request-context';
import type { Logger } from './logging/logger';

/** Largest request body accepted; key and dashboard bodies are a few hundred bytes. */
const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * Builds the application (HTTP on Fastify, gRPC started on bootstrap) without listening:
 * main.ts and the integration tests both call this.
 */
export async function createApp(config: AppConfig, logger: Logger): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config, logger),
    new FastifyAdapter({ bodyLimit: BODY_LIMIT_BYTES }),
    { logger: false, bodyParser: false },
  );
  const fastify = app.getHttpAdapter().getInstance();
  // Bodies arrive as text and are parsed by the handlers, so a bad body is our 400.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  installRequestContext(fastify, config.INTERNAL_TOKEN, logger);
  // Nest routes Fastify's own errors (e.g. a body over the limit) and unmatched routes
  // through its exception layer, so this one filter answers every error.
  app.useGlobalFilters(new ErrorFilter(logger));
  return app;
}
