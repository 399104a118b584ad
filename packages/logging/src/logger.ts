import pino from 'pino';
import type { DestinationStream, Logger } from 'pino';

/** An error as one log field: `Name: message` (never a stack of request data, never an object). */
export function errText(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') {
    return String((error as { message: string }).message);
  }
  return String(error);
}

/**
 * Paths every service redacts: a second line of defence should a header object or a body
 * reach a line (call sites log ids and outcomes only). Static paths only: a wildcard path
 * (`*.authorization`) makes pino walk every field of every line, about 8 µs per line here
 * (measured once: docs/decisions/0017 and 0019).
 */
const REDACTED = [
  'authorization', 'cookie', 'secret', 'password', 'token', 'api_key',
  'headers.authorization', 'headers.cookie', 'headers["x-svc-internal-token"]',
  'req.headers.authorization', 'req.headers.cookie', 'req.headers["x-svc-internal-token"]',
  'body.password', 'body.secret',
];

export interface ServiceLoggerOptions {
  /** search-gateway, account-admin, billing or ledger-worker: the `service` field of every line. */
  service: string;
  level: string;
  /** Where lines go (default stdout); tests pass a stream to read them. */
  destination?: DestinationStream;
}

/**
 * The one logger every service makes (docs/operations.md "Logs"): JSON lines with `level`,
 * `time` (epoch ms), `service` and `msg`, snake_case fields of LOG_SCHEMA, `err` as text.
 */
export function createServiceLogger(options: ServiceLoggerOptions): Logger {
  const settings = {
    level: options.level,
    base: { service: options.service },
    serializers: { err: errText },
    redact: { paths: REDACTED, censor: '[redacted]' },
  };
  return options.destination === undefined ? pino(settings) : pino(settings, options.destination);
}
