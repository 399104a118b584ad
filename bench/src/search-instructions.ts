/**
 * Instructions per search in the gateway, for two to four builds or settings side by side,
 * counted by valgrind's callgrind: a figure that does not move with the machine's load, unlike
 * wall-clock throughput (search.ts) or CPU time (search-cpu.ts). Every gateway runs under
 * callgrind (lib-valgrind-launch.ts) in one stack (same Redis, ledger worker, PostgreSQL,
 * simulator). After a warm-up of WARMUP_SEARCHES searches each, every round counts, per
 * gateway, IDLE_S seconds with no load (the timers a gateway runs anyway), then SEARCHES
 * searches at CONNECTIONS connections; callgrind's counters are zeroed before and dumped after
 * each (callgrind_control). Per search: (instructions of the load run - the idle rate x the
 * load run's wall time) / answered searches. Only the gateway process is counted (every thread
 * of it: V8's compiler and GC threads included). The order of the gateways rotates by round.
 *
 * Env: GATEWAY_A, GATEWAY_B (dist/main.js of each build; default the current build for both),
 * GATEWAY_C, GATEWAY_D (optional more); GATEWAY_<X>_ENV ("NAME=value ..." for that gateway
 * only, e.g. CACHE_ENABLED=true); GATEWAY_<X>_UNIQUE (1: a new query on every search to that
 * gateway, so one with the cache on pays a miss, a lock and a store each time instead of
 * answering hits); MODEL (exa/auto: the same upstream call in every build since 1ba14ab),
 * CACHE_ENABLED (every gateway's default: false, as in every test stack; true is production's
 * default), SEARCHES (2000), WARMUP_SEARCHES (2000), ROUNDS (2), IDLE_S (10), CONNECTIONS (8),
 * BENCH_REDIS_DB (15), BENCH_KEEP_PROFILE (1 keeps the callgrind files; the directory is
 * printed). Needs valgrind (Debian's package) on PATH. Prints Markdown and writes
 * bench/results/search-instructions.json.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { bearer, call, repoRoot, startStack, waitFor } from '@svc/test-kit';
import type { RunningProcess } from '@svc/test-kit';
import { runLoad } from './lib-autocannon';
import { median, writeResult } from './lib-results';
import { fundedApiKey } from './lib-search-setup';
import { envPairs, NO_LIMITS_ENV, BENCH_STACK, knobsFromEnv } from './lib-stack';

const root = repoRoot();
const CURRENT = join(root, 'services/search-gateway/dist/main.js');
const MODEL = process.env.MODEL ?? 'exa/auto';
const CACHE_ENABLED = process.env.CACHE_ENABLED ?? 'false';
const { SEARCHES, WARMUP_SEARCHES, ROUNDS, IDLE_S, CONNECTIONS } = knobsFromEnv({ SEARCHES: 2000, WARMUP_SEARCHES: 2000, ROUNDS: 2, IDLE_S: 10, CONNECTIONS: 8 });
const QUERY = 'open source search engines benchmark';
/** The first searches, and every search of a gateway without GATEWAY_<X>_UNIQUE. */
const BODY = JSON.stringify({ query: QUERY, model: MODEL, max_results: 10 });
/** autocannon -I puts a new id in place of [<id>] on every request. */
const UNIQUE_BODY = JSON.stringify({ query: `${QUERY} [<id>]`, model: MODEL, max_results: 10 });

interface GatewaySpec {
  label: string;
  script: string;
  env: Record<string, string>;
  unique: boolean;
}

/** GATEWAY_A and GATEWAY_B (the current build unless set), then GATEWAY_C and GATEWAY_D when set. */
function gatewaySpecs(): GatewaySpec[] {
  const specs: GatewaySpec[] = [];
  for (const label of ['A', 'B', 'C', 'D']) {
    const script = process.env[`GATEWAY_${label}`] ?? (label === 'A' || label === 'B' ? CURRENT : undefined);
    if (script === undefined) continue;
    specs.push({ label, script, env: { CACHE_ENABLED, ...envPairs(process.env[`GATEWAY_${label}_ENV`]) }, unique: process.env[`GATEWAY_${label}_UNIQUE`] === '1' });
  }
  return specs;
}

interface Counted {
  instructions: number;
  wallSeconds: number;
}

interface Round {
  idlePerSecond: number;
  load: Counted;
  searches: number;
  /** Instructions per answered search, the idle rate over the load run's wall time taken off. */
  perSearch: number;
}

/** A gateway's valgrind process, and the variables its control pipes are named by. */
interface Valgrind {
  pid: number;
  env: Record<string, string>;
}

