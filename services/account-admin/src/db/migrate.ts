import { join } from 'node:path';
import { applyMigrations } from '@svc/pg-migrate';
import type { MigrateResult } from '@svc/pg-migrate';

/** prisma/migrations of this service, from src/db or dist/db alike. */
export const MIGRATIONS_DIR = join(__dirname, '..', '..', 'prisma', 'migrations');

export function migrate(databaseUrl: string): Promise<MigrateResult> {
  return applyMigrations(databaseUrl, MIGRATIONS_DIR);
}
