import { join } from 'node:path';
import { applyMigrations } from '@svc/pg-migrate';
import type { MigrateResult } from '@svc/pg-migrate';

/** prisma/migrations of this service, from src/db (ts-jest, swc) or dist/db (built). */
export const MIGRATIONS_DIR = join(__dirname, '..', '..', 'prisma', 'migrations');

/** Applies billing's unapplied migrations, recording them as `prisma migrate deploy` does. */
export function migrateBillingDatabase(databaseUrl: string): Promise<MigrateResult> {
  return applyMigrations(databaseUrl, MIGRATIONS_DIR);
}
