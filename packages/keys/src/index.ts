export { generateSecret, hashSecret, parseBearer, labelOf, kindOfSecret } from './key-format';
export type { KeyKind, ParsedBearer } from './key-format';
