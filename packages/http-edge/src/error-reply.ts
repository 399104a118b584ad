import { STATUS_CODES } from 'node:http';
import { AppError, errorBody } from '@svc/errors';
import type { ErrorBody } from '@svc/errors';
import type { FastifyReply } from 'fastify';
import type { Logger } from 'pino';

/** Fastify's own request errors, in the platform's words (always 400 invalid_request). */
const FASTIFY_MESSAGES: Readonly<Record<string, string>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'the request body is too large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported content-type; send application/json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'the content-length does not match the body',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'the body is empty; send a JSON object',
  FST_ERR_CTP_INVALID_JSON_BODY: 'the body is not valid JSON',
  FST_ERR_CTP_INVALID_TYPE: 'the content-type header is malformed',
  FST_ERR_CTP_INVALID_CONTENT_TYPE: 'the content-type header is malformed',
  FST_ERR_BAD_URL: 'the request path is malformed (a bad percent-escape)',
  FST_ERR_MAX_PARAM_LENGTH: 'a path segment is too long',
  FST_ERR_ASYNC_CONSTRAINT: 'the request could not be routed',
};

/**
 * Statuses other than 400 that the edge writes for framework errors: a body over the limit
 * is 413 and a path segment over the limit 414 (both still code invalid_request).
 * Everything else the framework refuses before a handler is 400.
 */
const FASTIFY_STATUS: Readonly<Record<string, number>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 413,
  FST_ERR_MAX_PARAM_LENGTH: 414,
};

interface FrameworkError {
  code?: unknown;
  statusCode?: unknown;
  validation?: unknown;
  validationContext?: unknown;
  message?: unknown;
}

/** An error reply: the status, the spec's body and headers to add. */
export interface EdgeErrorReply {
  status: number;
  error: AppError;
}

function frameworkFields(error: unknown): FrameworkError {
  return typeof error === 'object' && error !== null ? (error as FrameworkError) : {};
}

/**
 * The one mapping from anything thrown to an error reply: an AppError as it is; the
 * framework's client errors (body parsing, schema validation, bad URLs, over-long
 * segments, Nest's HTTP exceptions with a 4xx) as invalid_request naming the problem with
 * their 4xx status; everything else a bare 500 internal whose cause is never echoed.
 */
export function toErrorReply(error: unknown): EdgeErrorReply {
  if (error instanceof AppError) return { status: error.status, error };
  if (error instanceof SyntaxError) return { status: 400, error: new AppError('invalid_request', 'the body is not valid JSON') };
  const fields = frameworkFields(error);
  const code = typeof fields.code === 'string' ? fields.code : undefined;
  const statusCode = typeof fields.statusCode === 'number' ? fields.statusCode : httpExceptionStatus(error);
  if (statusCode !== undefined && statusCode >= 400 && statusCode < 500) {
    if (fields.validation !== undefined && typeof fields.message === 'string') {
      const where = typeof fields.validationContext === 'string' ? fields.validationContext : 'request';
      return { status: 400, error: new AppError('invalid_request', `${where} ${fields.message}`) };
    }
    const known = code === undefined ? undefined : FASTIFY_MESSAGES[code];
    const status = (code === undefined ? undefined : FASTIFY_STATUS[code]) ?? 400;
    if (known !== undefined) return { status, error: new AppError('invalid_request', known) };
    if (statusCode === 413) return { status: 413, error: new AppError('invalid_request', 'the request body is too large') };
    // Nest's own 400/415 (its body parsers) are a body that could not be read as JSON.
    if (statusCode === 400 || statusCode === 415) return { status: 400, error: new AppError('invalid_request', 'the body is not valid JSON') };
    return { status: 400, error: new AppError('invalid_request', 'the request could not be read') };
  }
  return { status: 500, error: new AppError('internal', 'internal error') };
}

/** Nest's HttpException exposes its status through getStatus(); no import of Nest needed. */
function httpExceptionStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const getStatus = (error as { getStatus?: unknown }).getStatus;
  if (typeof getStatus !== 'function') return undefined;
  const status: unknown = getStatus.call(error);
  return typeof status === 'number' ? status : undefined;
}

export function describeFault(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * The WWW-Authenticate challenge of a 401 (RFC 6750, section 3): the Bearer scheme, with
 * `error="invalid_token"` when the request carried credentials (RFC 6750 leaves the error
 * out when none were sent). The credential itself is never echoed.
 */
export function bearerChallenge(authorization: string | string[] | undefined, params: Readonly<Record<string, string>> = {}): string {
  const fields = { ...params, ...(authorization === undefined || authorization === '' ? {} : { error: 'invalid_token' }) };
  const list = Object.entries(fields).map(([name, value]) => `${name}="${value.replace(/["\\]/g, '')}"`);
  return list.length === 0 ? 'Bearer' : `Bearer ${list.join(', ')}`;
}

/**
 * Writes the spec's error body (request id inside `error`), its status, Retry-After when
 * the error has one, and x-svc-request-id. A 401 carries `WWW-Authenticate: Bearer` (unless
 * the route set a challenge of its own). Faults are logged here (never echoed).
 */
export function sendError(reply: FastifyReply, requestId: string, error: unknown, log: Logger): FastifyReply {
  const out = toErrorReply(error);
  if (out.status >= 500 && !(error instanceof AppError)) {
    log.error({ request_id: requestId, err: describeFault(error) }, 'unhandled error');
  }
  if (out.error.extra.retryAfterSeconds !== undefined) reply.header('retry-after', String(out.error.extra.retryAfterSeconds));
  if (out.status === 401 && !reply.hasHeader('www-authenticate')) {
    reply.header('www-authenticate', bearerChallenge((reply.request as { headers?: { authorization?: string | string[] } } | undefined)?.headers?.authorization));
  }
  return reply
    .code(out.status)
    .header('x-svc-request-id', requestId)
    .type('application/json; charset=utf-8')
    .send(errorBody(out.error, requestId));
}

/**
 * A whole HTTP/1.1 error response as bytes, for the moments no Fastify reply exists (the
 * connection's request could not be parsed, or did not arrive in time). It closes the
 * connection.
 */
export function rawErrorResponse(status: number, message: string, requestId: string): string {
  const body: ErrorBody = errorBody(new AppError('invalid_request', message), requestId);
  const text = JSON.stringify(body);
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
    'content-type: application/json; charset=utf-8\r\n' +
    `content-length: ${Buffer.byteLength(text)}\r\n` +
    `x-svc-request-id: ${requestId}\r\n` +
    'connection: close\r\n\r\n' +
    text
  );
}
