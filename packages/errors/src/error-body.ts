import { AppError } from './app-error';
import type { AttemptView, ErrorCode } from './app-error';

export interface ErrorBody {
  error: {
    code: ErrorCode;
    message: string;
    request_id: string;
    needed_usd?: number;
    attempts?: AttemptView[];
  };
}

/** The spec's error body. Anything that is not an AppError becomes a bare `internal`. */
export function errorBody(error: unknown, requestId: string): ErrorBody {
  if (!(error instanceof AppError)) {
    return { error: { code: 'internal', message: 'internal error', request_id: requestId } };
  }
  const body: ErrorBody = {
    error: { code: error.code, message: error.message, request_id: requestId },
  };
  if (error.extra.needed_usd !== undefined) body.error.needed_usd = error.extra.needed_usd;
  if (error.extra.attempts !== undefined) body.error.attempts = error.extra.attempts;
  return body;
}

/** Body of a 404 for a path no handler serves. */
export function routeNotFoundBody(method: string, path: string, requestId: string): ErrorBody {
  return {
    error: { code: 'not_found', message: `no route ${method} ${path}`, request_id: requestId },
  };
}

/**
 * Body of a 405. The spec's code set has no code for it (such responses "never reach the
 * API handlers"), so it is an invalid_request with status 405 and an Allow header.
 */
export function methodNotAllowedBody(method: string, path: string, allowed: readonly string[], requestId: string): ErrorBody {
  return {
    error: {
      code: 'invalid_request',
      message: `method ${method} is not allowed on ${path}; allowed: ${allowed.join(', ')}`,
      request_id: requestId,
    },
  };
}
