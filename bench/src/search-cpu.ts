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
 * Env: GATEWAY_A and GATEWAY_B (dist/main.js of each build; default the current build for
 * both, which measures the method's own spread), GATEWAY_A_NODE_OPTIONS and
 * GATEWAY_B_NODE_OPTIONS (Node flags for that gateway only), RATE (1200 req/s), ROUNDS (10),
 * DURATION_S (5), WARMUP_S (5), CONNECTIONS (32), BENCH_REDIS_DB (15).
 * Prints Markdown and writes bench/results/search-cpu.json.
 */
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { bearer, call, newAccount, newApiKey, repoRoot, startStack, waitFor } from '@svc/test-kit';
import type { RunningProcess } from '@svc/test-kit';
import { runLoad } from './lib-autocannon';
import type { LoadResult } from './lib-autocannon';
import { measureCpu, pidsNamed } from './lib-cpu';
import type { CpuGroup, CpuReport } from './lib-cpu';
import { alternatingRounds, median, writeResult } from './lib-results';
import { NO_LIMITS_ENV, storeBenchProviderKey, ZERO_LATENCY_SIMULATOR, knobsFromEnv, BENCH_REDIS_DB } from './lib-stack';

const root = repoRoot();
const CURRENT = join(root, 'services/search-gateway/dist/main.js');
const GATEWAY_A = process.env.GATEWAY_A ?? CURRENT;
const GATEWAY_B = process.env.GATEWAY_B ?? CURRENT;
const { RATE, ROUNDS, DURATION_S, WARMUP_S, CONNECTIONS } = knobsFromEnv({ RATE: 1200, ROUNDS: 10, DURATION_S: 5, WARMUP_S: 5, CONNECTIONS: 32 });
const BODY = JSON.stringify({ query: 'open source search engines benchmark', model: 'exa/fast', max_results: 10 });
const PROCESSES = ['search-gateway', 'redis-server', 'postgres', 'ledger worker', 'provider simulator'] as const;

interface Round {
  load: LoadResult;
  cpu: CpuReport;
  /** µs of CPU per answered search, by process, and their sum. */
  perSearchUs: Record<string, number>;
  /** Bytes Redis read per answered search (every client's, the gateway's most). */
  redisBytesPerSearch: number;
}

/** NODE_OPTIONS for one gateway (GATEWAY_A_NODE_OPTIONS, GATEWAY_B_NODE_OPTIONS), or nothing. */
function nodeOptions(flags: string | undefined): Record<string, string> {
  return flags === undefined || flags === '' ? {} : { NODE_OPTIONS: flags };
}

async function main(): Promise<void> {
  const started: { stop(): Promise<void> }[] = [];
  try {
    const stack = await startStack({
      name: 'benchsearchcpu',
      redisDb: BENCH_REDIS_DB,
      logLevel: 'warn',
      worker: true,
      ...ZERO_LATENCY_SIMULATOR,
      gateways: [{ script: GATEWAY_A, env: nodeOptions(process.env.GATEWAY_A_NODE_OPTIONS) }, { script: GATEWAY_B, env: nodeOptions(process.env.GATEWAY_B_NODE_OPTIONS) }],
      gatewayEnv: NO_LIMITS_ENV,
    });
    started.push(stack);
    const [a, b] = stack.gateways;
    const sim = stack.simulator?.process;
    if (a === undefined || b === undefined || sim === undefined) throw new Error('two gateways and the simulator expected');
    const account = await newAccount(a.url, 'benchcpu');
    const apiKey = await newApiKey(a.url, account.managementKey);
    const grant = await call('POST', `${stack.billing.operatorUrl}/operator/accounts/${account.accountId}/grants`, {
      body: { amount_usd: 1_000_000, reason: 'search cpu benchmark' }, headers: bearer(stack.operatorToken),
    });
    if (grant.status !== 201) throw new Error(`grant failed: ${grant.status} ${grant.text}`);
    await storeBenchProviderKey(a.url, account.managementKey);
    const headers = { 'content-type': 'application/json', ...bearer(apiKey.secret) };
    for (const gateway of [a, b]) {
      await waitFor(`a first 200 from ${gateway.url}`, async () => {
        const response = await call('POST', `${gateway.url}/v1/search`, { raw: BODY, headers: bearer(apiKey.secret) });
        // With BENCH_BYOK=1 a build that knows provider keys answers byok (an older build platform).
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
    const run = async (gateway: { url: string; process: RunningProcess }, seconds: number): Promise<Round> => {
      const bytesBefore = await redisBytesIn();
      const { value: load, cpu } = await measureCpu(groupsFor(gateway.process), () => runLoad({
        url: `${gateway.url}/v1/search`, method: 'POST', connections: CONNECTIONS, durationSeconds: seconds, rate: RATE, headers, body: BODY,
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
      return { load, cpu, perSearchUs, redisBytesPerSearch };
    };
    console.log(`warm-up: ${WARMUP_S} s each at ${RATE} req/s`);
    await run(a, WARMUP_S);
    await run(b, WARMUP_S);
    const rounds = await alternatingRounds(ROUNDS, () => run(a, DURATION_S), () => run(b, DURATION_S), ({ a: ra, b: rb }, i) => {
      console.log(`round ${i + 1}/${ROUNDS}: A ${ra.perSearchUs.sum} µs/search (gateway ${ra.perSearchUs['search-gateway']}), B ${rb.perSearchUs.sum} µs/search (gateway ${rb.perSearchUs['search-gateway']})`);
    });
    const medians = (side: 'a' | 'b'): Record<string, number> => Object.fromEntries(
      [...PROCESSES, 'sum'].map((name) => [name, Math.round(median(rounds.map((r) => r[side].perSearchUs[name] ?? Number.NaN)) * 10) / 10]),
    );
    const ma = medians('a');
    const mb = medians('b');
    console.log(`\nCPU per search at ${RATE} req/s, ${CONNECTIONS} connections, median of ${ROUNDS} paired rounds of ${DURATION_S} s (µs)`);
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
    const file = writeResult('search-cpu', {
      command: 'npm run bench -- search-cpu',
      settings: { gateway_a: GATEWAY_A.replace(root, '.'), gateway_b: GATEWAY_B.replace(root, '.'), rate: RATE, rounds: ROUNDS, duration_s: DURATION_S, connections: CONNECTIONS },
      median_us_per_search: { a: ma, b: mb },
      median_paired_difference_us: { sum: median(pairedSum), gateway: median(pairedGateway) },
      redis_bytes_in_per_search: { a: bytesA, b: bytesB },
      rounds: rounds.map((r) => ({ a: r.a.perSearchUs, b: r.b.perSearchUs, rps: { a: r.a.load.requestsPerSecond, b: r.b.load.requestsPerSecond } })),
    });
    console.log(`\nwrote ${file}`);
  } finally {
    for (const process of started.reverse()) await process.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
