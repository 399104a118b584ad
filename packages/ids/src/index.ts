export { newId, newRequestId, isId, idPatternSource, ID_PREFIXES, TIME_ORDERED_KINDS } from './ids';
export type { IdKind } from './ids';
