/**
 * Which client carries the gateway's search batch: the batch's own connections
 * (RedisBatch over RespConnection; one per master on a Redis Cluster) against ioredis with
 * enableAutoPipelining (a Redis, or a Cluster client), on a single Redis and on a 3-master
 * Redis Cluster started for the run (test-kit startRedisCluster).
 *
 * One flush has the shape of the gateway's under load: FLUSH_SEARCHES searches of as many
 * accounts (each its own hash slot, so on the cluster spread over the masters), each
 * account's admission one script call (3 keys of the account, 4 fixed arguments, and the
 * search's 4 keys and 9 arguments, as the merged admission), plus one provider-lease call
 * for the flush. Both clients send the same commands, scripts by SHA, every command of a
 * flush in the same turn of the event loop; a flush is awaited before the next. Measured:
 * this process's CPU (user + system, process.cpuUsage) per flush, in ROUNDS rounds of
 * FLUSHES flushes, the clients alternating in each round (A then B, B then A, ...).
 * Reported: the median over rounds of µs per flush, and of the paired ratio ioredis/ours.
 *
 * Env: ROUNDS (12), FLUSHES (2000), FLUSH_SEARCHES (5), TOPOLOGIES (single,cluster).
 * The single Redis is TEST_REDIS_URL's database 15. Prints Markdown and writes
 * bench/results/batch-client.json.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createRedisClient, masters } from '@svc/redis-client';
import type { RedisClient, RedisTarget } from '@svc/redis-client';
import { redisUrl, repoRoot, startRedisCluster } from '@svc/test-kit';
import type { RedisCluster } from '@svc/test-kit';
import { median, writeResult } from './lib-results';

const ROUNDS = Number(process.env.ROUNDS ?? 12);
const FLUSHES = Number(process.env.FLUSHES ?? 2000);
const FLUSH_SEARCHES = Number(process.env.FLUSH_SEARCHES ?? 5);
const TOPOLOGIES = (process.env.TOPOLOGIES ?? 'single,cluster').split(',');

/** Admission-shaped: one reply element per member (4 keys each after the account's 3). */
const ADMIT_LUA = 'local out = {} for i = 1, (#KEYS - 3) / 4 do out[i] = 1 end return out';
/** Lease-shaped: ARGV = cap, lifetime, then one lease id per member. */
const LEASE_LUA = 'local out = {} for i = 3, #ARGV do out[#out + 1] = 1 end return out';

type Reply = [Error | null, unknown];
/** What the bench uses of the gateway's RedisBatch (services/search-gateway/dist/redis/redis-batch.js). */
interface BatchPipelineLike {
  add(name: string, ...args: (string | number)[]): BatchPipelineLike;
  exec(): Promise<Reply[]>;
}
interface RedisBatchLike {
  readonly status: string;
  defineScript(name: string, definition: { lua: string; numberOfKeys?: number }): void;
  pipeline(): BatchPipelineLike;
  close(): void;
}
type RedisBatchClass = new (target: RedisTarget) => RedisBatchLike;

interface Command {
  readonly name: 'benchAdmit' | 'benchLease';
  readonly args: (string | number)[];
}

/** The commands of flush number `n`: one admission per account, one lease call. */
function flushCommands(n: number): Command[] {
  const commands: Command[] = [];
  const leaseIds: string[] = [];
  for (let s = 0; s < FLUSH_SEARCHES; s++) {
    const account = `acc_bench_${s}`;
    const tag = `{a:${account}}`;
    const request = `req_${n}_${s}`;
    leaseIds.push(`lease_${n}_${s}`);
    commands.push({
      name: 'benchAdmit',
      args: [7, `${tag}:bal`, `${tag}:reserved`, `${tag}:inflight`, `${tag}:kuse:key_1:1700000000000`, `${tag}:rsv:${request}`, `${tag}:rsv:${request}`, `${tag}:rate:key_1`,
        20, 40, 50, 20_000, 5_000, 10_000_000, 0, 3_600_000, 1_800_000_000_000, '0', '', 0, request],
    });
  }
  commands.push({ name: 'benchLease', args: ['svc:prov:{p:exa}:leases', 1000, 20_000, ...leaseIds] });
  return commands;
}

/** Sends flushes one at a time; resolves with µs of this process's CPU per flush. */
async function measure(flushOnce: (n: number) => Promise<void>): Promise<number> {
  const before = process.cpuUsage();
  for (let n = 0; n < FLUSHES; n++) await flushOnce(n);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / FLUSHES;
}

function ours(batch: RedisBatchLike): (n: number) => Promise<void> {
  return async (n) => {
    const replies = await Promise.all(flushCommands(n).map((c) => batch.pipeline().add(c.name, ...c.args).exec()));
    for (const reply of replies) if (reply[0]?.[0] !== null) throw reply[0]?.[0] ?? new Error('no reply');
  };
}

