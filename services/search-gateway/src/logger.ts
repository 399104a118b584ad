import { createServiceLogger } from '@svc/logging';
import type { Logger } from 'pino';

/**
 * The service's logger (the platform's one log schema, @svc/logging). Call sites log ids,
 * hashes and outcomes only; the redaction is a second line of defence should a header object
 * ever reach a log line.
 */
export function createLogger(level: string): Logger {
  return createServiceLogger({ service: 'search-gateway', level });
}
