/**
 * The shape operators compare gateways by (docs/benchmarks.md, "latency"), gateway and bare
 * proxy in one run: POST /v1/search on the started gateway (every check on) against the bare
 * proxy (bare-proxy.ts) forwarding to the same simulator endpoint, the simulator at zero
 * latency; the same stack, proxy, account and body as search.ts (lib-search-setup.ts).
 *
 * Part 1 (`one-connection`): what the gateway adds to one search's latency at one connection.
 * Part 2 (`frontier`): the most searches a second each target answers while its p99 stays
 * under 1, 5 and 10 ms (an open-loop sweep, lib-frontier.ts).
 *
 * Part 1:
 * search.ts measures throughput with autocannon, whose latency percentiles are whole
 * milliseconds: too coarse for a difference of a fraction of a millisecond. Here one
 * keep-alive connection per target (an undici Client) sends strictly sequential requests,
 * the next once the previous reply's body was read to its end, each timed with
 * process.hrtime.bigint() from the send to the end of the body (kept in µs). A warm-up of
 * WARMUP_N requests per target, then ROUNDS paired rounds of N requests per target, gateway
 * first in odd rounds and proxy first in even ones. Per round and target: p50, p90, p99 (exact,
 * nearest rank on the sorted samples), mean and max in ms. Headline: the median over rounds of
 * each target's p50 and p99, and the median of the per-round differences (gateway - proxy).
 * Any non-2xx answer, warm-up included, fails the run (after printing); a request error (no
 * answer within 10 s) stops it at once.
 * The gateway's own account of each answer is read too: Server-Timing's `gateway;dur` (the
 * platform's own time, total minus upstream, as the gateway measured it) per request, its
 * p50/p90/p99 per round and the median over rounds, beside the difference measured from
 * outside (gateway - proxy).
 * Prints Markdown and writes bench/results/latency.json.
 *
 * Env: PARTS (one-connection,frontier: which parts run), ROUNDS (10), N (2000 requests per
 * target per round), WARMUP_N (2000 per target), MODEL (exa/fast), BENCH_REDIS_DB (15),
 * BENCH_GATEWAY_SCRIPT (another build's gateway dist/main.js, to compare two versions);
 * for the frontier FRONTIER_START_RPS (250), FRONTIER_STEP (1.25: each rate this times the
 * last), FRONTIER_STEP_S (4), FRONTIER_MAX_RPS (20000), FRONTIER_MAX_S (240: the sweep's time
 * bound), FRONTIER_CONNECTIONS (64 keep-alive connections per target), FRONTIER_MAX_LAG_MS (3).
 */
import { cpus, loadavg } from 'node:os';
import { Client, Pool } from 'undici';
import { bearer, startStack } from '@svc/test-kit';
import type { Stack } from '@svc/test-kit';
import { median, writeResult } from './lib-results';
import { firstSearches, fundedApiKey, searchBody, startBareProxy } from './lib-search-setup';
import { NO_LIMITS_ENV, BENCH_STACK, knobsFromEnv } from './lib-stack';
import { FRONTIER_BOUNDS_MS, sweep } from './lib-frontier';
import type { SweepResult } from './lib-frontier';
import { percentile } from './stats';

const ROUNDS = positiveInteger('ROUNDS', 10);
const N = positiveInteger('N', 2000);
const WARMUP_N = positiveInteger('WARMUP_N', 2000);
const MODEL = process.env.MODEL ?? 'exa/fast';
const BODY = searchBody(MODEL);
/** PARTS: which parts run, `one-connection`, `frontier` or both (the default). */
const PARTS = new Set((process.env.PARTS ?? 'one-connection,frontier').split(',').map((part) => part.trim()));
if (PARTS.size === 0 || ![...PARTS].every((part) => part === 'one-connection' || part === 'frontier')) throw new Error(`PARTS: one-connection, frontier or both, not ${process.env.PARTS}`);
const FRONTIER = knobsFromEnv({ FRONTIER_START_RPS: 250, FRONTIER_STEP: 1.25, FRONTIER_STEP_S: 4, FRONTIER_MAX_RPS: 20_000, FRONTIER_MAX_S: 240, FRONTIER_CONNECTIONS: 64, FRONTIER_MAX_LAG_MS: 3 });
/** The bar: what the gateway may add at one connection, in ms (median of per-round differences). */
const BAR_MS = { p50: 0.5, p99: 3 } as const;
/** A request that has not answered by then is an error (and fails the run), never a hang. */
const REQUEST_TIMEOUT_MS = 10_000;

