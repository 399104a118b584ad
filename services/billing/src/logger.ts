import { createServiceLogger } from '@svc/logging';
import type { Logger } from 'pino';

/** The process's logger (the platform's one log schema, @svc/logging): `billing`, or `ledger-worker` for dist/worker.js. */
export function createLogger(level: string, service: 'billing' | 'ledger-worker' | 'research-worker' = 'billing'): Logger {
  return createServiceLogger({ service, level });
}
