/**
 * The throughput frontier (latency.ts, part 2): for each target, the most searches per second
 * it answers while its p99 latency stays under 1, 5 and 10 ms, found by an open-loop sweep.
 *
 * Open loop: requests are sent on a fixed schedule (`rate` a second, over a pool of keep-alive
 * connections), whether or not earlier ones have been answered, as independent clients
 * would; a closed loop (a fixed number of connections, each waiting for its answer) would
 * slow down with the target and hide its queueing. The schedule is kept by a timer of about
 * a millisecond, so requests leave in small bursts (at 4,000/s, about four a tick). Each
 * request is timed from the moment it is handed to the client to the end of its body; how
 * late each left against its schedule is recorded too, and a step in which the load
 * generator itself fell behind (p99 of that lag over FRONTIER_MAX_LAG_MS) ends the sweep for
 * every target: past it, the figures measure the generator, not the target.
 *
 * The sweep: rates FRONTIER_START_RPS × FRONTIER_STEP^k; at each rate every target still in the
 * sweep runs one step of FRONTIER_STEP_S seconds (the order alternating by step). A target
 * leaves the sweep at its first step with p99 over the largest bound (10 ms), an answer that
 * is not 2xx, or fewer answers a second than 95 % of the rate (saturated). Its frontier at a
 * bound is the highest rate whose step kept p99 at or under that bound.
 */
import { performance } from 'node:perf_hooks';
import type { Pool } from 'undici';
import { percentile } from './stats';

/** The p99 bounds of the frontier, in ms. */
export const FRONTIER_BOUNDS_MS = [1, 5, 10] as const;

export interface SweepSettings {
  startRps: number;
  step: number;
  stepSeconds: number;
  maxRps: number;
  /** The sweep stops when it has run this long (s), whatever is left. */
  maxSeconds: number;
  /** A step whose p99 send lag is over this (ms) ends the sweep: the load generator fell behind. */
  maxLagMs: number;
}

export interface SweepTarget {
  name: string;
  pool: Pool;
  headers: Record<string, string>;
  body: string;
}

export interface StepResult {
  offered_rps: number;
  achieved_rps: number;
  sent: number;
  ok: number;
  non2xx: number;
  errors: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
  /** How late the requests left against their schedule (the generator's own delay), p99 in ms. */
  send_lag_p99_ms: number;
}

export interface FrontierPoint {
  bound_ms: number;
  /** The highest offered rate whose step kept p99 at or under the bound (0: not even the first; null: no step of this target was measured). */
  rps: number | null;
  /** The p99 of that step. */
  p99_ms: number | null;
  /** true when the sweep ended (its last rate, its time, or the load generator) before the bound was crossed: the frontier is at least `rps`. */
  at_least: boolean;
}

const r3 = (ms: number): number => Math.round(ms * 1000) / 1000;

/** `rate` requests a second for `seconds` seconds, open loop, to one target. */
export async function openLoopStep(target: SweepTarget, rate: number, seconds: number): Promise<StepResult> {
  const total = Math.max(1, Math.round(rate * seconds));
  const latencies = new Float64Array(total).fill(Number.NaN);
  const lags = new Float64Array(total);
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  let lastAnswerAt = 0;
  const pending: Promise<void>[] = [];
  const start = performance.now();
  const send = (index: number, scheduledAt: number): void => {
    const sentAt = performance.now();
    lags[index] = sentAt - scheduledAt;
    pending.push(target.pool.request({ path: '/v1/search', method: 'POST', headers: target.headers, body: target.body }).then(
      async (response) => {
        await response.body.arrayBuffer();
        const end = performance.now();
        lastAnswerAt = Math.max(lastAnswerAt, end);
        latencies[index] = end - sentAt;
        if (response.statusCode >= 200 && response.statusCode < 300) ok++;
        else non2xx++;
      },
      () => {
        errors++;
      },
    ));
  };
  await new Promise<void>((resolve) => {
    let next = 0;
    const tick = (): void => {
      const now = performance.now();
      while (next < total) {
        const scheduledAt = start + (next * 1000) / rate;
        if (scheduledAt > now) break;
        send(next, scheduledAt);
        next++;
      }
      if (next < total) setTimeout(tick, 1);
      else resolve();
    };
    tick();
  });
  await Promise.all(pending);
  const answered = Array.from(latencies).filter((v) => !Number.isNaN(v));
  const elapsedS = Math.max(seconds, (lastAnswerAt - start) / 1000);
  return {
    offered_rps: rate, achieved_rps: Math.round(ok / elapsedS), sent: total, ok, non2xx, errors,
    p50_ms: r3(percentile(answered, 50)), p90_ms: r3(percentile(answered, 90)), p99_ms: r3(percentile(answered, 99)), max_ms: r3(percentile(answered, 100)),
    send_lag_p99_ms: r3(percentile(Array.from(lags), 99)),
  };
}

