/**
 * The result cache (docs/benchmarks.md, "Result cache"; docs/decisions/0023):
 *
 * 1. Hits against the bare proxy, in the same run: POST /v1/search with one body repeated (so
 *    every measured search is a `hit`: the lookup, the admission at the cache price, the
 *    settlement, no provider call) side by side with the bare Fastify + undici proxy
 *    (bare-proxy.ts) forwarding the same body to the simulator at zero latency. Interleaved
 *    rounds; requests/s and the CPU spent per search: the target's own process (its CPU over the
 *    round's window, the load and the ledger's drain after it, divided by the searches
 *    answered), and for the gateway also its side in total (the gateway, Redis,
 *    the ledger worker and PostgreSQL, which a hit still uses: the admission, the settlement and
 *    its drain into the ledger). The goal: hits at 1.5x the proxy's throughput or more. Then
 *    the budget that decides it: every process's CPU per search on both sides, and the CPU
 *    left for the gateway at the goal once the money path a hit keeps is paid (decision 32).
 * 2. The miss path against a baseline, in the same run: every request a new query (autocannon
 *    replaces `[<id>]` in the body), so each is a miss (lookup and lead, the provider call,
 *    the store), on this build with the cache on, against BENCH_GATEWAY_SCRIPT (another
 *    build's dist/main.js, e.g. the previous one's, started with the same settings), or,
 *    without it, this build with CACHE_ENABLED=false. Every gateway shares one Redis, one
 *    simulator and one account; rounds interleaved. The goal: no loss beyond noise. Then what
 *    a miss adds to each process's CPU per search, and the share of the whole machine's
 *    (decision 37).
 *
 * Three gateways: the hit rounds' (entries live a day, so the one entry they read outlives
 * every round however long the run), the miss rounds' (entries live 30 s, so Redis holds only
 * the last half minute of one-off entries), and the baseline. Each round loads one of them.
 *
 * Every measured answer's cache status is checked through the gateway's own counters
 * (gateway_cache_lookups_total): the hit rounds must be hits, the miss rounds misses.
 * Prints Markdown and writes bench/results/cache.json.
 *
 * Env: ROUNDS (8), DURATION_S (4), WARMUP_S (3), MISS_ENTRY_TTL_S (30: the miss gateway's
 * CACHE_TTL_S), MISS_WARMUP_S (MISS_ENTRY_TTL_S: each miss-part gateway is loaded this long
 * before its rounds, in turns of WARMUP_S, so the miss gateway's entries have reached their
 * steady size), CONNECTIONS (32), MODEL (exa/fast),
 * BENCH_REDIS_DB (15), BENCH_GATEWAY_SCRIPT (the baseline gateway of the miss path),
 * MISS_AA (1: the miss part's cache gateway runs with its cache off, an A/A of that part),
 * PARTS (hits,misses: which of the two parts run).
 * Each round's CPU window stays open after its load until the account's settlement stream is
 * empty (the ledger worker has written the round's searches to PostgreSQL).
 */
