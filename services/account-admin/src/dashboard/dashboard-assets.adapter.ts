import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';

export interface Asset {
  body: Buffer;
  contentType: string;
  /** Vite's hashed file names never change content: cached for a year; index.html never. */
  immutable: boolean;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
};

/**
 * The built web app (services/account-admin/web, built by `npm run build` into dist/web),
 * read into memory once at start: the set of servable paths is exactly the files the build
 * wrote, so no request path ever reaches the file system.
 */
export class DashboardAssets {
  private constructor(private readonly files: ReadonlyMap<string, Asset>) {}

  /** `dist/dashboard/..` → `dist/web` when running the build; `src/dashboard/../../dist/web` from sources (tests). */
  static load(candidates: readonly string[] = [join(__dirname, '..', 'web'), join(__dirname, '..', '..', 'dist', 'web')]): DashboardAssets {
    const root = candidates.find((dir) => existsSync(join(dir, 'index.html'))) ?? null;
    const files = new Map<string, Asset>();
    if (root !== null) {
      const walk = (dir: string): void => {
        for (const name of readdirSync(dir)) {
          const path = join(dir, name);
          if (statSync(path).isDirectory()) walk(path);
          else {
            const rel = relative(root, path).split(sep).join('/');
            files.set(rel, {
              body: readFileSync(path),
              contentType: TYPES[extname(name)] ?? 'application/octet-stream',
              immutable: rel.startsWith('assets/'),
            });
          }
        }
      };
      walk(root);
    }
    return new DashboardAssets(files);
  }

  get built(): boolean {
    return this.files.has('index.html');
  }

  /** The file at `path` (relative to /dashboard/), or undefined. */
  file(path: string): Asset | undefined {
    return this.files.get(path);
  }
}