/** The valgrind process behind a launcher (lib-valgrind-launch.ts writes it down). */
async function valgrindOf(dir: string, launcher: RunningProcess): Promise<Valgrind> {
  const file = join(dir, `launcher-${launcher.pid}.child`);
  return waitFor(`the valgrind pid of ${launcher.name}`, () => (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) as Valgrind : undefined), { timeoutMs: 10_000 });
}

/** callgrind_control with the gateway's pipe names; it exits 0 even when it found no process, so its output is checked. */
function callgrindControl(options: string[], valgrind: Valgrind): void {
  const run = spawnSync('callgrind_control', [...options, String(valgrind.pid)], { encoding: 'utf8', timeout: 120_000, env: { PATH: process.env.PATH ?? '', ...valgrind.env } });
  if (run.status !== 0 || !/\bOK\./.test(run.stdout) || /Error/.test(run.stdout + run.stderr)) {
    throw new Error(`callgrind_control ${options.join(' ')} ${valgrind.pid}: ${String(run.status)} ${run.stdout} ${run.stderr}`);
  }
}

/** Zeroes the counters of `pid`, runs `work`, dumps them: the instructions `work` cost it. */
async function counted<T>(dir: string, valgrind: Valgrind, work: () => Promise<T>): Promise<{ value: T; counted: Counted }> {
  const { pid } = valgrind;
  const before = new Set(readdirSync(dir));
  callgrindControl(['-z'], valgrind);
  const started = process.hrtime.bigint();
  const value = await work();
  callgrindControl(['-d'], valgrind);
  const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  // The dump is written before callgrind_control answers.
  const dumps = readdirSync(dir).filter((f) => f.startsWith(`callgrind.out.${pid}.`) && !before.has(f));
  if (dumps.length !== 1) throw new Error(`expected one new callgrind dump of ${pid}, found ${dumps.join(', ') || 'none'}`);
  const summary = /^summary:\s*(\d+)/m.exec(readFileSync(join(dir, dumps[0] ?? ''), 'utf8'));
  if (summary === null) throw new Error(`no summary line in ${dumps[0]}`);
  return { value, counted: { instructions: Number(summary[1]), wallSeconds } };
}

