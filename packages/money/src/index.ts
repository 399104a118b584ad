export { MICROS_PER_USD, usdToMicros, microsToUsd, isUsdAmount } from './money';
export type { Micros } from './money';
