export { newId, newRequestId, isId, ID_PREFIXES } from './ids';
export type { IdKind } from './ids';
