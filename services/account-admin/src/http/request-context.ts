import { timingSafeEqual, createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { INTERNAL_HEADERS } from '@svc/contracts';
import { newRequestId } from '@svc/ids';
import type { Logger } from '../logging/logger';

/** Per-request facts every handler and the error filter need. */
export interface RequestContext {
  requestId: string;
  /** True when x-svc-internal-token matched INTERNAL_TOKEN. */
  internal: boolean;
  log: Logger;
}

const contexts = new WeakMap<IncomingMessage, RequestContext>();
const REQUEST_ID = /^req_[0-9A-Za-z]{24,64}$/;

/** Constant-time equality of two strings (compared as SHA-256 digests, so lengths do not leak). */
export function safeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest();
  const db = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(da, db);
}

function header(request: { headers: IncomingMessage['headers'] }, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

export function headerOf(request: FastifyRequest, name: string): string | undefined {
  return header(request, name);
}

/** The request's context; created on first use for paths that skipped the hook. */
export function contextOf(request: FastifyRequest | IncomingMessage, fallbackLog: Logger): RequestContext {
  const raw = 'raw' in request ? request.raw : request;
  const existing = contexts.get(raw);
  if (existing !== undefined) return existing;
  const requestId = newRequestId();
  const created: RequestContext = { requestId, internal: false, log: fallbackLog.child({ request_id: requestId }) };
  contexts.set(raw, created);
  return created;
}

/**
 * Fastify hooks: decide the request id (the gateway's, when the internal token is valid),
 * echo it as x-svc-request-id on every response, log one line per request.
 */
export function installRequestContext(fastify: FastifyInstance, internalToken: string, logger: Logger): void {
  fastify.addHook('onRequest', async (request, reply) => {
    const token = header(request, INTERNAL_HEADERS.token);
    const internal = token !== undefined && safeEqual(token, internalToken);
    const incoming = header(request, INTERNAL_HEADERS.requestId);
    const requestId = internal && incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : newRequestId();
    contexts.set(request.raw, { requestId, internal, log: logger.child({ request_id: requestId }) });
    void reply.header(INTERNAL_HEADERS.requestId, requestId);
  });
  fastify.addHook('onResponse', async (request, reply) => {
    const context = contextOf(request, logger);
    context.log.info(
      { method: request.method, path: request.url.split('?')[0], status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      'request',
    );
  });
}
