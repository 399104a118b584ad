import pino from 'pino';
import type { Logger } from 'pino';

export type { Logger } from 'pino';

/** Nest injection token of the pino root logger. */
export const LOGGER = Symbol('LOGGER');

/**
 * The service's pino logger. Lines carry `request_id` through child loggers; secrets,
 * cookies and whole rows are never passed to it (redact is a second line of defence).
 */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'account-admin' },
    redact: { paths: ['secret', '*.secret', 'password', '*.password', 'cookie', '*.cookie', 'token', '*.token'], censor: '[redacted]' },
  });
}
