import pino from 'pino';
import type { Logger } from 'pino';

/**
 * The service's logger. Call sites log ids, hashes and outcomes only; the redaction is a
 * second line of defence should a header object ever reach a log line.
 */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'search-gateway' },
    redact: { paths: ['authorization', '*.authorization', '*.headers.authorization', '*.headers.cookie', '*.headers["x-svc-internal-token"]'], censor: '[redacted]' },
  });
}
