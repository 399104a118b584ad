import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { INTERNAL_HEADERS } from '@svc/contracts';
import { AppError, methodNotAllowedBody, routeNotFoundBody } from '@svc/errors';
import { newRequestId } from '@svc/ids';
import { LogController } from 'fastify';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { DEFAULT_MAX_BODY_DEPTH, installJsonBodyParser } from './body/json-body';
import type { DrainState } from './drain';
import { rawErrorResponse, sendError } from './error-reply';
import type { RequestIdSource } from './request-ids';
import { RouteTable } from './route-table';

/** The longest path segment a route parameter takes; longer is 414 in the platform's shape. */
export const MAX_PARAM_LENGTH = 256;

export interface EdgeSettings {
  /** How each request is named (x-svc-request-id and every body's request_id). */
  requestIds: RequestIdSource;
  /** Largest request body accepted (413 above it). */
  bodyLimitBytes: number;
  /**
   * The whole request (headers and body) must arrive within this many milliseconds, else
   * 408 and the connection is closed (HTTP_REQUEST_TIMEOUT_MS; a slow sender holds nothing
   * for long).
   */
  requestTimeoutMs: number;
  log: Logger;
  /**
   * Give every request a child logger (`request.log`, bound to `request_id`). Off on the
   * gateway's hot path, where a child per request is measurable; handlers there log
   * through the service's logger with the id themselves.
   */
  requestLoggers?: boolean;
}

/** The Fastify options the edge needs (pass to `fastify()` or Nest's FastifyAdapter). */
export interface EdgeServerOptions {
  genReqId: (request: IncomingMessage) => string;
  requestIdHeader: false;
  logger?: false;
  loggerInstance?: Logger;
  logController: LogController;
  bodyLimit: number;
  routerOptions: { maxParamLength: number };
  requestTimeout: number;
  http: { requestTimeout: number; headersTimeout: number; connectionsCheckingInterval: number };
  frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void;
  clientErrorHandler: (error: Error & { code?: string }, socket: Socket) => void;
}

/**
 * Why a connection's request could not be read, as (status, message); null when the
 * connection is gone and nothing can be written.
 */
export function clientErrorReply(error: Error & { code?: string }): { status: number; message: string } | null {
  switch (error.code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return null;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: 'the request was not received in time' };
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, message: 'the request headers are too large' };
    case 'HPE_INVALID_METHOD':
      return { status: 400, message: 'the request method is not valid (methods are upper case)' };
    case 'HPE_INVALID_URL':
      return { status: 400, message: 'the request target is not valid' };
    default:
      return { status: 400, message: 'the request is not valid HTTP' };
  }
}

export function edgeServerOptions(settings: EdgeSettings): EdgeServerOptions {
  const timeout = settings.requestTimeoutMs;
  return {
    genReqId: settings.requestIds,
    requestIdHeader: false,
    ...(settings.requestLoggers === true ? { loggerInstance: settings.log } : { logger: false }),
    // The edge writes its own access line (never the query string); Fastify's would log the URL.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    bodyLimit: settings.bodyLimitBytes,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    requestTimeout: timeout,
    // Node checks request deadlines on this interval (30 s by default), so the bound holds
    // to within a second.
    http: { requestTimeout: timeout, headersTimeout: timeout, connectionsCheckingInterval: 1_000 },
    frameworkErrors: (error, request, reply) => {
      sendError(reply, request.id, error, settings.log);
    },
    clientErrorHandler: (error, socket) => {
      const reply = clientErrorReply(error);
      if (reply === null || socket.destroyed) return;
      // A response already under way on this connection cannot be replaced; close it.
      // Node sets _httpMessage to null once a response has finished with the socket (a client
      // that closes after a request refused before its body was read ends up here so).
      const pending = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
      if (!socket.writable || pending?.headersSent === true) {
        socket.destroy();
        return;
      }
      settings.log.info({ status: reply.status, err: error.code ?? error.name }, 'client error');
      socket.end(rawErrorResponse(reply.status, reply.message, newRequestId()), () => socket.destroy());
    },
  };
}

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

/** What the access log writes per request; never the query string, headers or a body. */
export interface AccessLogFields {
  request_id: string;
  method: string;
  /** The route pattern (`/v1/keys/:id`), or null for a request no route matched. */
  route: string | null;
  status: number;
  duration_ms: number;
}