async function main(): Promise<void> {
  if (spawnSync('valgrind', ['--version']).status !== 0) throw new Error('search-instructions needs valgrind on PATH (Debian: apt-get install valgrind)');
  const dir = mkdtempSync(join(tmpdir(), 'bench-instr-'));
  const launcher = join(root, 'bench/dist/lib-valgrind-launch.js');
  const specs = gatewaySpecs();
  const started: { stop(): Promise<void> }[] = [];
  const valgrinds: Valgrind[] = [];
  try {
    const stack = await startStack({
      ...BENCH_STACK,
      name: 'benchinstr',
      gateways: specs.map((spec) => ({
        script: launcher,
        // Node under valgrind starts a Nest app in minutes on a busy machine.
        readyTimeoutMs: 900_000,
        env: { VALGRIND_TARGET_SCRIPT: spec.script, VALGRIND_OUT_DIR: dir, ...spec.env },
      })),
      gatewayEnv: NO_LIMITS_ENV,
    });
    started.push(stack);
    const gateways: { spec: GatewaySpec; url: string; valgrind: Valgrind }[] = [];
    for (const [index, spec] of specs.entries()) {
      const gateway = stack.gateways[index];
      if (gateway === undefined) throw new Error(`gateway ${spec.label} did not start`);
      const valgrind = await valgrindOf(dir, gateway.process);
      valgrinds.push(valgrind);
      gateways.push({ spec, url: gateway.url, valgrind });
    }
    const first = gateways[0];
    if (first === undefined) throw new Error('no gateway');
    const secret = await fundedApiKey(stack, first.url, 'benchinstr', 'search instructions benchmark');
    const headers = { 'content-type': 'application/json', ...bearer(secret) };
    for (const gateway of gateways) {
      await waitFor(`a first 200 from ${gateway.spec.label}`, async () => {
        const response = await call('POST', `${gateway.url}/v1/search`, { raw: BODY, headers: bearer(secret) });
        return response.status === 200 ? true : undefined;
      }, { timeoutMs: 300_000, intervalMs: 500 });
    }
    const load = (gateway: { spec: GatewaySpec; url: string }, amount: number) => runLoad({
      url: `${gateway.url}/v1/search`, method: 'POST', connections: CONNECTIONS, durationSeconds: 3600, amount, headers,
      body: gateway.spec.unique ? UNIQUE_BODY : BODY, idReplacement: gateway.spec.unique,
      // A cold gateway under valgrind answers its first searches in seconds.
      killAfterMs: 3_600_000, timeoutSeconds: 120,
    });
    for (const gateway of gateways) {
      console.log(`warm-up ${gateway.spec.label}: ${WARMUP_SEARCHES} searches`);
      const warm = await load(gateway, WARMUP_SEARCHES);
      if (warm.non2xx > 0 || warm.errors > 0) console.log(`warm-up ${gateway.spec.label}: non-2xx ${warm.non2xx}, errors ${warm.errors}: ${JSON.stringify(warm.statusCodes)}`);
    }
    const measure = async (gateway: { spec: GatewaySpec; url: string; valgrind: Valgrind }): Promise<Round> => {
      // Instrumented only while measured (lib-valgrind-launch.ts starts it off).
      callgrindControl(['-i', 'on'], gateway.valgrind);
      const idle = await counted(dir, gateway.valgrind, () => sleep(IDLE_S * 1000));
      const idlePerSecond = idle.counted.instructions / idle.counted.wallSeconds;
      const run = await counted(dir, gateway.valgrind, () => load(gateway, SEARCHES));
      if (run.value.non2xx > 0 || run.value.errors > 0) throw new Error(`${gateway.spec.label}: non-2xx ${run.value.non2xx}, errors ${run.value.errors}: ${JSON.stringify(run.value.statusCodes)}`);
      callgrindControl(['-i', 'off'], gateway.valgrind);
      const searches = run.value.statusCodes['200'] ?? 0;
      const perSearch = (run.counted.instructions - idlePerSecond * run.counted.wallSeconds) / searches;
      return { idlePerSecond, load: run.counted, searches, perSearch };
    };
    const rounds: Record<string, Round>[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const round: Record<string, Round> = {};
      // Each round starts at the next gateway: none is always measured first.
      for (let k = 0; k < gateways.length; k++) {
        const gateway = gateways[(i + k) % gateways.length];
        if (gateway === undefined) continue;
        round[gateway.spec.label] = await measure(gateway);
      }
      rounds.push(round);
      console.log(`round ${i + 1}/${ROUNDS}: ${gateways.map((g) => {
        const r = round[g.spec.label];
        return r === undefined ? '' : `${g.spec.label} ${Math.round(r.perSearch)} instructions/search (idle ${Math.round(r.idlePerSecond)}/s, ${r.load.wallSeconds.toFixed(1)} s)`;
      }).join(', ')}`);
    }
    const medians: Record<string, number> = {};
    for (const gateway of gateways) medians[gateway.spec.label] = median(rounds.map((r) => r[gateway.spec.label]?.perSearch ?? Number.NaN));
    const base = medians[first.spec.label] ?? Number.NaN;
    console.log(`\nGateway instructions per search (callgrind), ${MODEL}, ${SEARCHES} searches per round at ${CONNECTIONS} connections, median of ${ROUNDS} rounds`);
    console.log(`\n| gateway | script | settings | instructions per search | per round | vs ${first.spec.label} |`);
    console.log('|---|---|---|---|---|---|');
    for (const gateway of gateways) {
      const m = medians[gateway.spec.label] ?? Number.NaN;
      const settings = [...Object.entries(gateway.spec.env).map(([k, v]) => `${k}=${v}`), ...(gateway.spec.unique ? ['a new query each search'] : [])].join(', ');
      console.log(`| ${gateway.spec.label} | ${gateway.spec.script.replace(root, '.')} | ${settings} | ${Math.round(m)} | ${rounds.map((r) => Math.round(r[gateway.spec.label]?.perSearch ?? Number.NaN)).join(' ')} | ${(((m - base) / base) * 100).toFixed(1)} % |`);
    }
    const file = writeResult('search-instructions', {
      command: 'npm run bench -- search-instructions',
      settings: { model: MODEL, searches: SEARCHES, warmup_searches: WARMUP_SEARCHES, rounds: ROUNDS, idle_s: IDLE_S, connections: CONNECTIONS },
      gateways: specs.map((spec) => ({ label: spec.label, script: spec.script.replace(root, '.'), env: spec.env, unique_queries: spec.unique })),
      median_instructions_per_search: medians,
      rounds,
    });
    console.log(`\nwrote ${file}`);
  } finally {
    for (const process of started.reverse()) await process.stop();
    // A launcher stopped by SIGKILL would leave its valgrind process behind: ours, by pid.
    for (const { pid } of valgrinds) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    if (process.env.BENCH_KEEP_PROFILE === '1') console.log(`callgrind files kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
