import { spawnSync } from 'node:child_process';
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
