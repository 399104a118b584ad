import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@svc/test-kit';

/**
 * billing's longest chain of imports, counted in modules (every folder one, and each file that
 * lies directly in src), is at most 8 (docs/decisions/0038): `npm run lint` runs
 * `node scripts/import-depth.mjs services/billing/src --max 8` (check:depth), which reads the
 * imports with dependency-cruiser as check:cycles does. A chain of 9 planted in a fresh folder
 * outside the repository fails it; one of 8 passes.
 */
const MAX = 8;
const root = repoRoot();
let fixtures: string;

function depth(folder: string, cwd = root): { status: number | null; result: { depth: number; chain: string[] } } {
  const run = spawnSync(process.execPath, [join(root, 'scripts/import-depth.mjs'), folder, '--max', String(MAX), '--json'], { cwd, encoding: 'utf8' });
  return { status: run.status, result: JSON.parse(run.stdout) as { depth: number; chain: string[] } };
}

/** `src/main.ts` importing `src/m1/`, which imports `src/m2/`, ...: a chain of `modules` modules. */
function plantChain(name: string, modules: number): string {
  const dir = join(fixtures, name);
  const folders = Array.from({ length: modules - 1 }, (_, i) => `m${i + 1}`);
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'src/main.ts'), `import { value } from './${folders[0]}/part';\nexport const main = value;\n`);
  folders.forEach((folder, i) => {
    mkdirSync(join(dir, 'src', folder), { recursive: true });
    const next = folders[i + 1];
    writeFileSync(join(dir, 'src', folder, 'part.ts'), next === undefined
      ? 'export const value = 1;\n'
      : `import { value as inner } from '../${next}/part';\nexport const value = inner + 1;\n`);
  });
  return dir;
}

beforeAll(() => {
  fixtures = mkdtempSync(join(tmpdir(), 'import-depth-'));
});

afterAll(() => {
  rmSync(fixtures, { recursive: true, force: true });
});

describe('the import-depth check', () => {
  it(`billing's longest import chain is at most ${MAX} modules`, () => {
    const { status, result } = depth('services/billing/src');
    expect(result.depth).toBeLessThanOrEqual(MAX);
    expect(result.chain[0]).toMatch(/^(main|worker)$/);
    expect(status).toBe(0);
  });

  it(`fails on a planted chain of ${MAX + 1} modules, naming it, and passes one of ${MAX}`, () => {
    const deep = depth('src', plantChain('deep', MAX + 1));
    expect(deep.status).toBe(1);
    expect(deep.result).toEqual({ folder: 'src', modules: MAX + 1, depth: MAX + 1, chain: ['main', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8'], max: MAX });
    const flat = depth('src', plantChain('flat', MAX));
    expect([flat.status, flat.result.depth]).toEqual([0, MAX]);
  });

  it('counts a nested folder as a module of its own: nesting hides no step', () => {
    const dir = join(fixtures, 'nested');
    mkdirSync(join(dir, 'src/http/area'), { recursive: true });
    mkdirSync(join(dir, 'src/http/guard'), { recursive: true });
    writeFileSync(join(dir, 'src/main.ts'), "import { area } from './http/area/controller';\nexport const main = area;\n");
    writeFileSync(join(dir, 'src/http/area/controller.ts'), "import { guard } from '../guard/guard';\nexport const area = guard;\n");
    writeFileSync(join(dir, 'src/http/guard/guard.ts'), 'export const guard = 1;\n');
    expect(depth('src', dir).result.chain).toEqual(['main', 'http/area', 'http/guard']);
  });
});
