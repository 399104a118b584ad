import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { headerValue, isInternal } from '@svc/http-edge';

/** Requests that came from the gateway (x-svc-internal-token matched INTERNAL_TOKEN), decided once each. */
const internal = new WeakSet<IncomingMessage>();

/** A header's single value (absent or repeated is undefined), as the shared edge reads headers. */
export function headerOf(request: FastifyRequest, name: string): string | undefined {
  return headerValue(request.headers, name);
}

/** True when the request carried the valid internal token (the onRequest hook decided it). */
export function isInternalRequest(request: FastifyRequest): boolean {
  return internal.has(request.raw);
}

/** Decides per request whether it came from the gateway (the internal token), once. */
export function installRequestContext(fastify: FastifyInstance, internalToken: string): void {
  fastify.addHook('onRequest', async (request) => {
    if (isInternal(request.headers, internalToken)) internal.add(request.raw);
  });
}
