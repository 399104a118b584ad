import type { Logger } from 'pino';

/**
 * Whether the process is shutting down (SIGTERM or SIGINT received). While draining, /readyz
 * answers 503 `draining` (`drainingReadiness`) so the load balancer stops sending new
 * connections, and every reply carries `connection: close` (`installEdge` with `drain`) so
 * clients leave their kept-alive connections to this process.
 */
export class DrainState {
  private started = false;

  get draining(): boolean {
    return this.started;
  }

  start(): void {
    this.started = true;
  }
}

/** The body of /readyz while the process drains (status 503): the same on every service. */
export interface DrainingReadiness {
  status: 'draining';
  checks: Record<string, never>;
  request_id: string;
}

export function drainingReadiness(requestId: string): DrainingReadiness {
  return { status: 'draining', checks: {}, request_id: requestId };
}

export interface StopOnSignalsOptions {
  /** The process's name in its log lines (`<name> draining`, `<name> stopping`). */
  name: string;
  log: Logger;
  /**
   * Closes what the process started, listeners first: closing a listener stops accepting and
   * waits for the requests in flight. The process exits 0 after it, 1 when it failed.
   */
  close: () => Promise<void>;
  /**
   * Drain before closing: unready and `connection: close` at once, `close` after `delayMs`
   * (SHUTDOWN_DELAY_MS). Without it, `close` runs at once.
   */
  drain?: { state: DrainState; delayMs: number };
}

/**
 * Stops the process once, on the first SIGTERM or SIGINT (a rollout that loses nothing,
 * docs/operations.md "Rollouts"): with `drain`, it turns unready at once and keeps serving
 * for the delay, every reply saying `connection: close`, so load balancers stop sending and
 * clients leave; then `close` stops accepting, the requests in flight finish, and it exits.
 */
export function stopOnSignals(options: StopOnSignalsOptions): void {
  const { name, log, close, drain } = options;
  let stopping = false;
  const closeAndExit = (): void => {
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    if (drain === undefined) {
      log.info({ signal }, `${name} stopping`);
      closeAndExit();
      return;
    }
    drain.state.start();
    log.info({ signal, delay_ms: drain.delayMs }, `${name} draining`);
    setTimeout(closeAndExit, drain.delayMs);
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
