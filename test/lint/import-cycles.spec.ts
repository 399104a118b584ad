import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { repoRoot } from '@svc/test-kit';

/**
 * The import-cycle check of `npm run lint` (`npm run check:cycles`: dependency-cruiser with
 * the repository's .dependency-cruiser.cjs) must fail on a file cycle and on a folder cycle.
 * Each case plants one in a fresh folder outside the repository and runs the same command
 * line on it; the last runs it on the tree as `npm run lint` does.
 */
const root = repoRoot();
let fixtures: string;

function check(paths: string[], cwd = root): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, [join(root, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs'), '--config', join(root, '.dependency-cruiser.cjs'), '--output-type', 'err', ...paths], {
    cwd,
    encoding: 'utf8',
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** Writes `files` (path → source) under a new folder of the fixtures; returns the folder. */
function plant(name: string, files: Record<string, string>): string {
  const dir = join(fixtures, name);
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), source);
  }
  return dir;
}

const RULES = ['no-file-cycle', 'no-folder-cycle'] as const;

/** Plants `files` and checks them: the check fails on `rule` naming what `where` matches, and on no other rule. */
function expectOnlyViolation(name: string, files: Record<string, string>, rule: (typeof RULES)[number], where: RegExp): void {
  const result = check(['src'], plant(name, files));
  expect(result.status).not.toBe(0);
  expect(result.output).toMatch(new RegExp(`${rule}: ${where.source}`));
  for (const other of RULES.filter((r) => r !== rule)) expect(result.output).not.toMatch(new RegExp(other));
}

beforeAll(() => {
  fixtures = mkdtempSync(join(tmpdir(), 'import-cycles-'));
});

afterAll(() => {
  rmSync(fixtures, { recursive: true, force: true });
});

describe('the import-cycle check', () => {
  it('fails on two files that import each other, even through a type-only import', () => {
    expectOnlyViolation('file-cycle', {
      'src/usage/usage.service.ts': "import type { UsageQuery } from './usage.dto';\nexport interface UsageReport { query: UsageQuery }\n",
      'src/usage/usage.dto.ts': "import type { UsageReport } from './usage.service';\nexport interface UsageQuery { from: number }\nexport type View = UsageReport;\n",
    }, 'no-file-cycle', /src\/usage\/usage\.(service|dto)\.ts/);
  });

  it('fails on two folders that import each other without any file cycle', () => {
    expectOnlyViolation('folder-cycle', {
      'src/ledger/ledger.service.ts': "import { applyOnce } from '../spendable/outbox';\nexport const grant = (): number => applyOnce();\n",
      'src/ledger/ledger.repository.ts': 'export const findBalance = (): number => 1;\n',
      'src/spendable/outbox.ts': "import { findBalance } from '../ledger/ledger.repository';\nexport const applyOnce = (): number => findBalance();\n",
    }, 'no-folder-cycle', /src\/(ledger|spendable) →/);
  });

  it('passes the same folders once the dependency goes one way', () => {
    const dir = plant('one-way', {
      'src/ledger/ledger.service.ts': "import type { SpendableOutbox } from './spendable.port';\nexport const grant = (outbox: SpendableOutbox): number => outbox.applyOnce();\n",
      'src/ledger/spendable.port.ts': 'export interface SpendableOutbox { applyOnce(): number }\n',
      'src/ledger/ledger.repository.ts': 'export const findBalance = (): number => 1;\n',
      'src/spendable/outbox.ts': "import { findBalance } from '../ledger/ledger.repository';\nimport type { SpendableOutbox } from '../ledger/spendable.port';\nexport const outbox: SpendableOutbox = { applyOnce: () => findBalance() };\n",
    });
    const result = check(['src'], dir);
    expect(result.output).toMatch(/no dependency violations found \(4 modules/);
    expect(result.status).toBe(0);
  });

  it('ignores specs and test folders, which may import fakes from anywhere', () => {
    const dir = plant('specs', {
      'src/a.ts': "export const a = 1;\n",
      'src/a.spec.ts': "import { fake } from '../test/fakes';\nimport { a } from './a';\nexport const both = a + fake;\n",
      'test/fakes.ts': "import { a } from '../src/a';\nexport const fake = a;\n",
    });
    expect(check(['src', 'test'], dir).status).toBe(0);
  });

  it('passes on the tree (what `npm run lint` runs)', () => {
    const result = check(['packages', 'services', 'tools']);
    expect(result.output).toMatch(/no dependency violations found/);
    expect(result.status).toBe(0);
  }, 60_000);
});
