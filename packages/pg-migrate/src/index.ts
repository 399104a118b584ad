export { applyMigrations, listMigrations } from './migrate';
export type { MigrationFile, MigrateResult } from './migrate';
export { purgeAuditEntries, runAuditPurgeCli } from './audit-purge';