function positiveInteger(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}

type Name = 'gateway' | 'proxy';

interface Target {
  name: Name;
  client: Client;
  headers: Record<string, string>;
}

/** One batch of sequential requests to one target: the latency of each in µs, and the non-2xx answers. */
interface Batch {
  samplesUs: Float64Array;
  /** Server-Timing `gateway;dur` of each answer in ms (NaN where the header is absent: the proxy). */
  reportedMs: Float64Array;
  non2xx: number;
  statusCodes: Record<string, number>;
}

interface Stats {
  n: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  mean_ms: number;
  max_ms: number;
}

interface Round {
  first: Name;
  gateway: Stats & { non2xx: number };
  proxy: Stats & { non2xx: number };
  /** The gateway's Server-Timing `gateway;dur` (its own time per search, as it reports it). */
  server_timing_gateway: Stats;
  diff: { p50_ms: number; p90_ms: number; p99_ms: number; mean_ms: number };
}

const ms3 = (ms: number): number => Math.round(ms * 1000) / 1000;

/** `count` requests, strictly one after the other on the target's one connection. */
async function sequential(target: Target, count: number): Promise<Batch> {
  const samplesUs = new Float64Array(count);
  const reportedMs = new Float64Array(count);
  const statusCodes: Record<string, number> = {};
  let non2xx = 0;
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    // A request error (no answer, or none within REQUEST_TIMEOUT_MS) ends the run at once.
    const response = await target.client.request({ path: '/v1/search', method: 'POST', headers: target.headers, body: BODY });
    await response.body.arrayBuffer();
    const end = process.hrtime.bigint();
    samplesUs[i] = Number(end - start) / 1000;
    reportedMs[i] = gatewayDur(response.headers['server-timing']);
    statusCodes[response.statusCode] = (statusCodes[response.statusCode] ?? 0) + 1;
    if (response.statusCode < 200 || response.statusCode > 299) non2xx++;
  }
  return { samplesUs, non2xx, statusCodes, reportedMs };
}

/** `gateway;dur=<ms>` of a Server-Timing header, NaN without one. */
function gatewayDur(header: string | string[] | undefined): number {
  const text = Array.isArray(header) ? header.join(', ') : header;
  const match = text === undefined ? null : /(?:^|,\s*)gateway;dur=([\d.]+)/.exec(text);
  return match === null ? Number.NaN : Number(match[1]);
}

/** Stats of the Server-Timing values (ms), NaN ones left out. */
function reportedStats(reportedMs: Float64Array): Stats {
  const us = Float64Array.from(Array.from(reportedMs).filter((v) => !Number.isNaN(v)), (ms) => ms * 1000);
  return statsOf(us);
}

function statsOf(samplesUs: Float64Array): Stats {
  const ms = Array.from(samplesUs, (us) => us / 1000);
  const mean = ms.reduce((sum, v) => sum + v, 0) / Math.max(1, ms.length);
  return {
    n: ms.length,
    p50_ms: ms3(percentile(ms, 50)), p90_ms: ms3(percentile(ms, 90)), p99_ms: ms3(percentile(ms, 99)),
    mean_ms: ms3(mean), max_ms: ms3(percentile(ms, 100)),
  };
}

function row(label: string, s: Stats & { non2xx: number }): string {
  return `| ${label} | ${s.p50_ms.toFixed(3)} | ${s.p90_ms.toFixed(3)} | ${s.p99_ms.toFixed(3)} | ${s.mean_ms.toFixed(3)} | ${s.max_ms.toFixed(3)} | ${s.n} | ${s.non2xx} |`;
}

