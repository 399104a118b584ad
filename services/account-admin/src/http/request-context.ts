import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { headerValue, isInternal } from '@svc/http-edge';
import type { Logger } from '../logging/logger';

/** Per-request facts every handler needs. */
export interface RequestContext {
  /** The request id the edge chose (the gateway's, when the internal token is valid). */
  requestId: string;
  /** True when x-svc-internal-token matched INTERNAL_TOKEN. */
  internal: boolean;
  log: Logger;
}

const contexts = new WeakMap<IncomingMessage, RequestContext>();

/** A header's single value (absent or repeated is undefined), as the shared edge reads headers. */
export function headerOf(request: FastifyRequest, name: string): string | undefined {
  return headerValue(request.headers, name);
}

/** The request's context, made by the onRequest hook (or on first use). */
export function contextOf(request: FastifyRequest, fallbackLog: Logger): RequestContext {
  const existing = contexts.get(request.raw);
  if (existing !== undefined) return existing;
  const created: RequestContext = { requestId: request.id, internal: false, log: fallbackLog.child({ request_id: request.id }) };
  contexts.set(request.raw, created);
  return created;
}

/** Decides per request whether it came from the gateway (the internal token), once. */
export function installRequestContext(fastify: FastifyInstance, internalToken: string, logger: Logger): void {
  fastify.addHook('onRequest', async (request) => {
    contexts.set(request.raw, {
      requestId: request.id,
      internal: isInternal(request.headers, internalToken),
      log: logger.child({ request_id: request.id }),
    });
  });
}
