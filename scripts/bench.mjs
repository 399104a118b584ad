#!/usr/bin/env node
// npm run bench [-- name ...]: runs the benchmark scripts (all, or the named ones) from
// bench/dist after a build. Each bench/src/<name>.ts that is not a helper (lib-*, stats,
// bare-proxy) is one benchmark; docs/benchmarks.md says what each answers, its command and
// today's figures. Results print as Markdown and land in bench/results/<name>.json.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const ensure = spawnSync('bash', ['scripts/ensure-stores.sh'], { cwd: root, stdio: 'inherit' });
if (ensure.status !== 0) process.exit(1);
const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) process.exit(1);
// The benchmarks are the sources' (a file removed from bench/src may still lie in bench/dist).
const all = readdirSync(join(root, 'bench/src')).filter((f) => f.endsWith('.ts') && !['stats.ts', 'bare-proxy.ts'].includes(f) && !f.startsWith('lib-')).map((f) => f.replace(/\.ts$/, ''));
const names = process.argv.slice(2).length > 0 ? process.argv.slice(2) : all;
for (const name of names) {
  const script = join(root, 'bench/dist', `${name}.js`);
  if (!all.includes(name)) {
    console.error(`no benchmark ${name}; have: ${all.join(', ')}`);
    process.exit(2);
  }
  console.log(`\n=== bench ${name}`);
  const run = spawnSync(process.execPath, [script], { cwd: root, stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