/**
 * Told of every answered request by the edge's onResponse hook (after the reply was
 * written): the request, the route pattern (null when no route matched), the status and the
 * duration in milliseconds. The services' HTTP metrics are one of these. What it returns is
 * added to the request's access line (e.g. a search's account, key, models and cost).
 */
export type ResponseObserver = (request: FastifyRequest, route: string | null, status: number, durationMs: number) => object | undefined;

/** Request tracing (e.g. @svc/tracing's requestTracing()): a span per routed request. */
export interface EdgeTracing {
  /** Starts the request's span and runs the rest of the request (`next`) inside it. */
  enter(request: FastifyRequest, next: () => void): void;
  /** Ends the request's span (after the reply). */
  end(request: FastifyRequest, status: number): void;
}

export interface EdgeOptions {
  /** Counts every answered request (e.g. HttpMetrics.observe); one call, no second hook. */
  observe?: ResponseObserver;
  /** Unset (tracing off): nothing per request. */
  tracing?: EdgeTracing;
  /**
   * The process's drain: while it drains, every reply (requests in flight too) carries
   * `connection: close`. One onSend hook, installed only when given.
   */
  drain?: DrainState;
  /**
   * The deepest nesting of objects and arrays a JSON body may have (HTTP_MAX_BODY_DEPTH,
   * default 32). The edge's `application/json` parser scans the raw bytes for it before
   * JSON.parse: a deeper body is 400 invalid_request and nothing walks it. A service that
   * replaces the parser (a raw-body or catch-all one) calls `checkBodyDepth` itself.
   */
  maxBodyDepth?: number;
  /**
   * Install the edge's JSON parser now (default). False where the framework registers its
   * own later (Nest's body parsers): call `installJsonBodyParser` after it did.
   */
  jsonBodyParser?: boolean;
}

/**
 * Installs the edge on a Fastify instance (before any route): the route table, the request
 * id header on every response, 400 for a malformed query string, 404/405 for unmatched
 * requests, the access log, and with `drain` the `connection: close` of a draining process.
 * Returns the route table. Errors thrown by handlers go to
 * `sendError`: through `EdgeExceptionFilter` in a Nest application, or a scope's
 * `setErrorHandler` on plain Fastify routes.
 */
export function installEdge(fastify: FastifyInstance, log: Logger, routes: RouteTable = new RouteTable(), options: EdgeOptions = {}): RouteTable {
  const observe = options.observe;
  const tracing = options.tracing;
  if (options.jsonBodyParser !== false) installJsonBodyParser(fastify, { maxBodyDepth: options.maxBodyDepth ?? DEFAULT_MAX_BODY_DEPTH });
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
      const safePath = path.length > 200 ? `${path.slice(0, 200)}…` : path;
      if (allowed.length === 0) {
        reply.code(404).type('application/json; charset=utf-8').send(routeNotFoundBody(request.method, safePath, request.id));
      } else {
        reply
          .code(405)
          .header('allow', allowed.join(', '))
          .type('application/json; charset=utf-8')
          .send(methodNotAllowedBody(request.method, safePath, allowed, request.id));
      }
      return;
    }
    if (tracing === undefined) done();
    else tracing.enter(request, done);
  });

  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.is404 ? null : (request.routeOptions.url ?? null);
    const status = reply.statusCode;
    const elapsed = reply.elapsedTime;
    const extra = observe === undefined ? undefined : observe(request, route, status, elapsed);
    if (tracing !== undefined) tracing.end(request, status);
    // The access log is at info: below that level nothing is built for it.
    if (log.isLevelEnabled('info')) {
      const fields: AccessLogFields = {
        request_id: request.id,
        method: request.method,
        route,
        status,
        duration_ms: Math.round(elapsed * 100) / 100,
      };
      log.info(extra === undefined ? fields : Object.assign(fields, extra), 'request');
    }
    done();
  });

  const drain = options.drain;
  if (drain !== undefined) {
    // While draining, every reply (requests in flight too) tells the client to close the
    // connection, so none is left idle on this process when it stops accepting.
    fastify.addHook('onSend', function closeWhileDraining(_request, reply, payload, done) {
      if (drain.draining) void reply.header('connection', 'close');
      done(null, payload);
    });
  }
  return routes;
}
