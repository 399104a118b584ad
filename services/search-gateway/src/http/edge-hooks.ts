import { AppError, methodNotAllowedBody, routeNotFoundBody } from '@svc/errors';
import { INTERNAL_HEADERS } from '@svc/contracts';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { sendError } from './error-reply';
import type { RouteTable } from './route-table';

/** True unless the query has a broken percent-escape or escapes that are not UTF-8. */
export function isWellFormedQuery(query: string): boolean {
  if (!query.includes('%')) return true;
  try {
    decodeURIComponent(query.replace(/\+/g, ' '));
    return true;
  } catch {
    return false;
  }
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * Root hooks that run for every request, matched or not: the request id header, the
 * malformed-query check, 404/405 for unmatched requests, and the access log (request id,
 * method, path, status, duration; never headers).
 */
export function installEdgeHooks(fastify: FastifyInstance, routes: RouteTable, log: Logger): void {
  fastify.addHook('onRoute', (options) => {
    routes.add(options.method, options.url ?? options.path);
  });

  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header(INTERNAL_HEADERS.requestId, request.id);
    const url = request.url;
    const q = url.indexOf('?');
    if (q !== -1 && !isWellFormedQuery(url.slice(q + 1))) {
      sendError(reply, request.id, new AppError('invalid_request', 'the query string is malformed'), log);
      return;
    }
    if (request.is404) {
      const path = pathOf(url);
      const allowed = routes.allowed(path);
      if (allowed.length === 0) {
        reply.code(404).type('application/json; charset=utf-8').send(routeNotFoundBody(request.method, path, request.id));
      } else {
        reply
          .code(405)
          .header('allow', allowed.join(', '))
          .type('application/json; charset=utf-8')
          .send(methodNotAllowedBody(request.method, path, allowed, request.id));
      }
      return;
    }
    done();
  });

  fastify.addHook('onResponse', (request, reply, done) => {
    // The access log is at info: below that level nothing is built for it.
    if (!log.isLevelEnabled('info')) {
      done();
      return;
    }
    log.info(
      {
        request_id: request.id,
        method: request.method,
        path: pathOf(request.url),
        status: reply.statusCode,
        duration_ms: Math.round(reply.elapsedTime * 100) / 100,
      },
      'request',
    );
    done();
  });
}
