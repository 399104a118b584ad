/**
 * The result cache (docs/benchmarks.md, "Result cache"; docs/decisions/0023):
 *
 * 1. Hits against the bare proxy, in the same run: POST /v1/search with one body repeated (so
 *    every measured search is a `hit`: the lookup, the admission at the cache price, the
 *    settlement, no provider call) side by side with the bare Fastify + undici proxy
 *    (bare-proxy.ts) forwarding the same body to the simulator at zero latency. Interleaved
 *    rounds; requests/s and the CPU each process spends per search (the gateway's cores busy
 *    divided by its requests/s). The goal: hits at 1.5x the proxy's throughput or more.
 * 2. The miss path against a baseline, in the same run: every request a new query (autocannon
 *    replaces `[<id>]` in the body), so each is a miss (lookup and lead, the provider call,
 *    the store), on this build with the cache on, against BENCH_GATEWAY_SCRIPT (another
 *    build's dist/main.js, e.g. the previous one's, started with the same settings), or,
 *    without it, this build with CACHE_ENABLED=false. Both gateways share one Redis, one
 *    simulator and one account; rounds interleaved. The goal: no loss beyond noise.
 *
 * Every measured answer's cache status is checked through the gateway's own counters
 * (gateway_cache_lookups_total): the hit rounds must be hits, the miss rounds misses.
 * Prints Markdown and writes bench/results/cache.json.
 *
 * Env: ROUNDS (8), DURATION_S (4), WARMUP_S (3), CONNECTIONS (32), MODEL (exa/fast),
 * BENCH_REDIS_DB (15), BENCH_GATEWAY_SCRIPT (the baseline gateway of the miss path).
 */
import { cpus, loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { parsePrometheusText, sumSamples } from '@svc/metrics';
import { bearer, call, startStack } from '@svc/test-kit';
import type { Stack } from '@svc/test-kit';
import { runLoad } from './lib-autocannon';
import type { LoadResult } from './lib-autocannon';
import { measureCpu } from './lib-cpu';
import type { CpuGroup, CpuReport } from './lib-cpu';
import { median, writeResult } from './lib-results';
import { firstSearches, fundedApiKey, searchBody, startBareProxy } from './lib-search-setup';
import { NO_LIMITS_ENV, ZERO_LATENCY_SIMULATOR } from './lib-stack';

const ROUNDS = Number(process.env.ROUNDS ?? 8);
const DURATION_S = Number(process.env.DURATION_S ?? 4);
const WARMUP_S = Number(process.env.WARMUP_S ?? 3);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 32);
const MODEL = process.env.MODEL ?? 'exa/fast';
const REDIS_DB = Number(process.env.BENCH_REDIS_DB ?? 15);
const BASELINE_SCRIPT = process.env.BENCH_GATEWAY_SCRIPT;
const HIT_BODY = searchBody(MODEL);
/** A new query on every request: `[<id>]` is replaced by autocannon. */
const MISS_BODY = JSON.stringify({ query: 'open source search engines [<id>]', model: MODEL, max_results: 10 });

interface Target {
  readonly name: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly unique: boolean;
}

interface Measured {
  readonly load: LoadResult;
  /** CPU milliseconds of the target's own processes per answered request. */
  readonly cpuMsPerRequest: number;
  readonly cpu: CpuReport;
}

function load(target: Target, durationSeconds: number): Promise<LoadResult> {
  return runLoad({
    url: `${target.url}/v1/search`, method: 'POST', connections: CONNECTIONS, durationSeconds,
    headers: { 'content-type': 'application/json', ...target.headers }, body: target.body, idReplacement: target.unique,
  });
}

async function measure(target: Target, groups: readonly CpuGroup[]): Promise<Measured> {
  const { value, cpu } = await measureCpu(groups, () => load(target, DURATION_S));
  const cores = cpu.groups.find((g) => g.name === target.name)?.cores ?? Number.NaN;
  return { load: value, cpu, cpuMsPerRequest: (cores * 1000) / Math.max(1, value.requestsPerSecond) };
}

