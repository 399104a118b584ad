/**
 * The search hot path under load (docs/benchmarks.md): POST /v1/search on the started gateway
 * (every check on: key, rate limit, in-flight caps, credit reservation and settlement in
 * Redis) side by side with a bare Fastify + undici proxy (bare-proxy.ts) forwarding to the
 * same simulator endpoint with no checks, the simulator at zero latency.
 *
 * Same body, same concurrency, fixed duration per round, rounds interleaved after a
 * warm-up of each: gateway then proxy in odd rounds, proxy then gateway in even ones, so
 * neither target always runs second (this machine's speed drifts by tens of percent within
 * a minute; many short paired rounds and the median of their ratios are what hold still).
 * CPU per process is sampled during every round. Then, not counted in the ratio: one
 * gateway round under the CPU profiler (lib-profile-hook.ts), with the gateway's Redis
 * batch counters (pipelines awaited, pipelines sent without waiting, writes), and a short
 * light run under Redis MONITOR to count the commands each search sends.
 * Prints Markdown and writes bench/results/search.json.
 *
 * Env: ROUNDS (16), DURATION_S (4), WARMUP_S (5), CONNECTIONS (32), MODEL (exa/fast),
 * COUNT_SEARCHES (400), BENCH_REDIS_DB (15), BENCH_GATEWAY_SCRIPT (another build's gateway
 * dist/main.js, to compare two versions), BENCH_KEEP_PROFILE (1 keeps the .cpuprofile files).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Redis } from 'ioredis';
import { bearer, call, repoRoot, startStack, waitFor } from '@svc/test-kit';
import type { RunningProcess, Stack } from '@svc/test-kit';
import { runLoad } from './lib-autocannon';
import type { LoadResult } from './lib-autocannon';
import { measureCpu, pidsNamed } from './lib-cpu';
import type { CpuGroup, CpuReport } from './lib-cpu';
import { readCpuProfile, summarizeCpuProfile } from './lib-cpuprofile';
import type { ProfileSummary } from './lib-cpuprofile';
import { countRedisCommands } from './lib-redis-count';
import type { CommandCounts } from './lib-redis-count';
import { median, writeResult } from './lib-results';
import { firstSearches, fundedApiKey, searchBody, startBareProxy } from './lib-search-setup';
import { NO_LIMITS_ENV, BENCH_STACK } from './lib-stack';

const ROUNDS = Number(process.env.ROUNDS ?? 16);
const DURATION_S = Number(process.env.DURATION_S ?? 4);
const WARMUP_S = Number(process.env.WARMUP_S ?? 5);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 32);
const MODEL = process.env.MODEL ?? 'exa/fast';
const COUNT_SEARCHES = Number(process.env.COUNT_SEARCHES ?? 400);
const BODY = searchBody(MODEL);

interface Target {
  name: 'gateway' | 'proxy';
  url: string;
  headers: Record<string, string>;
}

function load(target: Target, durationSeconds: number, amount?: number, connections = CONNECTIONS): Promise<LoadResult> {
  return runLoad({
    url: `${target.url}/v1/search`, method: 'POST', connections, durationSeconds, amount,
    headers: { 'content-type': 'application/json', ...target.headers }, body: BODY,
  });
}

async function simTotal(simUrl: string, provider: 'exa'): Promise<number> {
  const stats = await call('GET', `${simUrl}/_sim/stats`);
  return Number(stats.body?.[provider]?.total);
}

/**
 * Runs `work` with the gateway's profiler hook on (SIGUSR2 toggles it, see
 * lib-profile-hook.ts) and returns the CPU profile summary and the Redis round trips
 * (socket writes to Redis) the gateway made meanwhile. `n` counts the toggles so far.
 */
/** What the gateway's Redis batches did during a profiled run (redisBatchCounters), or null when not read. */
interface BatchCounts {
  awaited: number;
  sent: number;
  writes: number;
}

async function withGatewayProfile<T>(gateway: RunningProcess, dir: string, n: number, work: () => Promise<T>): Promise<{ value: T; profile: ProfileSummary; redisWrites: number; batch: BatchCounts | null }> {
  process.kill(gateway.pid, 'SIGUSR2');
  const value = await work();
  process.kill(gateway.pid, 'SIGUSR2');
  const profileFile = join(dir, `${gateway.pid}-${n}.cpuprofile`);
  await waitFor('the gateway CPU profile', () => (existsSync(profileFile) ? true : undefined), { timeoutMs: 30_000 });
  const counters = JSON.parse(readFileSync(join(dir, `${gateway.pid}-${n}.json`), 'utf8')) as { redisWrites: number; batch: BatchCounts | null };
  return { value, profile: summarizeCpuProfile(readCpuProfile(profileFile), { top: 20 }), redisWrites: counters.redisWrites, batch: counters.batch };
}

