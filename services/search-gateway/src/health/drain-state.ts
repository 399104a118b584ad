/**
 * Whether the gateway is shutting down (SIGTERM received). While draining, /readyz answers
 * 503 so the load balancer stops sending new connections, and every reply carries
 * `connection: close` so clients leave their kept-alive connections to this process.
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
