import { AppError, errorBody } from '@svc/errors';
import type { FastifyError, FastifyReply } from 'fastify';
import type { Logger } from 'pino';

const FASTIFY_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'the request body is too large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported content-type; send application/json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'the content-length does not match the body',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'the body is empty; send a JSON object',
  FST_ERR_CTP_INVALID_JSON_BODY: 'the body is not valid JSON',
};

function isFastifyError(error: unknown): error is FastifyError {
  return error instanceof Error && typeof (error as Partial<FastifyError>).statusCode === 'number';
}

/**
 * The one mapping from anything thrown on a gateway route to an AppError: AppErrors as
 * they are, Fastify's client errors (body parsing, schema validation) as invalid_request
 * naming the problem, everything else as internal with no detail.
 */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (isFastifyError(error) && error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    if (error.validation !== undefined) {
      return new AppError('invalid_request', `${error.validationContext ?? 'request'} ${error.message}`);
    }
    const known = FASTIFY_MESSAGES[error.code];
    if (known !== undefined) return new AppError('invalid_request', known);
    if (error instanceof SyntaxError) return new AppError('invalid_request', 'the body is not valid JSON');
    return new AppError('invalid_request', 'the request could not be read');
  }
  return new AppError('internal', 'internal error');
}

/** Writes the spec's error body (request id inside `error`) with its status. */
export function sendError(reply: FastifyReply, requestId: string, error: unknown, log: Logger): FastifyReply {
  const appError = toAppError(error);
  if (appError.code === 'internal' && !(error instanceof AppError)) {
    log.error({ request_id: requestId, err: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }, 'unhandled error');
  }
  if (appError.extra.retryAfterSeconds !== undefined) reply.header('retry-after', String(appError.extra.retryAfterSeconds));
  return reply.code(appError.status).type('application/json; charset=utf-8').send(errorBody(appError, requestId));
}
