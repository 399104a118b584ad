import { createServiceLogger } from '@svc/logging';
import type { Logger } from 'pino';

export type { Logger } from 'pino';

/** Nest injection token of the pino root logger. */
export const LOGGER = Symbol('LOGGER');

/**
 * The service's pino logger (the platform's one log schema, @svc/logging). Lines carry
 * `request_id` through child loggers; secrets, cookies and whole rows are never passed to it
 * (redaction is a second line of defence).
 */
export function createLogger(level: string): Logger {
  return createServiceLogger({ service: 'account-admin', level });
}
