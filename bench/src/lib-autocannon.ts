/**
 * One load round with autocannon, run as its own process through its CLI (`--json`), so
 * the load generator never shares an event loop with the benchmark driver. Returns the
 * figures the benchmarks print: requests/s, latency percentiles and every non-2xx answer.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '@svc/test-kit';

export interface LoadOptions {
  url: string;
  connections: number;
  durationSeconds: number;
  /** Stop after this many requests instead (duration is then only an upper bound). */
  amount?: number;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** Requests per second over all connections (autocannon --overallRate); default: as fast as answered. */
  rate?: number;
  /** Hard stop for the autocannon process (default: duration + 30 s). */
  killAfterMs?: number;
  /** Replace `[<id>]` in the body with a new id on every request (autocannon -I): every request a different body. */
  idReplacement?: boolean;
  /** Seconds a request may take before autocannon counts it as a timeout (autocannon -t; its default 10). */
  timeoutSeconds?: number;
}

export interface LoadResult {
  requestsPerSecond: number;
  /** Completed responses of any status. */
  total: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  non2xx: number;
  /** Connection errors and timeouts (no response at all). */
  errors: number;
  timeouts: number;
  /** Count per HTTP status. */
  statusCodes: Record<string, number>;
  durationSeconds: number;
}

function num(record: Record<string, unknown>, path: string[]): number {
  let node: unknown = record;
  for (const part of path) {
    if (typeof node !== 'object' || node === null) return Number.NaN;
    node = (node as Record<string, unknown>)[part];
  }
  return typeof node === 'number' ? node : Number.NaN;
}

/** Parses autocannon's `--json` result object. */
export function parseAutocannonJson(text: string): LoadResult {
  const line = text.trim().split('\n').filter((l) => l.startsWith('{')).pop();
  if (line === undefined) throw new Error(`autocannon printed no JSON: ${text.slice(0, 500)}`);
  const raw = JSON.parse(line) as Record<string, unknown>;
  const statusCodes: Record<string, number> = {};
  const stats = raw.statusCodeStats;
  if (typeof stats === 'object' && stats !== null) {
    for (const [code, value] of Object.entries(stats as Record<string, unknown>)) {
      const count = typeof value === 'object' && value !== null ? (value as Record<string, unknown>).count : undefined;
      if (typeof count === 'number') statusCodes[code] = count;
    }
  }
  const duration = num(raw, ['duration']);
  const total = num(raw, ['requests', 'total']);
  return {
    // `requests.average` is the mean of per-second samples; total/duration counts every response.
    requestsPerSecond: total / duration,
    total,
    latencyMs: {
      p50: num(raw, ['latency', 'p50']),
      p90: num(raw, ['latency', 'p90']),
      p99: num(raw, ['latency', 'p99']),
      max: num(raw, ['latency', 'max']),
      mean: num(raw, ['latency', 'mean']),
    },
    non2xx: num(raw, ['non2xx']),
    errors: num(raw, ['errors']),
    timeouts: num(raw, ['timeouts']),
    statusCodes,
    durationSeconds: duration,
  };
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const args = [
    join(repoRoot(), 'node_modules/autocannon/autocannon.js'),
    '--json', '--no-progress',
    '-c', String(options.connections),
    ...(options.amount === undefined ? ['-d', String(options.durationSeconds)] : ['-a', String(options.amount)]),
    '-m', options.method,
    ...(options.rate === undefined ? [] : ['-R', String(options.rate)]),
    ...(options.idReplacement === true ? ['-I'] : []),
    ...(options.timeoutSeconds === undefined ? [] : ['-t', String(options.timeoutSeconds)]),
  ];
  for (const [name, value] of Object.entries(options.headers)) args.push('-H', `${name}=${value}`);
  if (options.body !== undefined) args.push('-b', options.body);
  args.push(options.url);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '' } });
  const out: string[] = [];
  const err: string[] = [];
  child.stdout.on('data', (data: Buffer) => out.push(data.toString('utf8')));
  child.stderr.on('data', (data: Buffer) => err.push(data.toString('utf8')));
  const killAfter = options.killAfterMs ?? options.durationSeconds * 1000 + 30_000;
  const timer = setTimeout(() => child.kill('SIGKILL'), killAfter);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (status) => resolve(status)));
  clearTimeout(timer);
  if (code !== 0) throw new Error(`autocannon exited with ${String(code)}: ${err.join('').slice(0, 2000)}`);
  return parseAutocannonJson(out.join(''));
}
