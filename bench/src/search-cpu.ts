/**
 * CPU per search at a fixed request rate, for two gateway builds side by side (A/B).
 *
 * The throughput ratio of search.ts moves by ±0.05 from run to run on this machine, more than
 * most single changes are worth. CPU time per request at a fixed rate below saturation holds
 * much stiller, so a change is judged here first: both builds run as gateways of one stack
 * (same Redis, same ledger worker and PostgreSQL, same simulator), and paired rounds send the
 * same fixed rate to A then B, or B then A, alternating. Reported per build: the median over
 * rounds of µs of CPU per answered search in the gateway, Redis, PostgreSQL, the ledger
 * worker and the simulator, and their sum.
 *
 * Each build runs as two gateways, in the stack's places A B B A: a gateway's place in the
 * stack (the first one does more of the stack's background work, and the machine's cores are
 * not alike) moved the result by about 9 µs when each build had one place, more than most
 * changes are worth. A build's figure in a round is the mean of its two gateways; the four
 * run in an order that rotates by round.
 *
 * Env: GATEWAY_A and GATEWAY_B (dist/main.js of each build; default the current build for
 * both: an A/A, which measures the method's own spread), RATE (1200 req/s; 0: as fast as
 * answered, so that each round's requests/s compares throughput too), ROUNDS (10),
 * DURATION_S (5), WARMUP_S (5), CONNECTIONS (32), BENCH_REDIS_DB (15), MODEL (exa/fast; `exa/fast,brave/web`: a
 * fallback list sent as `models`, the first answering; exa/auto to
 * compare with a build older than the exa/fast fix, whose `lite` the simulator refuses),
 * GATEWAY_A_ENV and GATEWAY_B_ENV (`NAME=value ...` for that build's gateways only, e.g.
 * CACHE_ENABLED=true: every search after the first a cache hit; every gateway's default is the
 * test stacks' CACHE_ENABLED=false), GATEWAY_A_UNIQUE and GATEWAY_B_UNIQUE (1: a new query on
 * every search to that build's gateways: with the cache on, every search a miss).
 * Prints Markdown and writes bench/results/search-cpu.json.
 */
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { bearer, call, newAccount, newApiKey, repoRoot, startStack, waitFor } from '@svc/test-kit';
import type { RunningProcess } from '@svc/test-kit';
import { runLoad } from './lib-autocannon';
import type { LoadResult } from './lib-autocannon';
import { measureCpu, pidsNamed } from './lib-cpu';
import type { CpuGroup } from './lib-cpu';
import { median, writeResult } from './lib-results';
import { envPairs, NO_LIMITS_ENV, BENCH_STACK } from './lib-stack';
import { runBench } from './lib-run';
import type { Stoppable } from './lib-run';
import { searchBody } from './lib-search-setup';

const root = repoRoot();
const CURRENT = join(root, 'services/search-gateway/dist/main.js');
const GATEWAY_A = process.env.GATEWAY_A ?? CURRENT;
const GATEWAY_B = process.env.GATEWAY_B ?? CURRENT;
const RATE = Number(process.env.RATE ?? 1200);
const ROUNDS = Number(process.env.ROUNDS ?? 10);
const DURATION_S = Number(process.env.DURATION_S ?? 5);
const WARMUP_S = Number(process.env.WARMUP_S ?? 5);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 32);
const MODEL = process.env.MODEL ?? 'exa/fast';
/** The body every gateway gets; with GATEWAY_<X>_UNIQUE=1 a new query on every search (autocannon replaces `[<id>]`). */
function bodyOf(unique: boolean): string {
  return searchBody(MODEL, undefined, unique);
}
/** Each build's places in the stack (see above): A B B A. */
const LAYOUT = ['A', 'B', 'B', 'A'] as const;
const PROCESSES = ['search-gateway', 'redis-server', 'postgres', 'ledger worker', 'provider simulator'] as const;

interface Round {
  load: LoadResult;
  /** µs of CPU per answered search, by process, and their sum. */
  perSearchUs: Record<string, number>;
  /** Bytes Redis read per answered search (every client's, the gateway's most). */
  redisBytesPerSearch: number;
}

/** One build's gateway environment: GATEWAY_<X>_ENV, or nothing. */
function buildEnv(label: 'A' | 'B'): Record<string, string> {
  return envPairs(process.env[`GATEWAY_${label}_ENV`]);
}

