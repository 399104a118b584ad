import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@svc/test-kit';

/**
 * The data plane never opens Postgres: the lint rule that enforces it must fire. ESLint runs
 * as a child process on source given on stdin, as `npm run lint` would see that file.
 */
function restrictedImports(relativePath: string, code: string): string[] {
  const root = repoRoot();
  const run = spawnSync(process.execPath, [join(root, 'node_modules/eslint/bin/eslint.js'), '--stdin', '--stdin-filename', relativePath, '--format', 'json'], {
    cwd: root,
    input: code,
    encoding: 'utf8',
  });
  const [result] = JSON.parse(run.stdout) as { messages: { ruleId: string | null; message: string }[] }[];
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('import rules', () => {
  it.each([
    "import { Client } from 'pg';",
    "import { PrismaClient } from '@prisma/client';",
    "import { PrismaPg } from '@prisma/adapter-pg';",
    "import { PrismaClient } from '../generated/prisma/client';",
  ])('refuses `%s` in search-gateway', (line) => {
    const messages = restrictedImports('services/search-gateway/src/main.ts', `${line}\nexport const x = 1;\n`);
    expect(messages.join('\n')).toMatch(/search-gateway must not/);
  });

  it('allows the same import outside the gateway', () => {
    expect(restrictedImports('packages/pg-migrate/src/migrate.ts', "import { Client } from 'pg';\nexport const c = Client;\n")).toEqual([]);
  });

  it('refuses importing a package by its src path', () => {
    const messages = restrictedImports('packages/contracts/src/index.ts', "import { hashSecret } from '@svc/keys/src/key-format';\nexport const h = hashSecret;\n");
    expect(messages.join('\n')).toMatch(/only through its root/);
  });
});

/** ESLint on real files (the rules as `npm run lint` applies them), by rule id, each `line: message`. */
function lintFiles(paths: string[]): Record<string, string[]> {
  const root = repoRoot();
  const run = spawnSync(process.execPath, [join(root, 'node_modules/eslint/bin/eslint.js'), '--format', 'json', ...paths], { cwd: root, encoding: 'utf8' });
  const results = JSON.parse(run.stdout) as { filePath: string; messages: { ruleId: string | null; line: number; message: string }[] }[];
  const byFile: Record<string, string[]> = {};
  for (const result of results) byFile[result.filePath.slice(root.length + 1)] = result.messages.map((m) => `${m.ruleId ?? 'parse'}:${m.line}: ${m.message}`);
  return byFile;
}

describe('SQL only in repositories and db/ (docs/decisions/0040)', () => {
  const SQL = 'SQL only in repositories';
  // Each service gets a folder of its own inside its sources (as a new module would be), removed after.
  const planted: string[] = [];
  const plant = (service: string, files: Record<string, string>): string[] => {
    const folder = `services/${service}/src/lint-planted-${randomBytes(4).toString('hex')}`;
    mkdirSync(join(repoRoot(), folder));
    planted.push(folder);
    return Object.entries(files).map(([name, source]) => {
      writeFileSync(join(repoRoot(), folder, name), source);
      return `${folder}/${name}`;
    });
  };
  afterAll(() => {
    for (const folder of planted) rmSync(join(repoRoot(), folder), { recursive: true, force: true });
  });

  it('refuses a statement, a transaction, a built query or the client outside a store, and allows them in a repository', () => {
    const billing = plant('billing', {
      'planted.service.ts': [
        "import { Prisma } from '../generated/prisma/client';",
        "import type { PrismaClient } from '../generated/prisma/client';",
        'export class PlantedService {',
        '  constructor(private readonly prisma: PrismaClient) {}',
        '  async low(): Promise<unknown> {',
        '    await this.prisma.$transaction(async (tx) => tx.$executeRaw`UPDATE billing_settings SET low_balance_armed = false`);',
        '    return this.prisma.$queryRaw`SELECT ${Prisma.sql`1`}`;',
        '  }',
        '}',
        '',
      ].join('\n'),
      'planted.repository.ts': [
        "import { Prisma } from '../generated/prisma/client';",
        "import type { PrismaClient } from '../generated/prisma/client';",
        'export class PlantedRepository {',
        '  constructor(private readonly prisma: PrismaClient) {}',
        '  async one(): Promise<unknown> {',
        '    return this.prisma.$queryRaw`SELECT ${Prisma.sql`1`}`;',
        '  }',
        '}',
        '',
      ].join('\n'),
    });
    const accountAdmin = plant('account-admin', {
      'planted.ts': [
        "import type { Prisma } from '../generated/prisma/client';",
        "import { Client } from 'pg';",
        'export async function append(tx: Prisma.TransactionClient): Promise<number> {',
        '  void Client;',
        "  return tx.$executeRaw`INSERT INTO audit_entries (id) VALUES ('x')`;",
        '}',
        '',
      ].join('\n'),
    });
    const found = lintFiles([...billing, ...accountAdmin]);
    const sqlOnly = (file: string): string[] => (found[file] ?? []).filter((m) => m.includes(SQL));
    expect(sqlOnly(billing[0] ?? '')).toEqual([
      `no-restricted-imports:1: '../generated/prisma/client' import is restricted from being used by a pattern. ${SQL} (*.repository.ts) and db/: only a store (or db/) uses the Prisma client; others may name its types.`,
      `no-restricted-syntax:6: ${SQL} (*.repository.ts) and db/: move the statement into a store; a service opens its transaction with db/transactions.`,
      `no-restricted-syntax:6: ${SQL} (*.repository.ts) and db/: move the statement into a store; a service opens its transaction with db/transactions.`,
      `no-restricted-syntax:7: ${SQL} (*.repository.ts) and db/: move the statement into a store; a service opens its transaction with db/transactions.`,
      `no-restricted-syntax:7: ${SQL} (*.repository.ts) and db/: build the statement in a store.`,
    ]);
    expect(found[billing[1] ?? '']).toEqual([]);
    expect(sqlOnly(accountAdmin[0] ?? '')).toEqual([
      `no-restricted-imports:2: 'pg' import is restricted from being used. ${SQL} (*.repository.ts) and db/: the driver belongs to a store.`,
      `no-restricted-syntax:5: ${SQL} (*.repository.ts) and db/: move the statement into a store; a service opens its transaction with db/transactions.`,
    ]);
  });
});