/** Part 1: sequential requests on one connection per target, in paired rounds; prints its tables. */
async function oneConnection(gateway: Target, bare: Target): Promise<Record<string, unknown>> {
  // Non-2xx answers and status codes are counted over the warm-up and the rounds alike.
  const non2xx: Record<Name, number> = { gateway: 0, proxy: 0 };
  const statusCodes: Record<Name, Record<string, number>> = { gateway: {}, proxy: {} };
  const tally = (name: Name, batch: Batch): Stats & { non2xx: number } => {
    non2xx[name] += batch.non2xx;
    for (const [code, n] of Object.entries(batch.statusCodes)) statusCodes[name][code] = (statusCodes[name][code] ?? 0) + n;
    return { ...statsOf(batch.samplesUs), non2xx: batch.non2xx };
  };

  console.log(`warm-up: ${WARMUP_N} requests each`);
  const warmup = { gateway: tally('gateway', await sequential(gateway, WARMUP_N)), proxy: tally('proxy', await sequential(bare, WARMUP_N)) };

  const rounds: Round[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const first: Name = i % 2 === 0 ? 'gateway' : 'proxy';
    let g: Batch;
    let p: Batch;
    if (first === 'gateway') {
      g = await sequential(gateway, N);
      p = await sequential(bare, N);
    } else {
      p = await sequential(bare, N);
      g = await sequential(gateway, N);
    }
    const gs = tally('gateway', g);
    const ps = tally('proxy', p);
    const diff = {
      p50_ms: ms3(gs.p50_ms - ps.p50_ms), p90_ms: ms3(gs.p90_ms - ps.p90_ms),
      p99_ms: ms3(gs.p99_ms - ps.p99_ms), mean_ms: ms3(gs.mean_ms - ps.mean_ms),
    };
    rounds.push({ first, gateway: gs, proxy: ps, diff, server_timing_gateway: reportedStats(g.reportedMs) });
    console.log(`round ${i + 1}/${ROUNDS} (${first} first): gateway p50 ${gs.p50_ms.toFixed(3)} p99 ${gs.p99_ms.toFixed(3)} ms, proxy p50 ${ps.p50_ms.toFixed(3)} p99 ${ps.p99_ms.toFixed(3)} ms`);
  }

  type StatKey = 'p50_ms' | 'p90_ms' | 'p99_ms' | 'mean_ms';
  const med = (name: Name, key: StatKey): number => ms3(median(rounds.map((r) => r[name][key])));
  const medDiff = (key: StatKey): number => ms3(median(rounds.map((r) => r.diff[key])));
  const headline = {
    gateway: { p50_ms: med('gateway', 'p50_ms'), p90_ms: med('gateway', 'p90_ms'), p99_ms: med('gateway', 'p99_ms'), mean_ms: med('gateway', 'mean_ms') },
    proxy: { p50_ms: med('proxy', 'p50_ms'), p90_ms: med('proxy', 'p90_ms'), p99_ms: med('proxy', 'p99_ms'), mean_ms: med('proxy', 'mean_ms') },
    added_by_gateway: { p50_ms: medDiff('p50_ms'), p90_ms: medDiff('p90_ms'), p99_ms: medDiff('p99_ms'), mean_ms: medDiff('mean_ms') },
    server_timing_gateway: {
      p50_ms: ms3(median(rounds.map((r) => r.server_timing_gateway.p50_ms))), p90_ms: ms3(median(rounds.map((r) => r.server_timing_gateway.p90_ms))),
      p99_ms: ms3(median(rounds.map((r) => r.server_timing_gateway.p99_ms))), mean_ms: ms3(median(rounds.map((r) => r.server_timing_gateway.mean_ms))),
    },
  };
  const withinBar = { p50: headline.added_by_gateway.p50_ms <= BAR_MS.p50, p99: headline.added_by_gateway.p99_ms <= BAR_MS.p99 };
  const result = {
    settings: {
      rounds: ROUNDS, n: N, warmup_n: WARMUP_N, connections: 1,
      timing: 'process.hrtime.bigint() from the send to the end of the body; one keep-alive connection per target, sequential',
    },
    median_of_rounds: headline,
    bar_ms: BAR_MS,
    within_bar: withinBar,
    non_2xx: non2xx,
    status_codes: statusCodes,
    warmup,
    rounds,
  };
  console.log(`\nPOST /v1/search (${MODEL}), 1 connection, sequential, ${ROUNDS} paired rounds of ${N} requests per target, simulator at 0 ms (ms, from the send to the end of the body)`);
  console.log('| target | p50 | p90 | p99 | mean | max | requests | non-2xx |');
  console.log('|---|---|---|---|---|---|---|---|');
  rounds.forEach((r, i) => {
    console.log(row(`gateway #${i + 1}`, r.gateway));
    console.log(row(`proxy #${i + 1}`, r.proxy));
  });
  console.log(`\n| median of ${ROUNDS} rounds (ms) | p50 | p90 | p99 | mean |`);
  console.log('|---|---|---|---|---|');
  for (const [label, s] of [['gateway', headline.gateway], ['proxy', headline.proxy], ['gateway - proxy (median of per-round differences)', headline.added_by_gateway], ['gateway\'s own time as it reports it (Server-Timing gateway;dur)', headline.server_timing_gateway]] as const) {
    console.log(`| ${label} | ${s.p50_ms.toFixed(3)} | ${s.p90_ms.toFixed(3)} | ${s.p99_ms.toFixed(3)} | ${s.mean_ms.toFixed(3)} |`);
  }
  console.log(`\nadded by the gateway: p50 ${headline.added_by_gateway.p50_ms.toFixed(3)} ms (bar ${BAR_MS.p50}: ${withinBar.p50 ? 'within' : 'over'}), p99 ${headline.added_by_gateway.p99_ms.toFixed(3)} ms (bar ${BAR_MS.p99}: ${withinBar.p99 ? 'within' : 'over'})`);
  console.log(`non-2xx (warm-up included): gateway ${non2xx.gateway}, proxy ${non2xx.proxy}`);
  const failed = non2xx.gateway + non2xx.proxy;
  if (failed > 0) throw new Error(`${failed} requests were not answered 2xx: ${JSON.stringify(statusCodes)}`);
  return result;
}

