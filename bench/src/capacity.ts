/**
 * Capacity: searches per second and CPU per search with 1, 2 and 4 gateway processes, on a
 * single Redis and on a 3-master Redis Cluster (test-kit startRedisCluster), for the
 * capacity-planning section of docs/operations.md.
 *
 * For each topology and gateway count a stack is started (account-admin, billing, the
 * ledger worker, the provider simulator answering at once, the gateways), ACCOUNTS accounts
 * are funded (one key each; on the cluster their hash slots spread over the masters), and
 * ACCOUNTS autocannon processes send searches as fast as they are answered, each with its own
 * key, to the gateways in turn, CONNECTIONS connections each. Measured per round of
 * DURATION_S: searches/s (200s only; any other answer fails the run) and CPU per search of
 * the gateways together, of each Redis process (one per shard) and of the whole machine.
 * The median over ROUNDS rounds is reported.
 *
 * On a shared 2-core machine the load generators, the gateways and Redis compete for the same
 * two cores: searches/s here says how the platform behaves when the machine is the limit; the
 * Redis µs per search per shard is what sizes Redis (a shard's core divided by it is the rate
 * that shard can carry).
 *
 * Env: GATEWAYS (1,2,4), TOPOLOGIES (single,cluster), ACCOUNTS (4), CONNECTIONS (8),
 * DURATION_S (6), WARMUP_S (3), ROUNDS (3), BENCH_REDIS_DB (15).
 * Prints Markdown and writes bench/results/capacity.json.
 */
import { Redis } from 'ioredis';
import { bearer, call, newAccount, newApiKey, startStack, waitFor } from '@svc/test-kit';
import type { Stack } from '@svc/test-kit';
import { runLoad } from './lib-autocannon';
import type { LoadResult } from './lib-autocannon';
import { measureCpu, pidsNamed } from './lib-cpu';
import type { CpuGroup } from './lib-cpu';
import { median, writeResult } from './lib-results';
import { NO_LIMITS_ENV, BENCH_STACK, knobsFromEnv } from './lib-stack';

const GATEWAYS = (process.env.GATEWAYS ?? '1,2,4').split(',').map(Number);
const TOPOLOGIES = (process.env.TOPOLOGIES ?? 'single,cluster').split(',');
const { ACCOUNTS, CONNECTIONS, DURATION_S, WARMUP_S, ROUNDS } = knobsFromEnv({ ACCOUNTS: 4, CONNECTIONS: 8, DURATION_S: 6, WARMUP_S: 3, ROUNDS: 3 });
const BODY = JSON.stringify({ query: 'capacity planning', model: 'exa/fast', max_results: 10 });

interface Row {
  topology: string;
  gateways: number;
  searchesPerSecond: number;
  gatewayUsPerSearch: number;
  /** One entry per Redis process (shard), µs of its CPU per search (all searches). */
  redisUsPerSearchByShard: number[];
  redisUsPerSearch: number;
  machineUsPerSearch: number;
  machineBusyCores: number;
  p50Ms: number;
  p99Ms: number;
}

