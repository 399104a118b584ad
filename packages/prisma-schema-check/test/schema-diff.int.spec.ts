import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { databaseUrl } from '@svc/test-kit';
import { isEmptyDiff, migrationsDiffSql, schemaDiffSql } from '@svc/prisma-schema-check';

const fixtures = join(__dirname, 'fixtures');
const schemaPath = join(fixtures, 'schema', 'schema.prisma');
const serverUrl = databaseUrl('postgres');

/**
 * The migration sets the specs diff: the fixture `migrations-ok` (migrations that build the
 * schema exactly), and two variants of it written into a temporary folder, each with one fault.
 */
const variantsDir = mkdtempSync(join(tmpdir(), 'svc-schemacheck-'));
afterAll(() => rmSync(variantsDir, { recursive: true, force: true }));

const migrationsOk = join(fixtures, 'migrations-ok');

/** A copy of migrations-ok under `name` in the temporary folder, changed by `fault`. */
function variantOfOk(name: string, fault: (dir: string) => void): string {
  const dir = join(variantsDir, name);
  cpSync(migrationsOk, dir, { recursive: true });
  fault(dir);
  return dir;
}

/** The migration that adds api_keys.label is left out. */
const missingColumn = variantOfOk('migrations-missing-column', (dir) => {
  rmSync(join(dir, '20250102000000_key_label'), { recursive: true });
});
/** The init migration makes the unique index on api_keys.hash a plain one. */
const missingUnique = variantOfOk('migrations-missing-unique', (dir) => {
  const init = join(dir, '20250101000000_init', 'migration.sql');
  const unique = 'CREATE UNIQUE INDEX "api_keys_hash_key" ON "api_keys"("hash");';
  const sql = readFileSync(init, 'utf8');
  if (!sql.includes(unique)) throw new Error(`${init} no longer has ${unique}`);
  writeFileSync(init, sql.replace(unique, 'CREATE INDEX "api_keys_hash_key" ON "api_keys"("hash");'));
});

async function shadowDatabases(): Promise<string[]> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const found = await client.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE 'prisma\\_migrate\\_shadow\\_db\\_%'",
    );
    return found.rows.map((row) => row.datname);
  } finally {
    await client.end();
  }
}

async function databaseExists(name: string): Promise<boolean> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    return found.rowCount === 1;
  } finally {
    await client.end();
  }
}

function diff(migrationsDir: string, scratchDatabase: string): Promise<string> {
  return schemaDiffSql({ schemaPath, migrationsDir, databaseUrl: serverUrl, scratchDatabase });
}

describe('schemaDiffSql (migrations applied to a scratch database, diffed by the schema engine)', () => {
  it('gives an empty diff when the migrations build exactly the schema, and drops its scratch database', async () => {
    const sql = await diff(migrationsOk, 'svc_schemacheck_ok');

    expect(isEmptyDiff(sql)).toBe(true);
    expect(await databaseExists('svc_schemacheck_ok')).toBe(false);
  });

  it('names the column a migration forgot', async () => {
    const sql = await diff(missingColumn, 'svc_schemacheck_missing_column');

    expect(isEmptyDiff(sql)).toBe(false);
    expect(sql).toMatch(/ALTER TABLE "api_keys" ADD COLUMN\s+"label" TEXT/);
  });

  it('catches a unique index that the migrations made a plain index', async () => {
    const sql = await diff(missingUnique, 'svc_schemacheck_missing_unique');

    expect(isEmptyDiff(sql)).toBe(false);
    expect(sql).toContain('CREATE UNIQUE INDEX "api_keys_hash_key" ON "api_keys"("hash")');
  });

  it('reports a migration that fails to apply instead of diffing a half-built database', async () => {
    await expect(diff(join(fixtures, 'does-not-exist'), 'svc_schemacheck_missing_dir')).rejects.toThrow(/ENOENT/);
    expect(await databaseExists('svc_schemacheck_missing_dir')).toBe(false);
  });
});

describe('migrationsDiffSql (the engine replays the migrations in its own shadow database)', () => {
  const shadowDiff = (migrationsDir: string): Promise<string> =>
    migrationsDiffSql({ schemaPath, migrationsDir, databaseUrl: serverUrl });

  it('agrees with the scratch-database route on matching migrations and leaves no shadow database behind', async () => {
    const before = await shadowDatabases();
    const sql = await shadowDiff(migrationsOk);

    expect(isEmptyDiff(sql)).toBe(true);
    expect(await shadowDatabases()).toEqual(before);
  });

  it('names the missing column and the missing unique index', async () => {
    expect(await shadowDiff(missingColumn)).toMatch(/ALTER TABLE "api_keys" ADD COLUMN\s+"label" TEXT/);
    expect(await shadowDiff(missingUnique)).toContain('CREATE UNIQUE INDEX "api_keys_hash_key" ON "api_keys"("hash")');
  });
});

describe('isEmptyDiff', () => {
  it('treats blank lines and SQL comments as no change', () => {
    expect(isEmptyDiff('')).toBe(true);
    expect(isEmptyDiff('-- This is an empty migration.\n\n')).toBe(true);
  });

  it('treats any statement as a change', () => {
    expect(isEmptyDiff('-- AlterTable\nALTER TABLE "a" ADD COLUMN "b" TEXT;\n')).toBe(false);
  });
});
