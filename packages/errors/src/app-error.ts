/** The spec's closed set of error codes (section 7). */
export const ERROR_CODES = [
  'invalid_request',
  'unknown_model',
  'unknown_provider',
  'invalid_api_key',
  'key_disabled',
  'key_expired',
  'insufficient_credits',
  'key_limit_exceeded',
  'wrong_key_type',
  'not_found',
  'rate_limited',
  'too_many_concurrent_requests',
  'internal',
  'all_providers_failed',
  'payment_error',
  'overloaded',
  'byok_disabled',
  'payment_disabled',
  'unsupported_filter',
  'ip_not_allowed',
  'model_not_allowed',
  'unsupported_option',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value);
}

/** An element of `attempts` (spec section 2). */
export interface AttemptView {
  model: string;
  source?: string;
  status: 'error' | 'skipped';
  error: string;
  cost_usd?: number;
}

export interface ErrorExtra {
  /** Only on insufficient_credits and key_limit_exceeded. */
  needed_usd?: number;
  /** Only on all_providers_failed, unsupported_filter and unsupported_option. */
  attempts?: AttemptView[];
  /** Seconds; sent as the Retry-After header, not in the body. */
  retryAfterSeconds?: number;
}

/**
 * The one error type of the platform. Domain code throws it (or returns it as an outcome);
 * one filter per transport maps it. `message` is for humans and never carries a secret or
 * an internal fault's text.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly extra: ErrorExtra;

  constructor(code: ErrorCode, message: string, extra: ErrorExtra = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.extra = extra;
  }

  get status(): number {
    return httpStatusOf(this.code);
  }
}

/** One exhaustive mapping from code to HTTP status. */
export function httpStatusOf(code: ErrorCode): number {
  switch (code) {
    case 'invalid_request':
    case 'unknown_model':
    case 'unknown_provider':
    case 'unsupported_filter':
    case 'unsupported_option':
      return 400;
    case 'invalid_api_key':
    case 'key_disabled':
    case 'key_expired':
      return 401;
    case 'insufficient_credits':
    case 'key_limit_exceeded':
      return 402;
    case 'wrong_key_type':
    case 'ip_not_allowed':
    case 'model_not_allowed':
      return 403;
    case 'not_found':
      return 404;
    case 'rate_limited':
    case 'too_many_concurrent_requests':
      return 429;
    case 'internal':
      return 500;
    case 'all_providers_failed':
    case 'payment_error':
      return 502;
    case 'overloaded':
    case 'byok_disabled':
    case 'payment_disabled':
      return 503;
    default: {
      const unreachable: never = code;
      return unreachable;
    }
  }
}

/** gRPC status numbers (grpc-js `status` enum values) for the same codes. */
export function grpcStatusOf(code: ErrorCode): number {
  switch (code) {
    case 'invalid_request':
    case 'unknown_model':
    case 'unknown_provider':
    case 'unsupported_filter':
    case 'unsupported_option':
      return 3; // INVALID_ARGUMENT
    case 'invalid_api_key':
    case 'key_disabled':
    case 'key_expired':
      return 16; // UNAUTHENTICATED
    case 'wrong_key_type':
    case 'ip_not_allowed':
    case 'model_not_allowed':
      return 7; // PERMISSION_DENIED
    case 'not_found':
      return 5; // NOT_FOUND
    case 'insufficient_credits':
    case 'key_limit_exceeded':
      return 9; // FAILED_PRECONDITION
    case 'rate_limited':
    case 'too_many_concurrent_requests':
      return 8; // RESOURCE_EXHAUSTED
    case 'overloaded':
    case 'byok_disabled':
    case 'payment_disabled':
    case 'all_providers_failed':
    case 'payment_error':
      return 14; // UNAVAILABLE
    case 'internal':
      return 13; // INTERNAL
    default: {
      const unreachable: never = code;
      return unreachable;
    }
  }
}
