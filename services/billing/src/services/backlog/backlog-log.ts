import type { Logger } from 'pino';
import { backlogView } from './backlog.service';
import type { BacklogService } from './backlog.service';

/**
 * Logs the settlement backlog every `everyMs` while records are pending (e.g. PostgreSQL is
 * down), and once more when it has emptied. Returns the function that stops it.
 */
export function logBacklogEvery(backlog: BacklogService, logger: Logger, everyMs: number): () => void {
  let lastLoggedPending = 0;
  const log = async (): Promise<void> => {
    const measured = await backlog.measure();
    if (measured.pendingRecords > 0 || lastLoggedPending > 0) logger.info(backlogView(measured), 'settlement backlog');
    lastLoggedPending = measured.pendingRecords;
  };
  const timer = setInterval(() => {
    log().catch((error: unknown) => logger.warn({ err: error }, 'measuring the backlog failed'));
  }, everyMs);
  return () => clearInterval(timer);
}