/** Interleaved rounds of two targets: a then b in odd rounds, b then a in even ones. */
async function pairedRounds(label: string, a: Target, b: Target, groups: readonly CpuGroup[]): Promise<{ a: Measured; b: Measured }[]> {
  console.log(`${label}: warm-up ${WARMUP_S} s each`);
  await load(a, WARMUP_S);
  await load(b, WARMUP_S);
  const rounds: { a: Measured; b: Measured }[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    let ra: Measured;
    let rb: Measured;
    if (i % 2 === 0) {
      ra = await measure(a, groups);
      rb = await measure(b, groups);
    } else {
      rb = await measure(b, groups);
      ra = await measure(a, groups);
    }
    rounds.push({ a: ra, b: rb });
    console.log(`${label} round ${i + 1}/${ROUNDS}: ${a.name} ${ra.load.requestsPerSecond.toFixed(0)} req/s (non-2xx ${ra.load.non2xx}), ${b.name} ${rb.load.requestsPerSecond.toFixed(0)} req/s (non-2xx ${rb.load.non2xx}), ratio ${(ra.load.requestsPerSecond / rb.load.requestsPerSecond).toFixed(2)}`);
  }
  return rounds;
}

function summary(rounds: readonly { a: Measured; b: Measured }[]): Record<string, number> {
  const m = (pick: (r: { a: Measured; b: Measured }) => number): number => median(rounds.map(pick));
  return {
    a_rps: m((r) => r.a.load.requestsPerSecond), b_rps: m((r) => r.b.load.requestsPerSecond),
    a_p50_ms: m((r) => r.a.load.latencyMs.p50), b_p50_ms: m((r) => r.b.load.latencyMs.p50),
    a_p99_ms: m((r) => r.a.load.latencyMs.p99), b_p99_ms: m((r) => r.b.load.latencyMs.p99),
    a_cpu_ms_per_request: m((r) => r.a.cpuMsPerRequest), b_cpu_ms_per_request: m((r) => r.b.cpuMsPerRequest),
    median_of_round_ratios: m((r) => r.a.load.requestsPerSecond / r.b.load.requestsPerSecond),
    non_2xx_or_errors_a: rounds.reduce((n, r) => n + r.a.load.non2xx + r.a.load.errors, 0),
    non_2xx_or_errors_b: rounds.reduce((n, r) => n + r.b.load.non2xx + r.b.load.errors, 0),
  };
}

async function lookups(metricsUrl: string): Promise<Record<string, number>> {
  const samples = parsePrometheusText(await (await fetch(`${metricsUrl}/metrics`)).text());
  return Object.fromEntries(['hit', 'joined', 'miss', 'off'].map((status) => [status, sumSamples(samples, 'gateway_cache_lookups_total', { model: MODEL, status })]));
}

function delta(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.keys(after).map((k) => [k, (after[k] ?? 0) - (before[k] ?? 0)]));
}

function table(title: string, a: string, b: string, s: Record<string, number>): void {
  console.log(`\n${title}`);
  console.log(`| target | req/s (median) | p50 ms | p99 ms | CPU ms per search | non-2xx or errors |`);
  console.log('|---|---|---|---|---|---|');
  console.log(`| ${a} | ${s.a_rps?.toFixed(0)} | ${s.a_p50_ms} | ${s.a_p99_ms} | ${s.a_cpu_ms_per_request?.toFixed(3)} | ${s.non_2xx_or_errors_a} |`);
  console.log(`| ${b} | ${s.b_rps?.toFixed(0)} | ${s.b_p50_ms} | ${s.b_p99_ms} | ${s.b_cpu_ms_per_request?.toFixed(3)} | ${s.non_2xx_or_errors_b} |`);
  console.log(`ratio ${a}/${b}: ${s.median_of_round_ratios?.toFixed(3)} (median of per-round ratios)`);
}

