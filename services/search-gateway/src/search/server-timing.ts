import { performance } from 'node:perf_hooks';

/**
 * How long a search waited on providers: the time at least one provider call was in flight
 * (parallel calls count once, fallbacks one after the other add up). A search's `upstream`;
 * its total minus this is the platform's own time (`gateway`), exported per answer as
 * `Server-Timing` and per search in gateway_search_overhead_seconds. Two additions per
 * provider call; the clock is read by the attempt (its two reads also time provider health).
 */
export class UpstreamTimer {
  private inFlight = 0;
  private startedAt = 0;
  private doneMs = 0;

  /** A provider call starts at `nowMs` (performance.now(), read once by the caller for every use of it). */
  begin(nowMs: number): void {
    if (this.inFlight++ === 0) this.startedAt = nowMs;
  }

  /** A provider call ended at `nowMs` (the same clock). */
  end(nowMs: number): void {
    if (--this.inFlight === 0) this.doneMs += nowMs - this.startedAt;
  }

  /** Milliseconds spent waiting on providers so far (a call still in flight counts to now). */
  get ms(): number {
    return this.inFlight > 0 ? this.doneMs + (performance.now() - this.startedAt) : this.doneMs;
  }
}

/** Milliseconds with at most one decimal, as Server-Timing's `dur` (never negative). */
function dur(ms: number): string {
  return (Math.max(0, Math.round(ms * 10)) / 10).toString();
}

/**
 * The `Server-Timing` header of a search answer (W3C Server Timing): `gateway` is the
 * platform's own time (total minus upstream), `upstream` the providers' time, both in ms.
 */
export function serverTimingHeader(totalMs: number, upstreamMs: number): string {
  return `gateway;dur=${dur(totalMs - upstreamMs)}, upstream;dur=${dur(upstreamMs)}`;
}
