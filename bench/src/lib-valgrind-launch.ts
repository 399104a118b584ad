/**
 * Started in place of a gateway's dist/main.js (search-instructions.ts): runs
 * VALGRIND_TARGET_SCRIPT with the same Node under `valgrind --tool=callgrind`, its output file
 * <VALGRIND_OUT_DIR>/callgrind.out.<pid>, and writes the valgrind process's pid to
 * <VALGRIND_OUT_DIR>/launcher-<this pid>.child (JSON: `pid`, and `env`, the variables that
 * name valgrind's control pipes, /tmp/vgdb-pipe-*-by-$USER-on-$HOST), so the benchmark can
 * switch its instrumentation on and off, zero and dump its counters with callgrind_control
 * run with the same names (a gateway's HOST is its listen address). SIGTERM and SIGINT are passed on; this process exits
 * with the child's code.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const target = process.env.VALGRIND_TARGET_SCRIPT;
const dir = process.env.VALGRIND_OUT_DIR;
if (target === undefined || dir === undefined) {
  process.stderr.write('lib-valgrind-launch: VALGRIND_TARGET_SCRIPT and VALGRIND_OUT_DIR are required\n');
  process.exit(2);
}
// Not instrumented until the benchmark says so (callgrind_control -i on): start-up and warm-up
// run several times faster uninstrumented.
const child = spawn('valgrind', ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${join(dir, 'callgrind.out.%p')}`, process.execPath, target], {
  stdio: 'inherit',
  env: process.env,
});
if (child.pid === undefined) {
  process.stderr.write('lib-valgrind-launch: valgrind did not start\n');
  process.exit(2);
}
const pipeEnv: Record<string, string> = {};
for (const name of ['USER', 'LOGNAME', 'HOST', 'TMPDIR']) {
  const value = process.env[name];
  if (value !== undefined) pipeEnv[name] = value;
}
writeFileSync(join(dir, `launcher-${process.pid}.child`), JSON.stringify({ pid: child.pid, env: pipeEnv }));
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal === null ? 1 : 0)));