async function main(started: Stoppable[]): Promise<void> {
  const stack = await startStack({
    ...BENCH_STACK,
    name: 'benchsearchcpu',
    gateways: LAYOUT.map((label) => ({ script: label === 'A' ? GATEWAY_A : GATEWAY_B, env: buildEnv(label) })),
    gatewayEnv: NO_LIMITS_ENV,
  });
  started.push(stack);
  const [a, b, b2, a2] = stack.gateways;
  const sim = stack.simulator?.process;
  if (a === undefined || b === undefined || b2 === undefined || a2 === undefined || sim === undefined) throw new Error('four gateways and the simulator expected');
  const places = [a, b, b2, a2];
  const account = await newAccount(a.url, 'benchcpu');
  const apiKey = await newApiKey(a.url, account.managementKey);
  const grant = await call('POST', `${stack.billing.operatorUrl}/operator/accounts/${account.accountId}/grants`, {
    body: { amount_usd: 1_000_000, reason: 'search cpu benchmark' }, headers: bearer(stack.operatorToken),
  });
  if (grant.status !== 201) throw new Error(`grant failed: ${grant.status} ${grant.text}`);
  const headers = { 'content-type': 'application/json', ...bearer(apiKey.secret) };
  for (const gateway of places) {
    await waitFor(`a first 200 from ${gateway.url}`, async () => {
      const response = await call('POST', `${gateway.url}/v1/search`, { raw: bodyOf(false), headers: bearer(apiKey.secret) });
      return response.status === 200 ? true : undefined;
    }, { timeoutMs: 20_000, intervalMs: 200 });
  }
  const info = new Redis(stack.redisUrl);
  started.push({ stop: async () => { await info.quit(); } });
  const redisPid = Number(/process_id:(\d+)/.exec(await info.info('server'))?.[1]);
  // Bytes Redis read from all its clients (the gateway's commands, plus the ledger worker's
  // and the control plane's, the same for both builds): per search, what a build sends.
  const redisBytesIn = async (): Promise<number> => Number(/total_net_input_bytes:(\d+)/.exec(await info.info('stats'))?.[1]);
  const groupsFor = (gateway: RunningProcess): CpuGroup[] => [
    { name: 'search-gateway', pids: () => [gateway.pid] },
    { name: 'redis-server', pids: () => (Number.isFinite(redisPid) ? [redisPid] : []) },
    { name: 'postgres', pids: () => pidsNamed('postgres') },
    { name: 'ledger worker', pids: () => (stack.worker === undefined ? [] : [stack.worker.process.pid]) },
    { name: 'provider simulator', pids: () => [sim.pid] },
  ];
  /** Whether the gateway in this place gets a new query on every search (GATEWAY_<X>_UNIQUE). */
  const uniqueAt = (place: number): boolean => process.env[`GATEWAY_${LAYOUT[place] ?? 'A'}_UNIQUE`] === '1';
  const run = async (gateway: { url: string; process: RunningProcess }, seconds: number, unique: boolean): Promise<Round> => {
    const bytesBefore = await redisBytesIn();
    const { value: load, cpu } = await measureCpu(groupsFor(gateway.process), () => runLoad({
      url: `${gateway.url}/v1/search`, method: 'POST', connections: CONNECTIONS, durationSeconds: seconds, ...(RATE > 0 ? { rate: RATE } : {}), headers,
      body: bodyOf(unique), idReplacement: unique,
    }));
    if (load.non2xx > 0 || load.errors > 0) throw new Error(`non-2xx ${load.non2xx}, errors ${load.errors}: ${JSON.stringify(load.statusCodes)}`);
    const perSearchUs: Record<string, number> = {};
    let sum = 0;
    for (const name of PROCESSES) {
      const cores = cpu.groups.find((g) => g.name === name)?.cores ?? Number.NaN;
      const us = (cores * 1_000_000) / load.requestsPerSecond;
      perSearchUs[name] = Math.round(us * 10) / 10;
      sum += us;
    }
    perSearchUs.sum = Math.round(sum * 10) / 10;
    const redisBytesPerSearch = Math.round((await redisBytesIn() - bytesBefore) / (load.requestsPerSecond * seconds));
    return { load, perSearchUs, redisBytesPerSearch };
  };
  console.log(`warm-up: ${WARMUP_S} s each at ${RATE > 0 ? `${RATE} req/s` : 'full speed'}`);
  for (const [place, gateway] of places.entries()) await run(gateway, WARMUP_S, uniqueAt(place));
  /** A build's round: the mean of its two places (CPU per search by process, requests/s). */
  const mean = (x: Round, y: Round): Round => ({
    load: { ...x.load, requestsPerSecond: (x.load.requestsPerSecond + y.load.requestsPerSecond) / 2 },
    perSearchUs: Object.fromEntries(Object.keys(x.perSearchUs).map((name) => [name, Math.round((((x.perSearchUs[name] ?? 0) + (y.perSearchUs[name] ?? 0)) / 2) * 10) / 10])),
    redisBytesPerSearch: (x.redisBytesPerSearch + y.redisBytesPerSearch) / 2,
  });
  const rounds: { a: Round; b: Round }[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const measured = new Map<number, Round>();
    for (let k = 0; k < places.length; k++) {
      const place = (i + k) % places.length;
      measured.set(place, await run(places[place] as (typeof places)[number], DURATION_S, uniqueAt(place)));
    }
    const at = (place: number): Round => measured.get(place) as Round;
    const ra = mean(at(0), at(3));
    const rb = mean(at(1), at(2));
    rounds.push({ a: ra, b: rb });
    console.log(`round ${i + 1}/${ROUNDS}: A ${ra.perSearchUs.sum} µs/search (gateway ${ra.perSearchUs['search-gateway']}, ${Math.round(ra.load.requestsPerSecond)} req/s), B ${rb.perSearchUs.sum} µs/search (gateway ${rb.perSearchUs['search-gateway']}, ${Math.round(rb.load.requestsPerSecond)} req/s)`);
  }
  const medians = (side: 'a' | 'b'): Record<string, number> => Object.fromEntries(
    [...PROCESSES, 'sum'].map((name) => [name, Math.round(median(rounds.map((r) => r[side].perSearchUs[name] ?? Number.NaN)) * 10) / 10]),
  );
  const ma = medians('a');
  const mb = medians('b');
  console.log(`\nCPU per search at ${RATE > 0 ? `${RATE} req/s` : 'full speed'}, ${CONNECTIONS} connections, median of ${ROUNDS} paired rounds of ${DURATION_S} s (µs)`);
  console.log(`A: ${GATEWAY_A}\nB: ${GATEWAY_B}\n`);
  console.log('| process | A | B | B - A |');
  console.log('|---|---|---|---|');
  for (const name of [...PROCESSES, 'sum']) {
    console.log(`| ${name} | ${ma[name]} | ${mb[name]} | ${Math.round(((mb[name] ?? 0) - (ma[name] ?? 0)) * 10) / 10} |`);
  }
  const bytesA = median(rounds.map((r) => r.a.redisBytesPerSearch));
  const bytesB = median(rounds.map((r) => r.b.redisBytesPerSearch));
  console.log(`\nbytes Redis read per search (median): A ${bytesA}, B ${bytesB}`);
  const pairedSum = rounds.map((r) => (r.b.perSearchUs.sum ?? 0) - (r.a.perSearchUs.sum ?? 0));
  const pairedGateway = rounds.map((r) => (r.b.perSearchUs['search-gateway'] ?? 0) - (r.a.perSearchUs['search-gateway'] ?? 0));
  console.log(`\nmedian of paired differences B - A: sum ${Math.round(median(pairedSum) * 10) / 10} µs, gateway ${Math.round(median(pairedGateway) * 10) / 10} µs`);
  const rpsRatio = rounds.map((r) => r.b.load.requestsPerSecond / r.a.load.requestsPerSecond);
  console.log(`requests/s B / A: median of per-round ratios ${Math.round(median(rpsRatio) * 1000) / 1000} (${rpsRatio.map((x) => x.toFixed(3)).join(' ')})${RATE > 0 ? ' (a fixed rate: expected 1)' : ''}`);
  const file = writeResult('search-cpu', {
    command: 'npm run bench -- search-cpu',
    settings: { gateway_a: GATEWAY_A.replace(root, '.'), gateway_b: GATEWAY_B.replace(root, '.'), places: 'A B B A', model: MODEL, rate: RATE, rounds: ROUNDS, duration_s: DURATION_S, connections: CONNECTIONS },
    median_us_per_search: { a: ma, b: mb },
    median_paired_difference_us: { sum: median(pairedSum), gateway: median(pairedGateway) },
    requests_per_second_ratio_b_to_a: { median: median(rpsRatio), rounds: rpsRatio },
    redis_bytes_in_per_search: { a: bytesA, b: bytesB },
    rounds: rounds.map((r) => ({ a: r.a.perSearchUs, b: r.b.perSearchUs, rps: { a: r.a.load.requestsPerSecond, b: r.b.load.requestsPerSecond } })),
  });
  console.log(`\nwrote ${file}`);
}

runBench(main);
