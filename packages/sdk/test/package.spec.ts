import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { runInNewContext } from 'node:vm';
import { ERROR_CODES } from '../src/types';

/**
 * The built package (run `npm run build` first): what `npm pack` puts in the tarball, that
 * the tarball installs into an empty folder with no registry and works there through
 * require, import, its types and its bin, and that the library runs where there is no
 * `process` and no `require` (a browser-like global scope).
 */
const PACKAGE = resolve(__dirname, '..');
const REPO = resolve(PACKAGE, '..', '..');
const DIST = join(PACKAGE, 'dist');

beforeAll(() => {
  if (!existsSync(join(DIST, 'index.js')) || !existsSync(join(DIST, 'esm', 'index.js'))) {
    throw new Error('packages/sdk/dist is missing: run npm run build first');
  }
});

/**
 * npm in `cwd`, without the npm_* variables of an npm that may have started this test
 * (`npm test` sets npm_config_local_prefix and others, which would point the install at the
 * repository instead of the empty folder).
 */
const npm = (args: string[], cwd: string): string => {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')));
  return execFileSync('npm', args, { cwd, encoding: 'utf8', env: { ...env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' } });
};

describe('the packed @svc/sdk', () => {
  let work: string;
  let tarball: string;

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'svc-sdk-pack-'));
    const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', work], PACKAGE)) as { filename: string; files: { path: string }[] }[];
    if (packed === undefined) throw new Error('npm pack printed nothing');
    tarball = join(work, packed.filename);
  }, 60_000);

  afterAll(() => {
    rmSync(work, { recursive: true, force: true });
  });

  it('holds only the build, its types, the svc launcher, the README, the LICENSE and package.json', () => {
    const [listed] = JSON.parse(npm(['pack', '--dry-run', '--json'], PACKAGE)) as { files: { path: string }[] }[];
    const files = (listed?.files ?? []).map((f) => f.path).sort();
    const allowed = (path: string): boolean =>
      ['package.json', 'README.md', 'LICENSE', 'dist/esm/package.json', 'bin/svc.js'].includes(path) || /^dist\/.+\.(js|d\.ts)$/.test(path);
    expect(files.filter((path) => !allowed(path))).toEqual([]);
    for (const needed of ['README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts', 'dist/esm/index.js', 'dist/esm/index.d.ts', 'dist/esm/package.json', 'dist/cli.js', 'bin/svc.js']) {
      expect(files).toContain(needed);
    }
    expect(files.some((path) => path.startsWith('src/') || path.includes('.spec.') || path.endsWith('.map') || path.endsWith('.tsbuildinfo'))).toBe(false);
    const pkg = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as { dependencies?: object; license: string };
    expect(pkg.dependencies).toBeUndefined();
    expect(pkg.license).toBe('MIT');
    // The customers of the API may use the SDK: the LICENSE is the MIT licence the manifest names.
    const licence = readFileSync(join(PACKAGE, 'LICENSE'), 'utf8');
    expect(licence).toMatch(/^MIT License\n/);
    expect(licence).toContain('Permission is hereby granted, free of charge, to any person obtaining a copy');
    expect(licence).not.toMatch(/No permission is granted/);
  });

  describe('installed into an empty folder, offline', () => {
    let app: string;

    beforeAll(() => {
      app = join(work, 'app');
      mkdirSync(app);
      writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'empty-app', version: '1.0.0', private: true }));
      npm(['install', '--offline', '--no-package-lock', '--ignore-scripts', tarball], app);
    }, 120_000);

    const node = (args: string[]): { status: number | null; stdout: string; stderr: string } => {
      const result = spawnSync(process.execPath, args, { cwd: app, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
      return { status: result.status, stdout: result.stdout, stderr: result.stderr };
    };

    it('require() gives the CommonJS build', () => {
      const result = node(['-e', `
        const sdk = require('@svc/sdk');
        const client = new sdk.SearchGateway();
        console.log(typeof sdk.SearchGateway, typeof sdk.SearchGatewayError, client.baseUrl, client.maxRetries, require.resolve('@svc/sdk'));
      `]);
      expect(result.stderr).toBe('');
      expect(result.stdout.trim()).toBe(`function function http://localhost:8080 2 ${join(app, 'node_modules/@svc/sdk/dist/index.js')}`);
    });

    it('import gives the ES module build', () => {
      const result = node(['--input-type=module', '-e', `
        import { SearchGateway, SearchGatewayError, ERROR_CODES } from '@svc/sdk';
        const error = new SearchGatewayError({ status: 404, body: 'Not Found', headers: new Headers(), retryAfter: null });
        console.log(typeof SearchGateway, ERROR_CODES.length, error.code, error.message, SearchGatewayError.is(error), import.meta.resolve('@svc/sdk'));
      `]);
      expect(result.stderr).toBe('');
      expect(result.stdout.trim()).toBe(`function ${ERROR_CODES.length} null HTTP 404: Not Found true file://${join(app, 'node_modules/@svc/sdk/dist/esm/index.js')}`);
    });

    it('an error from one build is recognised by the other (SearchGatewayError.is)', () => {
      const result = node(['--input-type=module', '-e', `
        import { createRequire } from 'node:module';
        import { SearchGatewayError } from '@svc/sdk';
        const cjs = createRequire(import.meta.url)('@svc/sdk');
        const error = new cjs.SearchGatewayError({ status: 500, body: '', headers: new Headers(), retryAfter: null });
        console.log(error instanceof SearchGatewayError, SearchGatewayError.is(error));
      `]);
      expect(result.stdout.trim()).toBe('false true');
    });

    it('the types resolve for both CommonJS and ES module consumers', () => {
      writeFileSync(join(app, 'use.cts'), `
        import { SearchGateway, SearchGatewayError } from '@svc/sdk';
        import type { SearchResponse, ErrorCode } from '@svc/sdk';
        const client = new SearchGateway({ maxRetries: 1 });
        export async function run(): Promise<SearchResponse> { return client.search({ query: 'q', model: 'exa/fast' }); }
        export function code(e: SearchGatewayError): ErrorCode | string | null { return e.code; }
      `);
      writeFileSync(join(app, 'use.mts'), `
        import { SearchGateway, SearchGatewayError } from '@svc/sdk';
        import type { KeyInfo } from '@svc/sdk';
        const client = new SearchGateway();
        export async function kind(): Promise<KeyInfo['kind']> { return (await client.key()).kind; }
        export function needed(e: SearchGatewayError): number | null { return e.neededUsd; }
        // @ts-expect-error search needs a query
        export const bad = () => client.search({ model: 'exa/fast' });
      `);
      writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({
        compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, types: ['node'], typeRoots: [join(REPO, 'node_modules/@types')] },
        files: ['use.cts', 'use.mts'],
      }));
      const tsc = spawnSync(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', join(app, 'tsconfig.json')], { cwd: app, encoding: 'utf8' });
      expect(tsc.stdout + tsc.stderr).toBe('');
      expect(tsc.status).toBe(0);
    }, 60_000);

    it('the svc bin is installed and runs', () => {
      const result = spawnSync(join(app, 'node_modules/.bin/svc'), ['--version'], { cwd: app, encoding: 'utf8' });
      expect(result.status).toBe(0);
      expect(result.stdout).toBe('0.1.0\n');
    });
  });
});

