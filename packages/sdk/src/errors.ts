import { ERROR_CODES } from './types.js';
import type { ApiError, Attempt, ErrorCode, ResearchRun } from './types.js';

const BRAND = Symbol.for('@svc/sdk.SearchGatewayError');
const CONNECTION_BRAND = Symbol.for('@svc/sdk.SearchGatewayConnectionError');

/** A code from the spec's table, or a code this version of the SDK does not know yet. */
export type ErrorCodeOrUnknown = ErrorCode | (string & Record<never, never>);

export function isKnownErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value);
}

export interface SearchGatewayErrorInit {
  status: number;
  body: unknown;
  headers: Headers;
  /** Seconds, from `Retry-After`; null without one. */
  retryAfter: number | null;
}

/**
 * The server answered with a status other than 2xx (or a 2xx whose body is not JSON).
 * Branch on `status` and `code`, never on `message`.
 */
export class SearchGatewayError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** `error.code` of a JSON error body; null when the body is not a JSON error body. */
  readonly code: ErrorCodeOrUnknown | null;
  /** `x-svc-request-id`, else the body's `request_id`; null when neither came. */
  readonly requestId: string | null;
  /** `Retry-After` in seconds; null when absent. */
  readonly retryAfter: number | null;
  /** The parsed JSON body, or the text when it is not JSON. */
  readonly body: unknown;
  /** The error object, typed by its code, when the body is an error body with a known code. */
  readonly error: ApiError | null;
  /** The response headers. */
  readonly headers: Headers;

  constructor(init: SearchGatewayErrorInit) {
    const object = errorObjectOf(init.body);
    const code = object !== null && typeof object.code === 'string' ? object.code : null;
    const text = typeof init.body === 'string' ? init.body.trim() : '';
    const message = object !== null && typeof object.message === 'string'
      ? object.message
      : `HTTP ${init.status}${text === '' ? '' : `: ${text.length > 200 ? `${text.slice(0, 200)}…` : text}`}`;
    super(message);
    this.name = 'SearchGatewayError';
    this.status = init.status;
    this.code = code;
    this.requestId = init.headers.get('x-svc-request-id') ?? (object !== null && typeof object.request_id === 'string' ? object.request_id : null);
    this.retryAfter = init.retryAfter;
    this.body = init.body;
    this.headers = init.headers;
    this.error = object !== null && isKnownErrorCode(code) ? (object as unknown as ApiError) : null;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** `needed_usd` of a 402 (`insufficient_credits`, `key_limit_exceeded`, `max_cost_exceeded`); else null. */
  get neededUsd(): number | null {
    const error = this.error;
    if (error === null) return null;
    return error.code === 'insufficient_credits' || error.code === 'key_limit_exceeded' || error.code === 'max_cost_exceeded' ? error.needed_usd : null;
  }

  /** `attempts` of a 502 `all_providers_failed`, a 400 `unsupported_filter` or `unsupported_option`, or a 402 `max_cost_exceeded`; else null. */
  get attempts(): Attempt[] | null {
    const error = this.error;
    return error !== null && (error.code === 'all_providers_failed' || error.code === 'unsupported_filter' || error.code === 'unsupported_option' || error.code === 'max_cost_exceeded') ? error.attempts : null;
  }

  /** True for any SearchGatewayError, also one made by another copy of the SDK (its ESM and CommonJS builds). */
  static is(value: unknown): value is SearchGatewayError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}

/**
 * No HTTP response came: the connection failed or was closed before an answer. Retried
 * where that is safe (see the README), so this is thrown after the last attempt.
 */
export class SearchGatewayConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SearchGatewayConnectionError';
    Object.defineProperty(this, CONNECTION_BRAND, { value: true });
  }

  static is(value: unknown): value is SearchGatewayConnectionError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[CONNECTION_BRAND] === true;
  }
}

/** No complete answer within `timeoutMs` (on the last attempt). */
export class SearchGatewayTimeoutError extends SearchGatewayConnectionError {
  /** The per-attempt timeout that passed, in milliseconds. */
  readonly timeoutMs: number;

  constructor(timeoutMs: number) {
    super(`no complete answer within ${timeoutMs} ms`);
    this.name = 'SearchGatewayTimeoutError';
    this.timeoutMs = timeoutMs;
  }
}

/**
 * `research.wait` gave up: the run had not ended within `maxWaitMs`. The run goes on (and
 * keeps its hold); `run` is the last state read. Wait again, or cancel it.
 */
export class ResearchWaitTimeoutError extends Error {
  readonly run: ResearchRun;
  readonly maxWaitMs: number;

  constructor(run: ResearchRun, maxWaitMs: number) {
    super(`research run ${run.id} had not ended within ${maxWaitMs} ms (status ${run.status})`);
    this.name = 'ResearchWaitTimeoutError';
    this.run = run;
    this.maxWaitMs = maxWaitMs;
  }
}

function errorObjectOf(body: unknown): Record<string, unknown> | null {
  if (typeof body !== 'object' || body === null) return null;
  const error = (body as Record<string, unknown>).error;
  return typeof error === 'object' && error !== null && !Array.isArray(error) ? (error as Record<string, unknown>) : null;
}