function perSearchOf(batch: BatchCounts | null, searches: number): BatchCounts | null {
  if (batch === null) return null;
  const per = (n: number): number => Math.round((n / Math.max(1, searches)) * 100) / 100;
  return { awaited: per(batch.awaited), sent: per(batch.sent), writes: per(batch.writes) };
}

function row(name: string, r: LoadResult): string {
  return `| ${name} | ${r.requestsPerSecond.toFixed(0)} | ${r.latencyMs.p50} | ${r.latencyMs.p99} | ${r.total} | ${r.non2xx} | ${r.errors + r.timeouts} |`;
}

async function main(): Promise<void> {
  const root = repoRoot();
  // Other work on the machine skews both targets; recorded with the result.
  const loadAtStart = loadavg().map((l) => Math.round(l * 100) / 100);
  const started: { stop(): Promise<void> }[] = [];
  // Profiles are several MB: kept outside the repository, summarized into search.json.
  const profileDir = mkdtempSync(join(tmpdir(), 'bench-search-'));
  try {
    const stack: Stack = await startStack({
      ...BENCH_STACK,
      name: 'benchsearch',
      // BENCH_GATEWAY_SCRIPT: another build of the gateway, to compare two versions.
      ...(process.env.BENCH_GATEWAY_SCRIPT === undefined ? {} : { gatewayScript: process.env.BENCH_GATEWAY_SCRIPT }),
      gatewayEnv: {
        ...NO_LIMITS_ENV,
        // The profiler hook is idle until SIGUSR2 (it does not even open an inspector session).
        NODE_OPTIONS: `--require ${join(root, 'bench/dist/lib-profile-hook.js')}`,
        BENCH_PROFILE_DIR: profileDir,
        // The gateway's Redis batch counters, read by the hook from the module the gateway loaded.
        BENCH_BATCH_MODULE: join(dirname(process.env.BENCH_GATEWAY_SCRIPT ?? join(root, 'services/search-gateway/dist/main.js')), 'redis/redis-batch.js'),
      },
    });
    started.push(stack);
    const gatewayInfo = stack.gateways[0];
    const sim = stack.simulator?.process;
    if (gatewayInfo === undefined || stack.simulator === undefined || sim === undefined) throw new Error('the gateway and the simulator expected');
    const simUrl = stack.simulator.url;
    const gw = gatewayInfo.url;

    const { process: proxy, url: proxyUrl } = await startBareProxy(simUrl);
    started.push(proxy);

    const apiKeySecret = await fundedApiKey(stack, gw, 'bench', 'search benchmark');
    const gateway: Target = { name: 'gateway', url: gw, headers: bearer(apiKeySecret) };
    const bare: Target = { name: 'proxy', url: proxyUrl, headers: {} };
    await firstSearches(gw, gateway.headers, bare.url, BODY, MODEL);
    const credits0 = await call('GET', `${gw}/v1/credits`, { headers: gateway.headers });

    console.log(`warm-up: ${WARMUP_S} s each`);
    await load(gateway, WARMUP_S);
    await load(bare, WARMUP_S);

    // CPU per process during every round: the gateway is not the only thing on the 2 cores.
    const info = new Redis(stack.redisUrl);
    const redisPid = Number(/process_id:(\d+)/.exec(await info.info('server'))?.[1]);
    await info.quit();
    const cpuGroups: CpuGroup[] = [
      { name: 'search-gateway', pids: () => [gatewayInfo.process.pid] },
      { name: 'bare proxy', pids: () => [proxy.pid] },
      { name: 'provider simulator', pids: () => [sim.pid] },
      { name: 'ledger worker', pids: () => (stack.worker === undefined ? [] : [stack.worker.process.pid]) },
      { name: 'billing + account-admin', pids: () => [stack.billing.process.pid, stack.accountAdmin.process.pid] },
      { name: 'redis-server', pids: () => (Number.isFinite(redisPid) ? [redisPid] : []) },
      { name: 'postgres (all backends)', pids: () => pidsNamed('postgres') },
    ];
    const rounds: { gateway: LoadResult; proxy: LoadResult; cpu: { gateway: CpuReport; proxy: CpuReport } }[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const measure = (target: Target) => measureCpu(cpuGroups, () => load(target, DURATION_S));
      let g: LoadResult;
      let p: LoadResult;
      let gCpu: CpuReport;
      let pCpu: CpuReport;
      if (i % 2 === 0) {
        ({ value: g, cpu: gCpu } = await measure(gateway));
        ({ value: p, cpu: pCpu } = await measure(bare));
      } else {
        ({ value: p, cpu: pCpu } = await measure(bare));
        ({ value: g, cpu: gCpu } = await measure(gateway));
      }
      rounds.push({ gateway: g, proxy: p, cpu: { gateway: gCpu, proxy: pCpu } });
      console.log(`round ${i + 1}/${ROUNDS}: gateway ${g.requestsPerSecond.toFixed(0)} req/s (non-2xx ${g.non2xx}), proxy ${p.requestsPerSecond.toFixed(0)} req/s (non-2xx ${p.non2xx}), ratio ${(g.requestsPerSecond / p.requestsPerSecond).toFixed(2)}`);
    }

    console.log(`profiling one ${DURATION_S} s gateway round`);
    const profiledRun = await withGatewayProfile(gatewayInfo.process, profileDir, 1, () => load(gateway, DURATION_S));
    const profiled = { load: profiledRun.value, profile: profiledRun.profile };

    // Redis commands per search: a short light run under MONITOR (not a throughput figure).
    const labels = new Map<number, string>([
      [gatewayInfo.process.pid, 'search-gateway'], [stack.billing.process.pid, 'billing'],
      [stack.accountAdmin.process.pid, 'account-admin'],
    ]);
    const simBefore = await simTotal(simUrl, 'exa');
    let counted: LoadResult | undefined;
    let roundTrips = 0;
    let countedBatch: BatchCounts | null = null;
    const commands: CommandCounts = await countRedisCommands(stack.redisUrl, labels, async () => {
      const run = await withGatewayProfile(gatewayInfo.process, profileDir, 2, () => load(gateway, 60, COUNT_SEARCHES, 8));
      counted = run.value;
      roundTrips = run.redisWrites;
      countedBatch = run.batch;
    });
    const upstreamCalls = (await simTotal(simUrl, 'exa')) - simBefore;
    if (counted === undefined) throw new Error('the counted run did not finish');
    const searches = counted.statusCodes['200'] ?? 0;
    const perSearch: Record<string, Record<string, number>> = {};
    for (const [label, byCommand] of Object.entries(commands.byProcess)) {
      perSearch[label] = Object.fromEntries(Object.entries(byCommand).map(([c, n]) => [c, Math.round((n / Math.max(1, searches)) * 100) / 100]));
    }
    const credits1 = await call('GET', `${gw}/v1/credits`, { headers: gateway.headers });

    const rps = (k: 'gateway' | 'proxy'): number => median(rounds.map((r) => r[k].requestsPerSecond));
    const lat = (k: 'gateway' | 'proxy', p: 'p50' | 'p99'): number => median(rounds.map((r) => r[k].latencyMs[p]));
    const ratio = rps('gateway') / rps('proxy');
    const ratioOfRounds = median(rounds.map((r) => r.gateway.requestsPerSecond / r.proxy.requestsPerSecond));
    const non2xx = { gateway: rounds.reduce((n, r) => n + r.gateway.non2xx + r.gateway.errors, 0), proxy: rounds.reduce((n, r) => n + r.proxy.non2xx + r.proxy.errors, 0) };
    const result = {
      measured_at: new Date().toISOString(),
      command: 'npm run bench -- search',
      machine: { nproc: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', node: process.version, loadavg_at_start: loadAtStart, loadavg_at_end: loadavg().map((l) => Math.round(l * 100) / 100) },
      settings: { rounds: ROUNDS, duration_s: DURATION_S, warmup_s: WARMUP_S, connections: CONNECTIONS, model: MODEL, body: JSON.parse(BODY) as unknown, sim_base_latency_ms: 0 },
      median: {
        gateway: { rps: rps('gateway'), p50_ms: lat('gateway', 'p50'), p99_ms: lat('gateway', 'p99') },
        proxy: { rps: rps('proxy'), p50_ms: lat('proxy', 'p50'), p99_ms: lat('proxy', 'p99') },
        ratio_of_medians: ratio,
        median_of_round_ratios: ratioOfRounds,
      },
      non_2xx_or_errors: non2xx,
      rounds,
      profiled_round: { load: profiled.load, cpu: profiled.profile },
      redis: {
        searches, upstream_calls: upstreamCalls, gateway_round_trips: roundTrips,
        gateway_round_trips_per_search: Math.round((roundTrips / Math.max(1, searches)) * 100) / 100,
        profiled_round_gateway_round_trips_per_search: Math.round((profiledRun.redisWrites / Math.max(1, profiled.load.statusCodes['200'] ?? 0)) * 100) / 100,
        // Pipelines a search waited for (awaited) and sent without waiting (sent), per search.
        counted_run_batch_per_search: perSearchOf(countedBatch, searches),
        profiled_round_batch_per_search: perSearchOf(profiledRun.batch, profiled.load.statusCodes['200'] ?? 0),
        commands_total: commands.total, commands_per_search_by_process: perSearch, counted_run: counted,
      },
      credits: { before: credits0.body as unknown, after: credits1.body as unknown },
    };
    const file = writeResult('search', result);

    console.log(`\nPOST /v1/search (${MODEL}), ${CONNECTIONS} connections, ${ROUNDS} interleaved rounds of ${DURATION_S} s, simulator at 0 ms`);
    console.log('| target | req/s | p50 ms | p99 ms | responses | non-2xx | errors |');
    console.log('|---|---|---|---|---|---|---|');
    rounds.forEach((r, i) => {
      console.log(row(`gateway #${i + 1}`, r.gateway));
      console.log(row(`proxy #${i + 1}`, r.proxy));
    });
    console.log(`\nmedian: gateway ${rps('gateway').toFixed(0)} req/s (p50 ${lat('gateway', 'p50')} ms, p99 ${lat('gateway', 'p99')} ms), proxy ${rps('proxy').toFixed(0)} req/s (p50 ${lat('proxy', 'p50')} ms, p99 ${lat('proxy', 'p99')} ms)`);
    console.log(`ratio gateway/proxy: ${ratio.toFixed(3)} (median of medians), ${ratioOfRounds.toFixed(3)} (median of per-round ratios)`);
    console.log(`non-2xx or errors: gateway ${non2xx.gateway}, proxy ${non2xx.proxy}`);
    console.log('\nCPU during the rounds (cores busy, median over rounds; 1.00 = one core the whole round):');
    console.log('| process | gateway rounds | proxy rounds |');
    console.log('|---|---|---|');
    const cpuMedian = (k: 'gateway' | 'proxy', name: string): number => median(rounds.map((r) => r.cpu[k].groups.find((g) => g.name === name)?.cores ?? Number.NaN));
    for (const name of [...cpuGroups.map((g) => g.name), 'load generator (autocannon)']) {
      console.log(`| ${name} | ${cpuMedian('gateway', name).toFixed(2)} | ${cpuMedian('proxy', name).toFixed(2)} |`);
    }
    console.log(`| other (kernel, rest of the machine) | ${median(rounds.map((r) => r.cpu.gateway.otherCores)).toFixed(2)} | ${median(rounds.map((r) => r.cpu.proxy.otherCores)).toFixed(2)} |`);
    console.log(`| **machine busy** | ${median(rounds.map((r) => r.cpu.gateway.machineBusyCores)).toFixed(2)} | ${median(rounds.map((r) => r.cpu.proxy.machineBusyCores)).toFixed(2)} |`);
    console.log(`\nprofiled gateway round: ${profiled.load.requestsPerSecond.toFixed(0)} req/s; busy ${profiled.profile.busyPercentOfWall}% of one core`);
    console.log('| area | self ms | % of busy |');
    console.log('|---|---|---|');
    for (const a of profiled.profile.byArea.slice(0, 15)) console.log(`| ${a.area} | ${a.selfMs} | ${a.percent} |`);
    console.log('\n| function | where | self ms | % of busy |');
    console.log('|---|---|---|---|');
    for (const f of profiled.profile.topFunctions) console.log(`| ${f.name} | ${f.where} | ${f.selfMs} | ${f.percent} |`);
    console.log('\n| our file (inclusive) | ms | % of busy |');
    console.log('|---|---|---|');
    for (const f of profiled.profile.inclusiveOwnFiles) console.log(`| ${f.file} | ${f.inclusiveMs} | ${f.percent} |`);
    console.log(`\nRedis writes per search (gateway socket writes to Redis): ${result.redis.gateway_round_trips_per_search} on ${searches} searches at 8 connections, ${result.redis.profiled_round_gateway_round_trips_per_search} in the profiled round`);
    const batchLine = (b: BatchCounts | null): string => (b === null ? 'not read' : `awaited ${b.awaited}, sent without waiting ${b.sent}, writes ${b.writes}`);
    console.log(`Redis pipelines per search (the gateway's batch counters): ${batchLine(result.redis.counted_run_batch_per_search)} at 8 connections; ${batchLine(result.redis.profiled_round_batch_per_search)} in the profiled round`);
    console.log(`Redis commands per search (MONITOR, ${upstreamCalls} upstream calls):`);
    for (const [label, byCommand] of Object.entries(perSearch)) console.log(`- ${label}: ${Object.entries(byCommand).map(([c, n]) => `${c} ${n}`).join(', ')}`);
    console.log(`\nwrote ${file}`);
  } finally {
    for (const process of started.reverse()) await process.stop();
    // BENCH_KEEP_PROFILE=1 keeps the gateway's .cpuprofile files for a closer look.
    if (process.env.BENCH_KEEP_PROFILE === '1') console.log(`profiles kept in ${profileDir}`);
    else rmSync(profileDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
