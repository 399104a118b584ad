import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import { applyMigrations, listMigrations } from '@svc/pg-migrate';
import { Client } from 'pg';
import { EngineAdapterFactory, clientConfig, connectionFields, quoteIdent } from './adapter';
import type { ConnectionFields } from './adapter';
import { createSchemaEngine } from './engine';
import type { DiffResult, SchemaEngine } from './engine';

export interface SchemaDiffOptions {
  /** Path of the service's schema.prisma. */
  schemaPath: string;
  /** Prisma Migrate's folder: `<timestamp>_<name>/migration.sql` per migration. */
  migrationsDir: string;
  /**
   * Any database URL on the PostgreSQL server to use (e.g. `postgresql://postgres@127.0.0.1:5432/postgres`);
   * the check creates its own scratch database there and drops it afterwards.
   */
  databaseUrl: string;
  /** Name of the scratch database; default `svc_schemacheck_<random>`. Dropped first if it exists. */
  scratchDatabase?: string;
  /** Receives the engine's debug log lines. */
  log?: (line: string) => void;
}

/**
 * Applies the migrations to a scratch database (with @svc/pg-migrate, as production would)
 * and asks Prisma's schema engine for the SQL that would bring that database to the schema
 * in schema.prisma. The answer is empty, or only comments, when they match: see
 * `isEmptyDiff`. Otherwise it is the next migration's SQL.
 */
export async function schemaDiffSql(options: SchemaDiffOptions): Promise<string> {
  const server = connectionFields(options.databaseUrl);
  const scratch = options.scratchDatabase ?? `svc_schemacheck_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  if (!/^[a-z_][a-z0-9_]*$/.test(scratch)) throw new Error(`bad scratch database name ${scratch}`);
  const schemaPath = resolve(options.schemaPath);
  const content = readFileSync(schemaPath, 'utf8');

  await admin(server, `DROP DATABASE IF EXISTS ${quoteIdent(scratch)} WITH (FORCE)`);
  await admin(server, `CREATE DATABASE ${quoteIdent(scratch)}`);
  try {
    const scratchFields: ConnectionFields = { ...server, database: scratch };
    await applyMigrations(urlOf(scratchFields), resolve(options.migrationsDir));
    return await diffDatabaseToSchema(scratchFields, schemaPath, content, options.log);
  } finally {
    await admin(server, `DROP DATABASE IF EXISTS ${quoteIdent(scratch)} WITH (FORCE)`);
  }
}

/**
 * The same question answered by the engine alone: it replays the migrations in a shadow
 * database it creates (and drops) on the server, then diffs that against schema.prisma.
 * A cross-check of `schemaDiffSql`; it touches no database of the caller's.
 */
export async function migrationsDiffSql(options: Omit<SchemaDiffOptions, 'scratchDatabase'>): Promise<string> {
  const schemaPath = resolve(options.schemaPath);
  const content = readFileSync(schemaPath, 'utf8');
  const migrationsDir = resolve(options.migrationsDir);
  const migrationDirectories = listMigrations(migrationsDir).map((migration) => ({
    path: migration.name,
    migrationFile: { path: 'migration.sql', content: { tag: 'ok' as const, value: migration.sql } },
  }));
  const lockPath = join(migrationsDir, 'migration_lock.toml');
  return withEngine(connectionFields(options.databaseUrl), options.log, (engine) =>
    engine.diff({
      from: {
        tag: 'migrations',
        baseDir: migrationsDir,
        lockfile: { path: 'migration_lock.toml', content: existsSync(lockPath) ? readFileSync(lockPath, 'utf8') : null },
        shadowDbInitScript: '',
        migrationDirectories,
      },
      to: { tag: 'schemaDatamodel', files: [{ path: schemaPath, content }] },
      script: true,
      exitCode: null,
      filters: { externalTables: [], externalEnums: [] },
    }),
  );
}

/** True when the engine's script changes nothing (it prints only comments then). */
export function isEmptyDiff(sql: string): boolean {
  return sql
    .split('\n')
    .map((line) => line.trim())
    .every((line) => line === '' || line.startsWith('--'));
}

async function diffDatabaseToSchema(
  fields: ConnectionFields,
  schemaPath: string,
  content: string,
  log: ((line: string) => void) | undefined,
): Promise<string> {
  return withEngine(fields, log, (engine) =>
    engine.diff({
      // The live database the adapter connects to (the engine refuses `url` targets).
      from: { tag: 'schemaDatasource', files: [{ path: schemaPath, content }], configDir: dirname(schemaPath) },
      to: { tag: 'schemaDatamodel', files: [{ path: schemaPath, content }] },
      script: true,
      exitCode: null,
      filters: { externalTables: [], externalEnums: [] },
    }),
  );
}

async function withEngine(
  fields: ConnectionFields,
  log: ((line: string) => void) | undefined,
  run: (engine: SchemaEngine) => Promise<DiffResult>,
): Promise<string> {
  const factory = new EngineAdapterFactory(fields);
  try {
    const engine = await createSchemaEngine(bindMigrationAwareSqlAdapterFactory(factory), log);
    try {
      return (await run(engine)).stdout ?? '';
    } finally {
      engine.free();
    }
  } finally {
    await factory.close();
  }
}

function urlOf(fields: ConnectionFields): string {
  const auth = fields.password === undefined
    ? encodeURIComponent(fields.user)
    : `${encodeURIComponent(fields.user)}:${encodeURIComponent(fields.password)}`;
  return `postgresql://${auth}@${fields.host}:${fields.port}/${encodeURIComponent(fields.database)}`;
}

async function admin(fields: ConnectionFields, sql: string): Promise<void> {
  const client = new Client(clientConfig(fields));
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
