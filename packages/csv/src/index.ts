export { csvDecimal, csvDocument, csvField, csvRecord, CsvDecimal, FORMULA_START } from './csv';
export type { CsvCell } from './csv';