async function main(): Promise<void> {
  const loadAtStart = loadavg().map((l) => Math.round(l * 100) / 100);
  const started: { stop(): Promise<void> }[] = [];
  try {
    // Entries live 30 s here: the miss rounds store one per request, and Redis holds only the last half minute's.
    const cacheEnv = { ...NO_LIMITS_ENV, CACHE_ENABLED: 'true', CACHE_TTL_S: '30', CACHE_TTL_BY_MODEL: '' };
    const stack: Stack = await startStack({
      name: 'benchcache',
      redisDb: REDIS_DB,
      logLevel: 'warn',
      worker: true,
      ...ZERO_LATENCY_SIMULATOR,
      gateways: [
        { env: cacheEnv },
        BASELINE_SCRIPT === undefined ? { env: { ...NO_LIMITS_ENV, CACHE_ENABLED: 'false' } } : { script: BASELINE_SCRIPT, env: { ...NO_LIMITS_ENV } },
      ],
    });
    started.push(stack);
    const [cached, baseline] = stack.gateways;
    const sim = stack.simulator;
    if (cached === undefined || baseline === undefined || sim === undefined) throw new Error('two gateways and the simulator expected');
    const { process: proxy, url: proxyUrl } = await startBareProxy(sim.url);
    started.push(proxy);
    const secret = await fundedApiKey(stack, cached.url, 'bench', 'cache benchmark');
    const headers = bearer(secret);
    await firstSearches(cached.url, headers, proxyUrl, HIT_BODY, MODEL);
    const primed = await call('POST', `${cached.url}/v1/search`, { raw: HIT_BODY, headers });
    if (primed.body?.cache?.status !== 'hit') throw new Error(`the repeated body is not a hit: ${primed.text.slice(0, 300)}`);
    const baselineProbe = await call('POST', `${baseline.url}/v1/search`, { raw: MISS_BODY.replace('[<id>]', 'probe'), headers });
    if (baselineProbe.status !== 200) throw new Error(`the baseline gateway answered ${baselineProbe.status}: ${baselineProbe.text.slice(0, 300)}`);

    const info = new Redis(stack.redisUrl);
    const redisPid = Number(/process_id:(\d+)/.exec(await info.info('server'))?.[1]);
    await info.quit();
    const groups: CpuGroup[] = [
      { name: 'gateway (cache hits)', pids: () => [cached.process.pid] },
      { name: 'gateway (cache misses)', pids: () => [cached.process.pid] },
      { name: 'bare proxy', pids: () => [proxy.pid] },
      { name: 'baseline gateway', pids: () => [baseline.process.pid] },
      { name: 'provider simulator', pids: () => [sim.process.pid] },
      { name: 'redis-server', pids: () => (Number.isFinite(redisPid) ? [redisPid] : []) },
    ];
    const hitTarget: Target = { name: 'gateway (cache hits)', url: cached.url, headers, body: HIT_BODY, unique: false };
    const proxyTarget: Target = { name: 'bare proxy', url: proxyUrl, headers: {}, body: HIT_BODY, unique: false };
    const missTarget: Target = { name: 'gateway (cache misses)', url: cached.url, headers, body: MISS_BODY, unique: true };
    const baseTarget: Target = { name: 'baseline gateway', url: baseline.url, headers, body: MISS_BODY, unique: true };

    const beforeHits = await lookups(cached.metricsUrl);
    const hitRounds = await pairedRounds('hits vs proxy', hitTarget, proxyTarget, groups);
    const afterHits = await lookups(cached.metricsUrl);
    const missRounds = await pairedRounds('misses vs baseline', missTarget, baseTarget, groups);
    const afterMisses = await lookups(cached.metricsUrl);
    const hitStatuses = delta(afterHits, beforeHits);
    const missStatuses = delta(afterMisses, afterHits);
    // Every measured answer must have been what the round claims (warm-ups included in the counts).
    if ((hitStatuses.miss ?? 0) + (hitStatuses.joined ?? 0) + (hitStatuses.off ?? 0) > 0) throw new Error(`the hit rounds were not all hits: ${JSON.stringify(hitStatuses)}`);
    if ((missStatuses.hit ?? 0) + (missStatuses.joined ?? 0) > 0) throw new Error(`the miss rounds were not all misses: ${JSON.stringify(missStatuses)}`);

    const hits = summary(hitRounds);
    const misses = summary(missRounds);
    const result = {
      measured_at: new Date().toISOString(),
      command: 'npm run bench -- cache',
      machine: { nproc: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', node: process.version, loadavg_at_start: loadAtStart, loadavg_at_end: loadavg().map((l) => Math.round(l * 100) / 100) },
      settings: { rounds: ROUNDS, duration_s: DURATION_S, warmup_s: WARMUP_S, connections: CONNECTIONS, model: MODEL, sim_base_latency_ms: 0, baseline: BASELINE_SCRIPT ?? 'this build with CACHE_ENABLED=false' },
      hits_vs_proxy: { ...hits, cache_statuses: hitStatuses, goal_ratio: 1.5 },
      misses_vs_baseline: { ...misses, cache_statuses: missStatuses },
      rounds: { hits: hitRounds, misses: missRounds },
    };
    const file = writeResult('cache', result);
    table(`Cache hits against the bare proxy (${MODEL}, ${CONNECTIONS} connections, ${ROUNDS} interleaved rounds of ${DURATION_S} s, simulator at 0 ms; statuses ${JSON.stringify(hitStatuses)})`, 'gateway (hits)', 'bare proxy', hits);
    table(`The miss path against ${BASELINE_SCRIPT ?? 'this build with CACHE_ENABLED=false'} (a new query per request; statuses ${JSON.stringify(missStatuses)})`, 'gateway (misses)', 'baseline', misses);
    console.log(`\nwrote ${file}`);
  } finally {
    for (const p of started.reverse()) await p.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
