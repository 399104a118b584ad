export { schemaDiffSql, migrationsDiffSql, isEmptyDiff } from './diff';
export type { SchemaDiffOptions } from './diff';
