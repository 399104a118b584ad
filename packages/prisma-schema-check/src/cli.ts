#!/usr/bin/env node
import { isEmptyDiff, schemaDiffSql } from './diff';

/**
 * node packages/prisma-schema-check/dist/cli.js <schema.prisma> <migrations dir>
 *
 * Prints the SQL that would bring a database built by the migrations to schema.prisma
 * (the next migration's migration.sql) and exits 1 when there is any; exits 0 when they
 * match, 2 on a usage or runtime error. PostgreSQL server: SCHEMA_CHECK_DATABASE_URL,
 * else DATABASE_URL, else postgresql://postgres@127.0.0.1:5432/postgres.
 */
const USAGE = 'usage: node packages/prisma-schema-check/dist/cli.js <schema.prisma> <migrations dir>';

async function main(argv: string[]): Promise<number> {
  const [schemaPath, migrationsDir, ...rest] = argv;
  if (schemaPath === undefined || migrationsDir === undefined || rest.length > 0) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const databaseUrl =
    process.env.SCHEMA_CHECK_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  const sql = await schemaDiffSql({ schemaPath, migrationsDir, databaseUrl });
  if (isEmptyDiff(sql)) {
    process.stderr.write('migrations match schema.prisma\n');
    return 0;
  }
  process.stdout.write(sql.endsWith('\n') ? sql : `${sql}\n`);
  process.stderr.write('migrations differ from schema.prisma: the SQL above is the missing migration\n');
  return 1;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`schema check failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 2;
  },
);