/** Part 2: the open-loop sweep over a pool of connections per target; prints the frontier. */
async function frontierPart(gatewayUrl: string, gatewayHeaders: Record<string, string>, proxyUrl: string, started: { stop(): Promise<void> }[]): Promise<SweepResult> {
  const poolOptions = { connections: FRONTIER.FRONTIER_CONNECTIONS, pipelining: 1, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 600_000, headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS };
  const gatewayPool = new Pool(gatewayUrl, poolOptions);
  started.push({ stop: () => gatewayPool.close() });
  const proxyPool = new Pool(proxyUrl, poolOptions);
  started.push({ stop: () => proxyPool.close() });
  console.log(`frontier: from ${FRONTIER.FRONTIER_START_RPS}/s, x${FRONTIER.FRONTIER_STEP} a step of ${FRONTIER.FRONTIER_STEP_S} s, ${FRONTIER.FRONTIER_CONNECTIONS} connections per target, at most ${FRONTIER.FRONTIER_MAX_S} s`);
  const result = await sweep([
    { name: 'gateway', pool: gatewayPool, headers: gatewayHeaders, body: BODY },
    { name: 'proxy', pool: proxyPool, headers: { 'content-type': 'application/json' }, body: BODY },
  ], {
    startRps: FRONTIER.FRONTIER_START_RPS, step: FRONTIER.FRONTIER_STEP, stepSeconds: FRONTIER.FRONTIER_STEP_S, maxRps: FRONTIER.FRONTIER_MAX_RPS,
    maxSeconds: FRONTIER.FRONTIER_MAX_S, maxLagMs: FRONTIER.FRONTIER_MAX_LAG_MS,
  });
  const cell = (name: string, bound: number): string => {
    const point = result.frontier[name]?.find((f) => f.bound_ms === bound);
    if (point === undefined || point.rps === null) return 'not measured';
    if (point.rps === 0) return `under ${FRONTIER.FRONTIER_START_RPS} (the first rate's p99 was over it)`;
    return `${point.at_least ? '≥ ' : ''}${point.rps}${point.p99_ms === null ? '' : ` (p99 ${point.p99_ms.toFixed(2)})`}`;
  };
  console.log(`\nthroughput frontier: the most searches/s answered with p99 under each bound (open loop, ${FRONTIER.FRONTIER_CONNECTIONS} connections, steps of x${FRONTIER.FRONTIER_STEP})`);
  console.log(`| target | ${FRONTIER_BOUNDS_MS.map((b) => `p99 ≤ ${b} ms`).join(' | ')} | sweep ended |`);
  console.log(`|---|${FRONTIER_BOUNDS_MS.map(() => '---').join('|')}|---|`);
  for (const name of ['gateway', 'proxy']) console.log(`| ${name} | ${FRONTIER_BOUNDS_MS.map((b) => cell(name, b)).join(' | ')} | ${result.ended[name] ?? ''} |`);
  return result;
}

