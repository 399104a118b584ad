import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';

const rawBodies = new WeakMap<FastifyRequest, Buffer>();

class EmptyJsonBodyError extends Error {
  readonly code = 'FST_ERR_CTP_EMPTY_JSON_BODY';
  readonly statusCode = 400;
}

/**
 * Replaces the listener's JSON body parser with one that parses exactly as before and
 * also keeps the request's bytes, so the Stripe webhook verifies its signature on the
 * exact raw body (a re-serialised object would not match). Call before listen().
 */
export function keepRawJsonBodies(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  if (fastify.hasContentTypeParser('application/json')) fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
    rawBodies.set(request, bytes);
    if (bytes.length === 0) {
      done(new EmptyJsonBodyError('body is empty'), undefined);
      return;
    }
    try {
      done(null, JSON.parse(bytes.toString('utf8')) as unknown);
    } catch (error) {
      done(error instanceof Error ? error : new SyntaxError('body is not valid JSON'), undefined);
    }
  });
}

/** The exact bytes of a JSON request body (undefined without one). */
export function rawBodyOf(request: FastifyRequest): Buffer | undefined {
  return rawBodies.get(request);
}
