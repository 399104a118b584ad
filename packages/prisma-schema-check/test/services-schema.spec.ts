import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { databaseUrl, repoRoot } from '@svc/test-kit';
import { isEmptyDiff, schemaDiffSql } from '@svc/prisma-schema-check';

/**
 * Every service that owns a database: its migrations must build exactly the schema its
 * schema.prisma describes. A missing folder fails here rather than being skipped.
 */
const SERVICES = ['account-admin', 'billing'] as const;

describe.each(SERVICES)('%s: prisma/migrations build exactly prisma/schema.prisma', (service) => {
  const prismaDir = join(repoRoot(), 'services', service, 'prisma');
  const schemaPath = join(prismaDir, 'schema.prisma');
  const migrationsDir = join(prismaDir, 'migrations');

  it('has a schema.prisma and a migrations folder', () => {
    expect({ schemaPath, exists: existsSync(schemaPath) }).toEqual({ schemaPath, exists: true });
    expect({ migrationsDir, exists: existsSync(migrationsDir) }).toEqual({ migrationsDir, exists: true });
  });

  it('needs no further migration (the diff below is the missing migration.sql)', async () => {
    if (!existsSync(schemaPath) || !existsSync(migrationsDir)) {
      throw new Error(`services/${service}/prisma/schema.prisma or services/${service}/prisma/migrations is missing`);
    }
    const sql = await schemaDiffSql({
      schemaPath,
      migrationsDir,
      databaseUrl: databaseUrl('postgres'),
      scratchDatabase: `svc_schemacheck_${service.replace(/-/g, '_')}`,
    });

    // Compared as text so a failure prints the SQL that would bring the migrations level.
    expect(isEmptyDiff(sql) ? '' : sql).toBe('');
  });
});