/** Why a target left the sweep (or why the sweep ended). */
export type SweepEnd = 'over the largest bound' | 'not 2xx' | 'saturated' | 'load generator behind' | 'last rate' | 'time';

export interface SweepResult {
  steps: Record<string, StepResult[]>;
  ended: Record<string, SweepEnd>;
  frontier: Record<string, FrontierPoint[]>;
}

/** The highest rate of `steps` at or under each bound; `atLeast` when the target never crossed it before the sweep ended. */
export function frontierOf(steps: readonly StepResult[], ended: SweepEnd): FrontierPoint[] {
  const outOfSweep = ended === 'load generator behind' || ended === 'last rate' || ended === 'time';
  return FRONTIER_BOUNDS_MS.map((bound) => {
    let best: StepResult | undefined;
    let crossed = false;
    for (const step of steps) {
      const good = step.p99_ms <= bound && step.non2xx === 0 && step.errors === 0 && step.achieved_rps >= 0.95 * step.offered_rps;
      if (!good) {
        crossed = true;
        break;
      }
      best = step;
    }
    const measured = steps.length > 0;
    return { bound_ms: bound, rps: measured ? (best?.offered_rps ?? 0) : null, p99_ms: best?.p99_ms ?? null, at_least: measured && !crossed && outOfSweep };
  });
}

/** The open-loop sweep over every target (see the file's comment), printing each step. */
export async function sweep(targets: readonly SweepTarget[], settings: SweepSettings): Promise<SweepResult> {
  const largest = FRONTIER_BOUNDS_MS[FRONTIER_BOUNDS_MS.length - 1] as number;
  const steps: Record<string, StepResult[]> = Object.fromEntries(targets.map((t) => [t.name, []]));
  const ended: Record<string, SweepEnd> = {};
  const started = performance.now();
  // A short step at the first rate for each target first, not recorded: connections opened, code warm.
  for (const target of targets) await openLoopStep(target, settings.startRps, 1);
  let rate = settings.startRps;
  for (let k = 0; ; k++) {
    const live = targets.filter((t) => ended[t.name] === undefined);
    if (live.length === 0) break;
    const outOfTime = (performance.now() - started) / 1000 > settings.maxSeconds;
    if (rate > settings.maxRps || outOfTime) {
      for (const t of live) ended[t.name] = outOfTime ? 'time' : 'last rate';
      break;
    }
    const order = k % 2 === 0 ? live : [...live].reverse();
    let generatorBehind = false;
    for (const target of order) {
      const step = await openLoopStep(target, Math.round(rate), settings.stepSeconds);
      steps[target.name]?.push(step);
      console.log(`frontier ${target.name} at ${step.offered_rps}/s: ${step.achieved_rps}/s answered, p50 ${step.p50_ms} p99 ${step.p99_ms} ms, non-2xx ${step.non2xx}, errors ${step.errors}, send lag p99 ${step.send_lag_p99_ms} ms`);
      if (step.send_lag_p99_ms > settings.maxLagMs) generatorBehind = true;
      else if (step.non2xx > 0 || step.errors > 0) ended[target.name] = 'not 2xx';
      else if (step.achieved_rps < 0.95 * step.offered_rps) ended[target.name] = 'saturated';
      else if (step.p99_ms > largest) ended[target.name] = 'over the largest bound';
    }
    if (generatorBehind) {
      // This step's figures are the generator's: dropped, and the sweep ends for everyone.
      for (const target of order) steps[target.name]?.pop();
      for (const t of targets) ended[t.name] ??= 'load generator behind';
      break;
    }
    rate *= settings.step;
  }
  const frontier = Object.fromEntries(targets.map((t) => [t.name, frontierOf(steps[t.name] ?? [], ended[t.name] ?? 'last rate')]));
  return { steps, ended, frontier };
}
