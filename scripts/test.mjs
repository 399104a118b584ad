#!/usr/bin/env node
// The whole test suite, as the README and CI run it: stores up, build, generated-code
// drift check, lint and type check, then every Jest tier serially (2 cores, shared stores).
import { execFileSync, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

// On a Node.js older than 24: fetched from the npm registry, and this script run again under it.
await createRequire(import.meta.url)('./node-runtime.cjs').relaunchUnderWantedNode('npm test');

const root = new URL('..', import.meta.url).pathname;
const step = (title, cmd, args) => {
  console.log(`\n=== ${title}`);
  const result = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`\n${title} failed`);
    process.exit(result.status ?? 1);
  }
};

step('PostgreSQL and Redis', 'bash', ['scripts/ensure-stores.sh']);
step('build', 'npm', ['run', 'build']);
let protoc = true;
try {
  execFileSync('protoc', ['--version'], { stdio: 'ignore' });
} catch {
  protoc = false;
}
if (protoc) step('generated gRPC code matches proto/', 'node', ['scripts/generate.mjs', '--check']);
else console.log('\n=== protoc not installed: drift check of generated gRPC code not run (apt-get install protobuf-compiler)');
step('lint and type check', 'npm', ['run', 'lint']);
step('tests', 'npx', ['jest', '--runInBand', ...process.argv.slice(2)]);