/**
 * ioredis sends each script with EVALSHA (loaded beforehand on every master). Not through
 * defineCommand: for a script without a fixed key count, ioredis's auto-pipelining routes
 * the command by its first argument (the key count, not a key), and on a cluster the
 * pipeline fails with "All keys in the pipeline should belong to the same slots allocation
 * group". EVALSHA is routed by its first key.
 */
function viaIoredis(client: RedisClient, shas: Record<Command['name'], string>): (n: number) => Promise<void> {
  return async (n) => {
    await Promise.all(flushCommands(n).map((c) => {
      const [first = 0, ...rest] = c.name === 'benchLease' ? [1, ...c.args] : c.args;
      return client.evalsha(shas[c.name], first, ...rest);
    }));
  };
}

async function compare(topology: string, target: RedisTarget, RedisBatch: RedisBatchClass): Promise<Record<string, unknown>> {
  const batch = new RedisBatch(target);
  batch.defineScript('benchAdmit', { lua: ADMIT_LUA });
  batch.defineScript('benchLease', { numberOfKeys: 1, lua: LEASE_LUA });
  const client = createRedisClient(target, { enableAutoPipelining: true });
  try {
    if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
    const shas = { benchAdmit: '', benchLease: '' };
    for (const node of masters(client)) {
      shas.benchAdmit = String(await node.script('LOAD', ADMIT_LUA));
      shas.benchLease = String(await node.script('LOAD', LEASE_LUA));
    }
    const a = ours(batch);
    const b = viaIoredis(client, shas);
    // Warm-up: connections, scripts loaded, JIT.
    await measure(a);
    await measure(b);
    const rounds: { ours: number; ioredis: number }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      let usOurs: number;
      let usIoredis: number;
      if (r % 2 === 0) {
        usOurs = await measure(a);
        usIoredis = await measure(b);
      } else {
        usIoredis = await measure(b);
        usOurs = await measure(a);
      }
      rounds.push({ ours: usOurs, ioredis: usIoredis });
      console.log(`${topology} round ${r + 1}/${ROUNDS}: ours ${usOurs.toFixed(1)} µs/flush, ioredis ${usIoredis.toFixed(1)} µs/flush`);
    }
    const result = {
      topology,
      median_us_per_flush: { ours: median(rounds.map((r) => r.ours)), ioredis: median(rounds.map((r) => r.ioredis)) },
      median_ratio_ioredis_over_ours: median(rounds.map((r) => r.ioredis / r.ours)),
      range_us_per_flush: {
        ours: [Math.min(...rounds.map((r) => r.ours)), Math.max(...rounds.map((r) => r.ours))],
        ioredis: [Math.min(...rounds.map((r) => r.ioredis)), Math.max(...rounds.map((r) => r.ioredis))],
      },
      rounds,
    };
    return result;
  } finally {
    batch.close();
    client.disconnect();
  }
}

async function main(): Promise<void> {
  const root = repoRoot();
  const load = createRequire(join(root, 'package.json'));
  const { RedisBatch } = load(join(root, 'services/search-gateway/dist/redis/redis-batch.js')) as { RedisBatch: RedisBatchClass };
  const results: Record<string, unknown>[] = [];
  let cluster: RedisCluster | undefined;
  try {
    for (const topology of TOPOLOGIES) {
      if (topology === 'single') {
        const url = redisUrl(15);
        const flusher = new Redis(url);
        await flusher.flushdb();
        flusher.disconnect();
        results.push(await compare('single', { url, cluster: false }, RedisBatch));
      } else if (topology === 'cluster') {
        cluster = await startRedisCluster();
        results.push(await compare('cluster', { url: cluster.url, cluster: true }, RedisBatch));
      }
    }
  } finally {
    await cluster?.stop();
  }
  console.log(`\nClient CPU per flush of ${FLUSH_SEARCHES} searches (${FLUSH_SEARCHES + 1} commands), median of ${ROUNDS} paired rounds of ${FLUSHES} flushes (µs)\n`);
  console.log('| topology | ours (RespConnection) | ioredis, auto-pipelining | ioredis / ours (median of paired ratios) |');
  console.log('|---|---|---|---|');
  for (const r of results) {
    const m = r.median_us_per_flush as { ours: number; ioredis: number };
    console.log(`| ${String(r.topology)} | ${m.ours.toFixed(1)} | ${m.ioredis.toFixed(1)} | ${(r.median_ratio_ioredis_over_ours as number).toFixed(2)} |`);
  }
  const file = writeResult('batch-client', {
    command: 'npm run bench -- batch-client',
    settings: { rounds: ROUNDS, flushes: FLUSHES, flush_searches: FLUSH_SEARCHES },
    results,
  });
  console.log(`\nwrote ${file}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
