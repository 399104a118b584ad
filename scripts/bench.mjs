#!/usr/bin/env node
// npm run bench [-- name ...]: runs the benchmark scripts (all, or the named ones) from
// bench/dist after a build. Results print as Markdown and land in bench/results/*.json;
// docs/benchmarks.md records them with the command. Each bench/src/<name>.ts is one benchmark
// (search, latency, search-cpu, search-instructions, mcp, propagation, batch-client, capacity, observability,
// validation, ledger-write, key-limit-tick (what the key-limit check costs PostgreSQL per tick), recovery-read (what recovery reads to rebuild a key's usage), keyspace-walks (the ledger worker's periodic Redis work beside many other keys), cache: result-cache hits against the bare proxy and the miss path
// against a baseline gateway, cache-key: the cache key's normalisation and the stored answer's measure in one process, outage: one provider outage with and without the breaker,
// docs/provider-health.md, and signup-timing: sign-up, sign-in and password reset of registered and unknown addresses, decision 0055).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const ensure = spawnSync('bash', ['scripts/ensure-stores.sh'], { cwd: root, stdio: 'inherit' });
if (ensure.status !== 0) process.exit(1);
const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(1);
const dist = join(root, 'bench/dist');
const all = readdirSync(dist).filter((f) => f.endsWith('.js') && !['stats.js', 'bare-proxy.js'].includes(f) && !f.startsWith('lib-')).map((f) => f.replace(/\.js$/, ''));
const names = process.argv.slice(2).length > 0 ? process.argv.slice(2) : all;
for (const name of names) {
  const script = join(dist, `${name}.js`);
  if (!existsSync(script)) {
    console.error(`no benchmark ${name}; have: ${all.join(', ')}`);
    process.exit(2);
  }
  console.log(`\n=== bench ${name}`);
  const run = spawnSync(process.execPath, [script], { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
