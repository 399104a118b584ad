import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, readText } from './deploy-kit';

/**
 * The image, checked without a Docker engine: the Dockerfile is parsed into its stages, the
 * build stage's assembly of the runtime tree (/out) is run on this checkout's build output,
 * and what `npm ci --omit=dev` installs is read from the lockfile (every entry npm marks
 * `dev` is left out). Together: what the runtime stage holds, and how large it is.
 */
interface Stage {
  name: string;
  from: string;
  lines: string[];
}

/** The Dockerfile's stages, each with its instructions (continuation lines joined, comments dropped). */
function stages(): Stage[] {
  const joined = readText('Dockerfile').replace(/\\\n/g, ' ').split('\n').filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'));
  const out: Stage[] = [];
  for (const line of joined) {
    const from = /^FROM\s+(\S+)\s+AS\s+(\S+)/i.exec(line);
    if (from !== null) out.push({ name: from[2] ?? '', from: from[1] ?? '', lines: [] });
    else out.at(-1)?.lines.push(line.trim());
  }
  return out;
}

function stage(name: string): Stage {
  const found = stages().find((s) => s.name === name);
  if (found === undefined) throw new Error(`no stage ${name}`);
  return found;
}

/** The workspaces of the root package.json, expanded (each folder with a package.json). */
function workspaces(): string[] {
  const globs = (JSON.parse(readText('package.json')) as { workspaces: string[] }).workspaces;
  return globs.flatMap((glob) => {
    const base = glob.replace(/\/\*$/, '');
    return readdirSync(join(ROOT, base)).map((d) => `${base}/${d}`).filter((d) => existsSync(join(ROOT, d, 'package.json')));
  }).sort();
}

function sizeOf(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, entry) => sum + sizeOf(join(path, entry)), 0);
}

function filesUnder(path: string, prefix = ''): string[] {
  return readdirSync(path, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(path, entry.name), `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`]);
}

describe('Dockerfile: the base image, npm ci, manifests before sources', () => {
  it('names node:24-bookworm-slim once, in the NODE_IMAGE build argument, and every stage builds on it', () => {
    const dockerfile = readText('Dockerfile');
    expect(dockerfile.match(/^ARG NODE_IMAGE=.*$/gm)).toEqual(['ARG NODE_IMAGE=node:24-bookworm-slim']);
    expect(dockerfile.match(/node:\d+/g)?.filter((m) => m !== 'node:24')).toEqual([]);
    const names = new Set(stages().map((s) => s.name));
    for (const s of stages()) expect(s.from === '${NODE_IMAGE}' || names.has(s.from)).toBe(true);
    // How to pin the digest for a release is said next to the argument.
    expect(dockerfile).toMatch(/NODE_IMAGE=node:24-bookworm-slim@sha256:/);
  });

  it('installs with npm ci (never npm install, never a prune)', () => {
    const runs = stages().flatMap((s) => s.lines.filter((l) => l.startsWith('RUN ')));
    const npm = runs.join('\n');
    expect(npm).toMatch(/npm ci --ignore-scripts/);
    expect(npm).toMatch(/npm ci --omit=dev/);
    expect(npm).not.toMatch(/npm install\b/);
    expect(npm).not.toMatch(/npm prune\b/);
  });

  it('copies the lockfile and every workspace\'s package.json before any source, and installs before the sources arrive', () => {
    const manifests = stage('manifests');
    const copied = manifests.lines.filter((l) => l.startsWith('COPY ')).map((l) => l.split(/\s+/)[1]);
    expect(copied).toEqual(['package.json', ...workspaces().map((w) => `${w}/package.json`)]);
    expect(manifests.lines.filter((l) => l.startsWith('COPY ')).every((l) => /package(-lock)?\.json|\.npmrc/.test(l))).toBe(true);
    const build = stage('build').lines;
    const install = build.findIndex((l) => /^RUN .*npm ci/.test(l));
    const firstSource = build.findIndex((l) => /^COPY (packages|services|tools|proto|scripts|tsconfig)/.test(l));
    expect(install).toBeGreaterThanOrEqual(0);
    expect(install).toBeLessThan(firstSource);
    expect(stage('prod-deps').from).toBe('manifests');
  });

  it('the runtime stage takes only the production install and the assembled build output, runs non-root under tini', () => {
    const runtime = stage('runtime');
    const copies = runtime.lines.filter((l) => l.startsWith('COPY '));
    expect(copies).toEqual([
      'COPY package.json package-lock.json ./',
      'COPY --from=prod-deps /app/node_modules ./node_modules',
      'COPY --from=build /out/ ./',
      'COPY deploy/docker/healthcheck.mjs ./deploy/docker/healthcheck.mjs',
    ]);
    expect(runtime.lines).toContain('USER 1000:1000');
    expect(runtime.lines).toContain('ENTRYPOINT ["/usr/bin/tini", "--"]');
    expect(runtime.lines.join('\n')).toMatch(/apt-get install -y --no-install-recommends tini/);
  });
});