describe('the library in a scope without process or require (as in a browser)', () => {
  /** Loads dist/index.js with a module loader that only knows the package's own files. */
  function loadInBareScope(globals: Record<string, unknown>): Record<string, unknown> {
    const cache = new Map<string, Record<string, unknown>>();
    const context: Record<string, unknown> = { ...globals };
    context.globalThis = context;
    const load = (file: string): Record<string, unknown> => {
      const cached = cache.get(file);
      if (cached !== undefined) return cached;
      const module = { exports: {} as Record<string, unknown> };
      cache.set(file, module.exports);
      const localRequire = (specifier: string): Record<string, unknown> => {
        if (!specifier.startsWith('./') && !specifier.startsWith('../')) throw new Error(`the library required "${specifier}"`);
        return load(resolve(dirname(file), specifier));
      };
      const wrapper = runInNewContext(`(function (exports, require, module) {${readFileSync(file, 'utf8')}\n})`, context) as (e: unknown, r: unknown, m: unknown) => void;
      wrapper(module.exports, localRequire, module);
      cache.set(file, module.exports);
      return module.exports;
    };
    return load(join(DIST, 'index.js'));
  }

  it('constructs with defaults and searches through a given fetch, with a generated Idempotency-Key', async () => {
    const sent: { url: string; headers: Record<string, string> }[] = [];
    const sdk = loadInBareScope({
      URL, URLSearchParams, AbortController, Headers, DOMException, setTimeout, clearTimeout, JSON, Math, Promise, Symbol, Object, Error, TypeError, RangeError, Array, Number, String, Uint8Array,
      crypto: { getRandomValues: <A extends Uint8Array>(array: A): A => array.fill(7) },
      fetch: async (url: string, init: { headers: Record<string, string> }) => {
        sent.push({ url, headers: init.headers });
        return new Response(JSON.stringify({ request_id: 'req_x', results: [] }), { status: 200 });
      },
    });
    const Client = sdk.SearchGateway as new (options?: object) => { baseUrl: string; search: (body: object) => Promise<unknown> };
    const client = new Client();
    expect(client.baseUrl).toBe('http://localhost:8080');
    await expect(client.search({ query: 'q', model: 'exa/fast' })).resolves.toEqual({ request_id: 'req_x', results: [] });
    expect(sent[0]?.url).toBe('http://localhost:8080/v1/search');
    expect(sent[0]?.headers['idempotency-key']).toBe('07070707-0707-4707-8707-070707070707');
    expect(sent[0]?.headers.authorization).toBeUndefined();
  });
});