async function main(): Promise<void> {
  const loadAtStart = loadavg().map((l) => Math.round(l * 100) / 100);
  const started: { stop(): Promise<void> }[] = [];
  try {
    const stack: Stack = await startStack({
      ...BENCH_STACK,
      name: 'benchlatency',
      ...(process.env.BENCH_GATEWAY_SCRIPT === undefined ? {} : { gatewayScript: process.env.BENCH_GATEWAY_SCRIPT }),
      gatewayEnv: { ...NO_LIMITS_ENV },
    });
    started.push(stack);
    const gatewayInfo = stack.gateways[0];
    if (gatewayInfo === undefined || stack.simulator === undefined) throw new Error('the gateway and the simulator expected');
    const gw = gatewayInfo.url;

    const { process: proxy, url: proxyUrl } = await startBareProxy(stack.simulator.url);
    started.push(proxy);
    const apiKeySecret = await fundedApiKey(stack, gw, 'benchlat', 'latency benchmark');
    const gatewayHeaders = { 'content-type': 'application/json', ...bearer(apiKeySecret) };
    await firstSearches(gw, bearer(apiKeySecret), proxyUrl, BODY, MODEL);

    // One keep-alive connection per target (a Client is one connection; no pipelining).
    const clientOptions = { pipelining: 1, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 600_000, headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS };
    const gateway: Target = { name: 'gateway', client: new Client(gw, clientOptions), headers: gatewayHeaders };
    started.push({ stop: () => gateway.client.close() });
    const bare: Target = { name: 'proxy', client: new Client(proxyUrl, clientOptions), headers: { 'content-type': 'application/json' } };
    started.push({ stop: () => bare.client.close() });

    const one = PARTS.has('one-connection') ? await oneConnection(gateway, bare) : null;
    const frontier = PARTS.has('frontier') ? await frontierPart(gw, gatewayHeaders, proxyUrl, started) : null;
    const file = writeResult('latency', {
      measured_at: new Date().toISOString(),
      command: 'npm run bench -- latency',
      machine: { nproc: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', node: process.version, loadavg_at_start: loadAtStart, loadavg_at_end: loadavg().map((l) => Math.round(l * 100) / 100) },
      settings: {
        parts: [...PARTS], model: MODEL, body: JSON.parse(BODY) as unknown, sim_base_latency_ms: 0,
        gateway_script: process.env.BENCH_GATEWAY_SCRIPT ?? 'services/search-gateway/dist/main.js',
        frontier: PARTS.has('frontier') ? { ...FRONTIER, bounds_ms: FRONTIER_BOUNDS_MS } : null,
      },
      one_connection: one,
      frontier,
    });
    console.log(`\nwrote ${file}`);
  } finally {
    for (const process of started.reverse()) await process.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