import { cpus, loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { parsePrometheusText, sumSamples } from '@svc/metrics';
import { bearer, call, startStack, waitFor } from '@svc/test-kit';
import type { Stack } from '@svc/test-kit';
import { runLoad } from './lib-autocannon';
import type { LoadResult } from './lib-autocannon';
import { measureCpu, pidsNamed } from './lib-cpu';
import type { CpuGroup, CpuReport } from './lib-cpu';
import { alternatingRounds, median, writeResult } from './lib-results';
import { firstSearches, fundedApiKey, searchBody, startBareProxy, uniqueSearchBody } from './lib-search-setup';
import { NO_LIMITS_ENV, BENCH_STACK, knobsFromEnv } from './lib-stack';
import { runBench } from './lib-run';
import type { Stoppable } from './lib-run';

/** MISS_ENTRY_TTL_S: how long the miss rounds' gateway keeps its entries (s); Redis holds the last this-many seconds of one-off entries. */
const { MISS_ENTRY_TTL_S } = knobsFromEnv({ MISS_ENTRY_TTL_S: 30 });
const { ROUNDS, DURATION_S, WARMUP_S, MISS_WARMUP_S, CONNECTIONS } = knobsFromEnv({ ROUNDS: 8, DURATION_S: 4, WARMUP_S: 3, MISS_WARMUP_S: MISS_ENTRY_TTL_S, CONNECTIONS: 32 });
/** The longest a round's CPU window stays open after its load, waiting for the ledger's drain (s). */
const DRAIN_MAX_S = 10;

/**
 * Resolves once every account's settlement stream is empty (the worker trims what it wrote
 * to PostgreSQL), polling every 20 ms for at most DRAIN_MAX_S; throws past that.
 */
function streamsDrained(redis: Redis, streams: readonly string[]): () => Promise<void> {
  return async () => {
    const deadline = Date.now() + DRAIN_MAX_S * 1000;
    for (;;) {
      const lengths = await Promise.all(streams.map((key) => redis.xlen(key)));
      if (lengths.every((length) => length === 0)) return;
      if (Date.now() > deadline) throw new Error(`the ledger did not drain within ${DRAIN_MAX_S} s: ${lengths.join(', ')} records left`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
}
const MODEL = process.env.MODEL ?? 'exa/fast';
const BASELINE_SCRIPT = process.env.BENCH_GATEWAY_SCRIPT;
/**
 * MISS_AA=1: the miss part's cache-side gateway runs with its cache off too, so the miss part
 * measures two identical gateways (an A/A): the noise of its ratio on this machine.
 */
const MISS_AA = process.env.MISS_AA === '1';
/** PARTS: which parts run, `hits`, `misses` or both (the default). */
const PARTS = new Set((process.env.PARTS ?? 'hits,misses').split(',').map((part) => part.trim()));
if (![...PARTS].every((part) => part === 'hits' || part === 'misses')) throw new Error(`PARTS: hits, misses or both, not ${process.env.PARTS}`);
const HIT_BODY = searchBody(MODEL);
/** A new query on every request: `[<id>]` is replaced by autocannon. */
const MISS_BODY = uniqueSearchBody(MODEL);

interface Target {
  readonly name: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly unique: boolean;
}

interface Measured {
  readonly load: LoadResult;
  /** CPU milliseconds of the target's own process per answered request. */
  readonly cpuMsPerRequest: number;
  /** CPU milliseconds per answered request of the target's side in total (the gateway with Redis, the ledger worker and PostgreSQL; the proxy alone). */
  readonly sideCpuMsPerRequest: number;
  readonly cpu: CpuReport;
}

/** What a gateway's search uses besides the gateway process (shared by every gateway, each loaded alone in its round). */
const PLATFORM_GROUPS = ['redis-server', 'ledger worker', 'postgres (all backends)'] as const;

function load(target: Target, durationSeconds: number): Promise<LoadResult> {
  return runLoad({
    url: `${target.url}/v1/search`, method: 'POST', connections: CONNECTIONS, durationSeconds,
    headers: { 'content-type': 'application/json', ...target.headers }, body: target.body, idReplacement: target.unique,
  });
}

async function measure(target: Target, groups: readonly CpuGroup[], drained: () => Promise<void>): Promise<Measured> {
  // The CPU window stays open after the load until the ledger worker has drained the round's
  // settlements, so that drain (and PostgreSQL's part in it) is counted in the round that made
  // them, not in the next round of the other target.
  const { value, cpu } = await measureCpu(groups, async () => {
    const loaded = await load(target, DURATION_S);
    await drained();
    return loaded;
  });
  const coresOf = (name: string): number => cpu.groups.find((g) => g.name === name)?.cores ?? Number.NaN;
  const own = coresOf(target.name);
  const side = target.name === 'bare proxy' ? own : own + PLATFORM_GROUPS.reduce((sum, name) => sum + coresOf(name), 0);
  const round = { cpu, load: value };
  return { load: value, cpu, cpuMsPerRequest: usPerSearch(own, round) / 1000, sideCpuMsPerRequest: usPerSearch(side, round) / 1000 };
}

/** CPU µs per answered search of `cores` busy over the round's CPU window (the load and the drain after it). */
function usPerSearch(cores: number, round: { readonly cpu: CpuReport; readonly load: LoadResult }): number {
  return (cores * round.cpu.wallSeconds * 1e6) / Math.max(1, round.load.total);
}

/**
 * Interleaved rounds of two targets: a then b in odd rounds, b then a in even ones. Before
 * them each target is loaded for `warmupS`, in turns of at most WARMUP_S (a, b, a, b, ...), so
 * both warm up over the same stretch of time.
 */
async function pairedRounds(label: string, a: Target, b: Target, groups: readonly CpuGroup[], drained: () => Promise<void>, warmupS: number): Promise<{ a: Measured; b: Measured }[]> {
  console.log(`${label}: warm-up ${warmupS} s each${warmupS > WARMUP_S ? `, in turns of ${WARMUP_S} s` : ''}`);
  for (let left = warmupS; left > 0; left -= WARMUP_S) {
    const turn = Math.min(WARMUP_S, left);
    await load(a, turn);
    await load(b, turn);
  }
  await drained();
  return alternatingRounds(ROUNDS, () => measure(a, groups, drained), () => measure(b, groups, drained), (round, i) => {
    console.log(`${label} round ${i + 1}/${ROUNDS}: ${a.name} ${round.a.load.requestsPerSecond.toFixed(0)} req/s (non-2xx ${round.a.load.non2xx}), ${b.name} ${round.b.load.requestsPerSecond.toFixed(0)} req/s (non-2xx ${round.b.load.non2xx}), ratio ${(round.a.load.requestsPerSecond / round.b.load.requestsPerSecond).toFixed(2)}`);
  });
}

function summary(rounds: readonly { a: Measured; b: Measured }[]): Record<string, number> {
  const m = (pick: (r: { a: Measured; b: Measured }) => number): number => median(rounds.map(pick));
  return {
    a_rps: m((r) => r.a.load.requestsPerSecond), b_rps: m((r) => r.b.load.requestsPerSecond),
    a_p50_ms: m((r) => r.a.load.latencyMs.p50), b_p50_ms: m((r) => r.b.load.latencyMs.p50),
    a_p99_ms: m((r) => r.a.load.latencyMs.p99), b_p99_ms: m((r) => r.b.load.latencyMs.p99),
    a_cpu_ms_per_request: m((r) => r.a.cpuMsPerRequest), b_cpu_ms_per_request: m((r) => r.b.cpuMsPerRequest),
    a_side_cpu_ms_per_request: m((r) => r.a.sideCpuMsPerRequest), b_side_cpu_ms_per_request: m((r) => r.b.sideCpuMsPerRequest),
    median_of_round_ratios: m((r) => r.a.load.requestsPerSecond / r.b.load.requestsPerSecond),
    non_2xx_or_errors_a: rounds.reduce((n, r) => n + r.a.load.non2xx + r.a.load.errors, 0),
    non_2xx_or_errors_b: rounds.reduce((n, r) => n + r.b.load.non2xx + r.b.load.errors, 0),
  };
}

/** The issue's goal for hits: this many times the bare proxy's throughput. */
const GOAL_RATIO = 1.5;
const MACHINE = 'the whole machine';
/** The three gateways (their CPU groups' and targets' names). */
const HIT_GATEWAY = 'gateway (cache hits)';
const MISS_GATEWAY = 'gateway (cache misses)';
const BASELINE_GATEWAY = 'baseline gateway';
/** The miss part's row for the gateway each side loads (the miss gateway, or the baseline's). */
const LOADED_GATEWAY = 'the gateway loaded (misses / baseline)';

/** µs of CPU per answered search of every process group (and the whole machine), the median over the rounds. */
function perProcessUs(rounds: readonly Measured[]): Record<string, number> {
  const names = [...(rounds[0]?.cpu.groups.map((g) => g.name) ?? []), MACHINE];
  return Object.fromEntries(names.map((name) => [name, median(rounds.map((r) => {
    const cores = name === MACHINE ? r.cpu.machineBusyCores : r.cpu.groups.find((g) => g.name === name)?.cores ?? 0;
    return usPerSearch(cores, r);
  }))]));
}

/** What decides the hits' ratio (hitBudget), µs per search unless a ratio. */
interface HitBudget {
  readonly hit_us: Record<string, number>;
  readonly proxied_us: Record<string, number>;
  readonly money_path_us: number;
  readonly ratio_by_cpu: number;
  readonly ratio_with_a_free_gateway: number;
  readonly gateway_us_left_at_goal: number;
}

/**
 * What decides the hits' ratio on this machine (docs/decisions/0032): on cores every process
 * shares, each side's throughput is the machine's CPU over what one search costs the whole
 * machine. So the ratio follows from the per-process CPU, and so does what is left for the
 * gateway at the goal once the money path a hit keeps (Redis, the worker, PostgreSQL) and
 * the load generator are paid.
 */
function hitBudget(rounds: readonly { a: Measured; b: Measured }[]): HitBudget {
  const hit = perProcessUs(rounds.map((r) => r.a));
  const proxied = perProcessUs(rounds.map((r) => r.b));
  const machineHit = hit[MACHINE] ?? Number.NaN;
  const machineProxied = proxied[MACHINE] ?? Number.NaN;
  const gateway = hit[HIT_GATEWAY] ?? Number.NaN;
  const withoutGateway = machineHit - gateway;
  return {
    hit_us: hit,
    proxied_us: proxied,
    money_path_us: PLATFORM_GROUPS.reduce((sum, name) => sum + (hit[name] ?? 0), 0),
    ratio_by_cpu: machineProxied / machineHit,
    ratio_with_a_free_gateway: machineProxied / withoutGateway,
    gateway_us_left_at_goal: machineProxied / GOAL_RATIO - withoutGateway,
  };
}

function budgetTable(budget: HitBudget): void {
  const { hit_us: hit, proxied_us: proxied } = budget;
  const us = (value: number | undefined): string => (value === undefined ? '-' : value.toFixed(1));
  console.log('\nCPU per search, µs (median of rounds), every process: a hit against a proxied search');
  console.log('| process | a hit | a proxied search |');
  console.log('|---|---|---|');
  for (const name of Object.keys(hit)) {
    if ((hit[name] ?? 0) < 0.5 && (proxied[name] ?? 0) < 0.5) continue;
    console.log(`| ${name} | ${us(hit[name])} | ${us(proxied[name])} |`);
  }
  console.log(`the money path a hit keeps (Redis, ledger worker, PostgreSQL): ${us(budget.money_path_us)} µs`);
  console.log(`ratio by CPU (whole machine, proxied / hit): ${budget.ratio_by_cpu.toFixed(3)}; with a gateway that cost nothing: ${budget.ratio_with_a_free_gateway.toFixed(3)}`);
  console.log(`CPU left for the gateway per hit at ${GOAL_RATIO}x: ${us(budget.gateway_us_left_at_goal)} µs (it spent ${us(hit[HIT_GATEWAY])})`);
}

/** What a miss adds to a search without the cache (missBudget), µs per search unless a ratio. */
interface MissBudget {
  readonly miss_us: Record<string, number>;
  readonly baseline_us: Record<string, number>;
  /** miss_us - baseline_us, per process (medians of the rounds). */
  readonly added_us: Record<string, number>;
  /** The median over the rounds of the paired difference (the miss round less the baseline round next to it), per process. */
  readonly added_paired_us: Record<string, number>;
  /** The whole machine's added CPU per search over the baseline's (paired, median of rounds). */
  readonly added_share: number;
  readonly ratio_by_cpu: number;
}

/**
 * What a miss costs each process beyond a search without the cache (docs/decisions/0037): on
 * cores every process shares the throughput ratio is the baseline's CPU per search over the
 * miss's, for the whole machine, so each process's added µs is its part of the loss.
 */
function missBudget(rounds: readonly { a: Measured; b: Measured }[]): MissBudget {
  // Each side's own gateway as one row: the miss gateway in the miss rounds, the baseline's in its rounds.
  const withLoaded = (us: Record<string, number>, own: string): Record<string, number> => ({ [LOADED_GATEWAY]: us[own] ?? 0, ...us });
  const missOf = (r: Measured): Record<string, number> => withLoaded(perProcessUs([r]), MISS_GATEWAY);
  const baselineOf = (r: Measured): Record<string, number> => withLoaded(perProcessUs([r]), BASELINE_GATEWAY);
  const perRound = rounds.map((r) => ({ a: missOf(r.a), b: baselineOf(r.b) }));
  const names = Object.keys(perRound[0]?.a ?? {});
  const medianOf = (side: 'a' | 'b'): Record<string, number> => Object.fromEntries(names.map((name) => [name, median(perRound.map((r) => r[side][name] ?? 0))]));
  const miss = medianOf('a');
  const baseline = medianOf('b');
  const paired = Object.fromEntries(names.map((name) => [name, median(perRound.map(({ a, b }) => (a[name] ?? 0) - (b[name] ?? 0)))]));
  const machineMiss = miss[MACHINE] ?? Number.NaN;
  const machineBaseline = baseline[MACHINE] ?? Number.NaN;
  return {
    miss_us: miss,
    baseline_us: baseline,
    added_us: Object.fromEntries(names.map((name) => [name, (miss[name] ?? 0) - (baseline[name] ?? 0)])),
    added_paired_us: paired,
    added_share: (paired[MACHINE] ?? Number.NaN) / machineBaseline,
    ratio_by_cpu: machineBaseline / machineMiss,
  };
}

function missBudgetTable(budget: MissBudget): void {
  const us = (value: number | undefined): string => (value === undefined ? '-' : value.toFixed(1));
  console.log('\nCPU per search, µs (median of rounds), every process: a miss against a search of the baseline');
  console.log('| process | a miss | the baseline | added (medians) | added (paired rounds, median) |');
  console.log('|---|---|---|---|---|');
  for (const name of Object.keys(budget.miss_us)) {
    // The two gateways' own rows are in the loaded one (each is idle in the other's rounds).
    if (name === MISS_GATEWAY || name === BASELINE_GATEWAY) continue;
    if ((budget.miss_us[name] ?? 0) < 0.5 && (budget.baseline_us[name] ?? 0) < 0.5) continue;
    console.log(`| ${name} | ${us(budget.miss_us[name])} | ${us(budget.baseline_us[name])} | ${us(budget.added_us[name])} | ${us(budget.added_paired_us[name])} |`);
  }
  console.log(`a miss adds ${(budget.added_share * 100).toFixed(1)} % to the whole machine's CPU per search; ratio by CPU (whole machine, baseline / miss): ${budget.ratio_by_cpu.toFixed(3)}`);
}

async function lookups(metricsUrl: string): Promise<Record<string, number>> {
  const samples = parsePrometheusText(await (await fetch(`${metricsUrl}/metrics`)).text());
  return Object.fromEntries(['hit', 'joined', 'miss', 'off'].map((status) => [status, sumSamples(samples, 'gateway_cache_lookups_total', { model: MODEL, status })]));
}

async function gauge(metricsUrl: string, name: string): Promise<number> {
  return sumSamples(parsePrometheusText(await (await fetch(`${metricsUrl}/metrics`)).text()), name, {});
}

function delta(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.keys(after).map((k) => [k, (after[k] ?? 0) - (before[k] ?? 0)]));
}

function table(title: string, a: string, b: string, s: Record<string, number>): void {
  console.log(`\n${title}`);
  console.log(`| target | req/s (median) | p50 ms | p99 ms | CPU ms per search (own process) | CPU ms per search (its side: + Redis, ledger worker, PostgreSQL) | non-2xx or errors |`);
  console.log('|---|---|---|---|---|---|---|');
  console.log(`| ${a} | ${s.a_rps?.toFixed(0)} | ${s.a_p50_ms} | ${s.a_p99_ms} | ${s.a_cpu_ms_per_request?.toFixed(3)} | ${s.a_side_cpu_ms_per_request?.toFixed(3)} | ${s.non_2xx_or_errors_a} |`);
  console.log(`| ${b} | ${s.b_rps?.toFixed(0)} | ${s.b_p50_ms} | ${s.b_p99_ms} | ${s.b_cpu_ms_per_request?.toFixed(3)} | ${b === 'bare proxy' ? '(the proxy alone)' : s.b_side_cpu_ms_per_request?.toFixed(3)} | ${s.non_2xx_or_errors_b} |`);
  console.log(`ratio ${a}/${b}: ${s.median_of_round_ratios?.toFixed(3)} (median of per-round ratios)`);
}

/** Hits against the bare proxy; every hit round's answers must all have been hits (warm-ups included). */
async function hitsPart(metricsUrl: string, hit: Target, proxy: Target, groups: readonly CpuGroup[], drained: () => Promise<void>) {
  const before = await lookups(metricsUrl);
  const rounds = await pairedRounds('hits vs proxy', hit, proxy, groups, drained, WARMUP_S);
  const statuses = delta(await lookups(metricsUrl), before);
  if ((statuses.miss ?? 0) + (statuses.joined ?? 0) + (statuses.off ?? 0) > 0) throw new Error(`the hit rounds were not all hits: ${JSON.stringify(statuses)}`);
  const numbers = summary(rounds);
  return { rounds, numbers, summary: { ...numbers, cache_statuses: statuses, goal_ratio: GOAL_RATIO, budget: hitBudget(rounds) } };
}

/** The miss path against the baseline; no miss round may have answered a hit or a joined search (warm-ups included). */
async function missesPart(metricsUrl: string, miss: Target, base: Target, groups: readonly CpuGroup[], drained: () => Promise<void>) {
  const before = await lookups(metricsUrl);
  // The miss gateway's entries grow in Redis for their first MISS_ENTRY_TTL_S, then expire as
  // fast as they are stored; by then both gateways have run for that long too. The rounds
  // measure that steady state, as a deployment spends all but its first TTL in it
  // (docs/benchmarks.md, "cache", seventeenth session).
  const rounds = await pairedRounds('misses vs baseline', miss, base, groups, drained, MISS_WARMUP_S);
  const statuses = delta(await lookups(metricsUrl), before);
  if ((statuses.hit ?? 0) + (statuses.joined ?? 0) > 0) throw new Error(`the miss rounds were not all misses: ${JSON.stringify(statuses)}`);
  const numbers = summary(rounds);
  return { rounds, numbers, summary: { ...numbers, cache_statuses: statuses, cache_bytes_held_after: await gauge(metricsUrl, 'gateway_cache_bytes_held'), budget: missBudget(rounds) } };
}

async function main(started: Stoppable[]): Promise<void> {
  const loadAtStart = loadavg().map((l) => Math.round(l * 100) / 100);
  // The hit rounds' gateway keeps its entries a day (its one entry must outlive every hit
  // round); the miss rounds' MISS_ENTRY_TTL_S (one entry per request: Redis holds the last
  // that-many seconds' entries).
  const cacheEnv = { ...NO_LIMITS_ENV, CACHE_ENABLED: 'true', CACHE_TTL_BY_MODEL: '' };
  const cacheOff = { env: { ...NO_LIMITS_ENV, CACHE_ENABLED: 'false' } };
  const missSpec = MISS_AA ? cacheOff : { env: { ...cacheEnv, CACHE_TTL_S: String(MISS_ENTRY_TTL_S) } };
  const baselineSpec = BASELINE_SCRIPT === undefined ? cacheOff : { script: BASELINE_SCRIPT, env: { ...NO_LIMITS_ENV } };
  const stack: Stack = await startStack({ ...BENCH_STACK, name: 'benchcache', gateways: [{ env: { ...cacheEnv, CACHE_TTL_S: '86400' } }, missSpec, baselineSpec] });
  started.push(stack);
  const [hitGateway, missGateway, baseline] = stack.gateways;
  const sim = stack.simulator;
  if (hitGateway === undefined || missGateway === undefined || baseline === undefined || sim === undefined) throw new Error('three gateways and the simulator expected');
  const { process: proxy, url: proxyUrl } = await startBareProxy(sim.url);
  started.push(proxy);
  const secret = await fundedApiKey(stack, hitGateway.url, 'bench', 'cache benchmark');
  const headers = bearer(secret);
  await firstSearches(hitGateway.url, headers, proxyUrl, HIT_BODY, MODEL);
  // The first answer is stored after its reply (not awaited): wait until the body is a hit.
  await waitFor('the repeated body answered from the cache', async () => {
    const primed = await call('POST', `${hitGateway.url}/v1/search`, { raw: HIT_BODY, headers });
    if (primed.status !== 200) throw new Error(`the hit gateway answered ${primed.status}: ${primed.text.slice(0, 300)}`);
    return primed.body?.cache?.status === 'hit' ? true : undefined;
  }, { timeoutMs: 10_000, intervalMs: 100 });
  for (const [name, gateway] of [['miss', missGateway], ['baseline', baseline]] as const) {
    const probe = await call('POST', `${gateway.url}/v1/search`, { raw: MISS_BODY.replace('[<id>]', `probe ${name}`), headers });
    if (probe.status !== 200 || probe.body?.model !== MODEL) throw new Error(`the ${name} gateway answered ${probe.status}: ${probe.text.slice(0, 300)}`);
  }

  const info = new Redis(stack.redisUrl);
  started.push({ stop: async () => void (await info.quit()) });
  const redisPid = Number(/process_id:(\d+)/.exec(await info.info('server'))?.[1]);
  // The one account's settlement stream (redisKeys.settlementStream: `{a:<account>}:settle`), made by the searches above.
  const streams: string[] = [];
  for (let cursor = '0'; ;) {
    const [next, keys] = await info.scan(cursor, 'MATCH', '*:settle', 'COUNT', 1000);
    streams.push(...keys);
    cursor = next;
    if (cursor === '0') break;
  }
  if (streams.length === 0) throw new Error('no settlement stream found');
  const drained = streamsDrained(info, streams);
  const groups: CpuGroup[] = [
    { name: HIT_GATEWAY, pids: () => [hitGateway.process.pid] },
    { name: MISS_GATEWAY, pids: () => [missGateway.process.pid] },
    { name: 'bare proxy', pids: () => [proxy.pid] },
    { name: BASELINE_GATEWAY, pids: () => [baseline.process.pid] },
    { name: 'provider simulator', pids: () => [sim.process.pid] },
    { name: 'redis-server', pids: () => (Number.isFinite(redisPid) ? [redisPid] : []) },
    { name: 'ledger worker', pids: () => (stack.worker === undefined ? [] : [stack.worker.process.pid]) },
    { name: 'postgres (all backends)', pids: () => pidsNamed('postgres') },
  ];
  const hitTarget: Target = { name: HIT_GATEWAY, url: hitGateway.url, headers, body: HIT_BODY, unique: false };
  const proxyTarget: Target = { name: 'bare proxy', url: proxyUrl, headers: {}, body: HIT_BODY, unique: false };
  const missTarget: Target = { name: MISS_GATEWAY, url: missGateway.url, headers, body: MISS_BODY, unique: true };
  const baseTarget: Target = { name: BASELINE_GATEWAY, url: baseline.url, headers, body: MISS_BODY, unique: true };

  const hitPart = PARTS.has('hits') ? await hitsPart(hitGateway.metricsUrl, hitTarget, proxyTarget, groups, drained) : null;
  const missPart = PARTS.has('misses') ? await missesPart(missGateway.metricsUrl, missTarget, baseTarget, groups, drained) : null;
  const result = {
    measured_at: new Date().toISOString(),
    command: 'npm run bench -- cache',
    machine: { nproc: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', node: process.version, loadavg_at_start: loadAtStart, loadavg_at_end: loadavg().map((l) => Math.round(l * 100) / 100) },
    settings: {
      parts: [...PARTS], rounds: ROUNDS, duration_s: DURATION_S, warmup_s: WARMUP_S, miss_warmup_s: MISS_WARMUP_S, miss_entry_ttl_s: MISS_ENTRY_TTL_S,
      cpu_window: 'each load, then until the ledger drained it', connections: CONNECTIONS, model: MODEL, sim_base_latency_ms: 0,
      baseline: BASELINE_SCRIPT ?? 'this build with CACHE_ENABLED=false', miss_aa: MISS_AA,
    },
    hits_vs_proxy: hitPart?.summary ?? null,
    misses_vs_baseline: missPart?.summary ?? null,
    rounds: { hits: hitPart?.rounds ?? [], misses: missPart?.rounds ?? [] },
  };
  const file = writeResult('cache', result);
  if (hitPart !== null) {
    table(`Cache hits against the bare proxy (${MODEL}, ${CONNECTIONS} connections, ${ROUNDS} interleaved rounds of ${DURATION_S} s, simulator at 0 ms; statuses ${JSON.stringify(hitPart.summary.cache_statuses)})`, 'gateway (hits)', 'bare proxy', hitPart.numbers);
    budgetTable(hitPart.summary.budget);
  }
  if (missPart !== null) {
    if (MISS_AA) console.log('\nMISS_AA=1: the "gateway (misses)" below ran with its cache off (an A/A of the miss part)');
    table(`The miss path against ${BASELINE_SCRIPT ?? 'this build with CACHE_ENABLED=false'} (a new query per request; statuses ${JSON.stringify(missPart.summary.cache_statuses)})`, 'gateway (misses)', 'baseline', missPart.numbers);
    console.log(`entries the miss gateway held at the end (gateway_cache_bytes_held): ${missPart.summary.cache_bytes_held_after} bytes`);
    missBudgetTable(missPart.summary.budget);
  }
  console.log(`\nwrote ${file}`);
}

runBench(main);