describe('the image contents (the build stage\'s assembly run on this checkout\'s build)', () => {
  let out: string;

  beforeAll(() => {
    const build = stage('build');
    const assemble = build.lines.filter((l) => l.startsWith('RUN ')).find((l) => l.includes('/out'));
    if (assemble === undefined) throw new Error('the build stage has no /out assembly');
    if (!existsSync(join(ROOT, 'services/search-gateway/dist/main.js'))) throw new Error('run `npm run build` first');
    out = mkdtempSync(join(tmpdir(), 'svc-image-'));
    // The same shell lines, writing to a temporary folder instead of /out.
    execFileSync('sh', ['-c', assemble.replace(/^RUN /, '').replace(/\/out\b/g, out)], { cwd: ROOT, stdio: 'pipe' });
  });

  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('holds the entry points of every target, the migrations and the OpenAPI document', () => {
    for (const file of ['services/search-gateway/dist/main.js', 'services/account-admin/dist/main.js', 'services/billing/dist/main.js', 'services/billing/dist/worker.js',
      'services/account-admin/dist/db/migrate-cli.js', 'services/billing/dist/db/migrate-cli.js', 'tools/provider-sim/dist/main.js', 'packages/mail-catcher/dist/main.js',
      'services/search-gateway/openapi.json']) {
      expect(existsSync(join(out, file))).toBe(true);
    }
    expect(readdirSync(join(out, 'services/billing/prisma/migrations')).length).toBeGreaterThan(0);
    for (const ws of workspaces()) expect(existsSync(join(out, ws, 'package.json'))).toBe(true);
  });

  it('holds no src/, no test/, no TypeScript, no source maps, no test kit, fake Stripe or SDK build', () => {
    const files = filesUnder(out);
    expect(files.filter((f) => /(^|\/)(src|test)\//.test(f))).toEqual([]);
    expect(files.filter((f) => /\.(ts|map|tsbuildinfo)$/.test(f) || f.endsWith('.spec.js'))).toEqual([]);
    for (const ws of ['packages/test-kit', 'tools/fake-stripe', 'packages/sdk', 'tools/openapi']) expect(existsSync(join(out, ws, 'dist'))).toBe(false);
  });

  it('installs no dev dependency, and the image\'s own files stay within their size budget', () => {
    const lock = JSON.parse(readText('package-lock.json')) as { packages: Record<string, { dev?: boolean; devOptional?: boolean; link?: boolean }> };
    const production = Object.entries(lock.packages).filter(([path, entry]) => path.startsWith('node_modules/') && entry.dev !== true && entry.devOptional !== true);
    const names = new Set(production.map(([path]) => path.replace(/^.*node_modules\//, '')));
    // The development tools (some root devDependencies, such as ajv, are also needed by a
    // production package, and npm then installs them without the dev flag).
    const tools = ['jest', '@swc/jest', '@swc/core', 'typescript', 'eslint', 'typescript-eslint', 'playwright-core', 'axe-core', 'fast-check', 'autocannon', 'ts-proto', 'ts-json-schema-generator', '@types/jest', 'vite'];
    expect(tools.filter((name) => names.has(name))).toEqual([]);
    // Size: the assembled output plus the production packages as installed here (symlinked
    // workspaces counted once, in the output). The budget catches a dev tree slipping in.
    const ownBytes = sizeOf(out);
    let depBytes = 0;
    for (const [path, entry] of production) {
      if (entry.link === true) continue;
      const dir = join(ROOT, path);
      if (existsSync(dir) && !statSync(dir).isSymbolicLink()) depBytes += sizeOf(dir) - nestedModules(dir);
    }
    const mb = (bytes: number): number => Math.round(bytes / 1e6);
    process.stdout.write(`image contents: build output ${mb(ownBytes)} MB, production dependencies ${mb(depBytes)} MB (${production.length} lockfile entries)\n`);
    expect(ownBytes).toBeLessThan(40e6);
    expect(depBytes).toBeLessThan(350e6);
  });
});

/** Bytes of a package's own nested node_modules (counted as their own lockfile entries). */
function nestedModules(dir: string): number {
  const nested = join(dir, 'node_modules');
  return existsSync(nested) ? sizeOf(nested) : 0;
}

