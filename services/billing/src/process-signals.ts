import type { Logger } from 'pino';

/**
 * Stops a billing process (the API or the ledger worker) once on SIGTERM or SIGINT: closes
 * what it started, then exits 0, or 1 when closing failed.
 */
export function stopOnSignals(name: string, logger: Logger, close: () => Promise<void>): void {
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, `${name} stopping`);
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
