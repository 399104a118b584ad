import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@svc/test-kit';

/**
 * No tracked file names a path of one machine.
 *
 * A machine path is an absolute path into one computer's own filesystem, outside any
 * checkout of the repository: a user's home folder (`/home/<name>/`, `/Users/<name>/`,
 * `/root/`, `C:\Users\<name>\`), a temporary folder (`/tmp/`, `/private/tmp/`, macOS's
 * `/var/folders/`), or the development machine's work folder (`/work/`), also as a `file:`
 * URL. It means nothing on another machine, goes stale, and can name its user; a command
 * in the docs uses a path relative to the checkout, `~`, `$HOME`, or a placeholder such as
 * `<a checkout of abc1234>` instead, and a benchmark result keeps only the part of a path
 * inside its checkout (bench/src/lib-results.ts).
 *
 * Not machine paths: paths inside an image or a pod, which are the image's own (everything
 * in the `Dockerfile` and in `deploy/`, e.g. `/app`, `/var/lib/postgresql`, a build cache at
 * `/root/.npm`); URL paths (`https://host/tmp/x`); `~/…` and `$HOME/…`; a path that is only
 * a prefix (`/tmp` with no folder under it names no file).
 */
const MACHINE_PATH = new RegExp([
  // A path starting a token: not inside a URL, a longer path, a variable or a `~/` path.
  '(?<![\\w.~$:/@%-])(?:/(?:work|root|tmp|private/tmp|var/folders)/|/(?:home|Users)/[^/\\s\'"`)]+/)',
  // The same as a file: URL.
  'file:///(?:work|root|tmp|private/tmp|var/folders|home|Users)/',
  // A Windows user's folder.
  '\\b[A-Za-z]:\\\\Users\\\\',
].join('|'));

/** Files whose absolute paths are inside an image or a pod, not on a machine. */
const IMAGE_PATHS = (file: string): boolean => file === 'Dockerfile' || file.startsWith('Dockerfile.') || file.startsWith('deploy/');
/** This file spells the prefixes out in its comment (its examples are put together from pieces). */
const THIS_FILE = 'test/lint/machine-paths.spec.ts';

function trackedFiles(root: string): string[] {
  return execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).split('\0').filter((f) => f !== '');
}

/** `file:line: text` of every machine path in `text`. */
function machinePaths(file: string, text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, index) => {
    if (MACHINE_PATH.test(line)) found.push(`${file}:${index + 1}: ${line.trim().slice(0, 160)}`);
  });
  return found;
}

describe('no path of one machine in the repository', () => {
  // The examples are put together from pieces, so that this file holds no machine path itself.
  const slash = '/';
  it.each([
    `cd ${slash}work/wt-house && npm test`,
    `BILLING_ROOT=${slash}work/wt-prev npm run bench -- ledger-write`,
    `git worktree add ${slash}tmp/wt-before 89d4db7`,
    `"baseline": "${slash}tmp/x/services/search-gateway/dist/main.js"`,
    `export PATH=${slash}root/.cache/svc-node24/bin:$PATH`,
    `see ${slash}home/alice/notes.md`,
    `(${slash}Users/bob/dev/repo)`,
    `open file://${slash}tmp/report.html`,
    `${slash}private/tmp/x and ${slash}var/folders/zz/T/y`,
    'C:\\Users\\carol\\repo',
  ])('finds the machine path in %j', (line) => {
    expect(machinePaths('doc.md', line)).toHaveLength(1);
  });

  it.each([
    'WORKDIR /app',
    'PGDATA=/var/lib/postgresql/data',
    '~/.cache/svc-node24 and $HOME/.cache/svc-node24',
    `https://example.com${slash}tmp/x and http://localhost:8080${slash}work/x`,
    'bench/results/latency.json, ../wt-prev, <a checkout of ea0b746>/services/search-gateway/dist/main.js',
    'GET /v1/keys/{id}, /dashboard/api/usage, /oauth/token',
    'the system temp folder (/tmp) or mkdtemp',
    `apps/work${slash}tmp/x`, `node_modules/.cache${slash}tmp/x`,
  ])('leaves %j alone', (line) => {
    expect(machinePaths('doc.md', line)).toEqual([]);
  });

  it('no tracked file outside the image\'s own (Dockerfile, deploy/) holds one', () => {
    const root = repoRoot();
    const files = trackedFiles(root).filter((file) => !IMAGE_PATHS(file) && file !== THIS_FILE);
    expect(files.length).toBeGreaterThan(100);
    const found: string[] = [];
    for (const file of files) {
      let content: Buffer;
      try {
        content = readFileSync(join(root, file));
      } catch {
        continue; // deleted in the working tree and not yet committed
      }
      if (content.subarray(0, 8000).includes(0)) continue; // binary (screenshots)
      found.push(...machinePaths(file, content.toString('utf8')));
    }
    expect(found).toEqual([]);
  });
});
