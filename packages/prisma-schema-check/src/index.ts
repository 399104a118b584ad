export { schemaDiffSql, isEmptyDiff } from './diff';
export type { SchemaDiffOptions } from './diff';
