/**
 * A pass run on start and then `intervalMs` after each pass ends (never two at once in one
 * process), for account-admin's background work (the key-cache outbox, the OAuth sweep). A pass
 * that throws is reported to `failed` and the loop goes on; `stop` ends the loop and waits for a
 * pass in progress. The timer never keeps the process alive.
 */
export class PeriodicLoop {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private ended = false;

  constructor(
    private readonly pass: () => Promise<void>,
    private readonly intervalMs: number,
    private readonly failed: (error: unknown) => void,
  ) {}

  /** True once `stop` was called: a long pass checks it between batches. */
  get stopped(): boolean {
    return this.ended;
  }

  /** Starts with an immediate pass. */
  start(): void {
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.ended = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.ended) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.pass()
        .catch((error: unknown) => {
          if (!this.ended) this.failed(error);
        })
        .finally(() => {
          this.running = null;
          this.schedule(this.intervalMs);
        });
    }, delayMs);
    this.timer.unref();
  }
}
