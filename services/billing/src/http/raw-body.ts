import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { installJsonBodyParser } from '@svc/http-edge';
import type { FastifyRequest } from 'fastify';

const rawBodies = new WeakMap<FastifyRequest, Buffer>();

/**
 * Replaces the listener's JSON body parser with the edge's (a depth scan of the bytes, then
 * JSON.parse) that also keeps the request's bytes, so the Stripe webhook verifies its
 * signature on the exact raw body (a re-serialised object would not match). Call before
 * listen().
 */
export function keepRawJsonBodies(app: NestFastifyApplication, maxBodyDepth: number): void {
  const fastify = app.getHttpAdapter().getInstance();
  installJsonBodyParser(fastify, {
    maxBodyDepth,
    keepRaw: (request: FastifyRequest, bytes: Buffer) => rawBodies.set(request, bytes),
  });
}

/** The exact bytes of a JSON request body (undefined without one). */
export function rawBodyOf(request: FastifyRequest): Buffer | undefined {
  return rawBodies.get(request);
}