async function measureConfig(topology: string, gateways: number): Promise<Row> {
  const stack: Stack = await startStack({
    ...BENCH_STACK,
    name: `benchcapacity_${topology}_${gateways}`,
    cluster: topology === 'cluster',
    gateways: Array.from({ length: gateways }, () => ({})),
    gatewayEnv: NO_LIMITS_ENV,
  });
  try {
    const first = stack.gateways[0]?.url ?? '';
    const keys: string[] = [];
    for (let i = 0; i < ACCOUNTS; i++) {
      const account = await newAccount(first, 'capacity');
      const key = await newApiKey(first, account.managementKey);
      const grant = await call('POST', `${stack.billing.operatorUrl}/operator/accounts/${account.accountId}/grants`, {
        body: { amount_usd: 1_000_000, reason: 'capacity benchmark' }, headers: bearer(stack.operatorToken),
      });
      if (grant.status !== 201) throw new Error(`grant failed: ${grant.status} ${grant.text}`);
      keys.push(key.secret);
    }
    for (const gateway of stack.gateways) {
      for (const secret of keys) {
        await waitFor(`a first 200 from ${gateway.url}`, async () =>
          ((await call('POST', `${gateway.url}/v1/search`, { raw: BODY, headers: bearer(secret) })).status === 200 ? true : undefined), { timeoutMs: 20_000, intervalMs: 200 });
      }
    }
    const redisPids: number[] = [];
    if (stack.redisCluster !== undefined) {
      for (const node of stack.redisCluster.nodes) redisPids.push(node.pid);
    } else {
      const info = new Redis(stack.redisUrl);
      redisPids.push(Number(/process_id:(\d+)/.exec(await info.info('server'))?.[1]));
      await info.quit();
    }
    const groups: CpuGroup[] = [
      { name: 'gateways', pids: () => stack.gateways.map((g) => g.process.pid) },
      ...redisPids.map((pid, i) => ({ name: `redis-${i}`, pids: () => [pid] })),
      { name: 'postgres', pids: () => pidsNamed('postgres') },
    ];
    const round = async (seconds: number): Promise<{ loads: LoadResult[]; cpu: Awaited<ReturnType<typeof measureCpu>>['cpu'] }> => {
      const { value: loads, cpu } = await measureCpu(groups, () => Promise.all(keys.map((secret, i) => runLoad({
        url: `${stack.gateways[i % stack.gateways.length]?.url ?? ''}/v1/search`, method: 'POST', connections: CONNECTIONS, durationSeconds: seconds,
        headers: { 'content-type': 'application/json', ...bearer(secret) }, body: BODY,
      }))));
      for (const load of loads) if (load.non2xx > 0 || load.errors > 0) throw new Error(`non-2xx ${load.non2xx}, errors ${load.errors}: ${JSON.stringify(load.statusCodes)}`);
      return { loads, cpu };
    };
    await round(WARMUP_S);
    const rows: Row[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const { loads, cpu } = await round(DURATION_S);
      const rps = loads.reduce((sum, load) => sum + load.requestsPerSecond, 0);
      const us = (name: string): number => ((cpu.groups.find((g) => g.name === name)?.cores ?? Number.NaN) * 1_000_000) / rps;
      const shards = redisPids.map((_, i) => us(`redis-${i}`));
      rows.push({
        topology, gateways,
        searchesPerSecond: rps,
        gatewayUsPerSearch: us('gateways'),
        redisUsPerSearchByShard: shards,
        redisUsPerSearch: shards.reduce((a, b) => a + b, 0),
        machineUsPerSearch: (cpu.machineBusyCores * 1_000_000) / rps,
        machineBusyCores: cpu.machineBusyCores,
        p50Ms: median(loads.map((l) => l.latencyMs.p50)),
        p99Ms: median(loads.map((l) => l.latencyMs.p99)),
      });
      console.log(`${topology}, ${gateways} gateway(s), round ${r + 1}/${ROUNDS}: ${Math.round(rps)} searches/s, gateways ${us('gateways').toFixed(0)} µs/search, redis ${shards.map((s) => s.toFixed(1)).join(' + ')} µs/search`);
    }
    const pick = (f: (row: Row) => number): number => median(rows.map(f));
    return {
      topology, gateways,
      searchesPerSecond: pick((r) => r.searchesPerSecond),
      gatewayUsPerSearch: pick((r) => r.gatewayUsPerSearch),
      redisUsPerSearchByShard: redisPids.map((_, i) => pick((r) => r.redisUsPerSearchByShard[i] ?? Number.NaN)),
      redisUsPerSearch: pick((r) => r.redisUsPerSearch),
      machineUsPerSearch: pick((r) => r.machineUsPerSearch),
      machineBusyCores: pick((r) => r.machineBusyCores),
      p50Ms: pick((r) => r.p50Ms),
      p99Ms: pick((r) => r.p99Ms),
    };
  } finally {
    await stack.stop();
  }
}

async function main(): Promise<void> {
  const results: Row[] = [];
  for (const topology of TOPOLOGIES) {
    for (const gateways of GATEWAYS) results.push(await measureConfig(topology, gateways));
  }
  const f = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : '-');
  console.log(`\nSearches/s and CPU per search, ${ACCOUNTS} load processes x ${CONNECTIONS} connections, median of ${ROUNDS} rounds of ${DURATION_S} s\n`);
  console.log('| Redis | gateways | searches/s | p50 / p99 ms | gateways µs/search | Redis µs/search per shard | Redis µs/search, all shards | machine busy cores |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    console.log(`| ${r.topology} | ${r.gateways} | ${Math.round(r.searchesPerSecond)} | ${f(r.p50Ms)} / ${f(r.p99Ms)} | ${Math.round(r.gatewayUsPerSearch)} | ${r.redisUsPerSearchByShard.map(f).join(' / ')} | ${f(r.redisUsPerSearch)} | ${r.machineBusyCores.toFixed(2)} |`);
  }
  const file = writeResult('capacity', {
    command: 'npm run bench -- capacity',
    settings: { accounts: ACCOUNTS, connections: CONNECTIONS, duration_s: DURATION_S, rounds: ROUNDS },
    results,
  });
  console.log(`\nwrote ${file}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
