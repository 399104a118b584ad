/**
 * Money is an integer number of micro-USD (1 USD = 1,000,000). JavaScript numbers hold
 * integers exactly up to 2^53, i.e. about 9 billion USD, far above any balance here.
 * Arithmetic on money is integer arithmetic only; USD numbers exist only at the JSON edge.
 */
export type Micros = number;

export const MICROS_PER_USD = 1_000_000;

/** Largest amount accepted at the edge: 10^9 USD keeps every sum exact. */
const MAX_USD = 1_000_000_000;

/**
 * True when `value` is a finite USD amount with at most six decimals (a whole number of
 * micro-USD) and at most 10^9 in size. Decimal digits are read from the number's shortest
 * round-trip form, so 0.1 is accepted and 0.0000001 is not.
 */
export function isUsdAmount(value: unknown): value is number {
  if (typeof value !== 'number' || !Number.isFinite(value)) return false;
  if (Math.abs(value) > MAX_USD) return false;
  return decimalsOf(value) <= 6;
}

function decimalsOf(value: number): number {
  const text = Math.abs(value).toString();
  const exp = /e-(\d+)$/.exec(text);
  if (exp !== null) {
    const mantissa = text.slice(0, text.indexOf('e'));
    const dot = mantissa.indexOf('.');
    return Number(exp[1]) + (dot === -1 ? 0 : mantissa.length - dot - 1);
  }
  const dot = text.indexOf('.');
  return dot === -1 ? 0 : text.length - dot - 1;
}

/** USD (validated by isUsdAmount) to integer micro-USD, exactly. */
export function usdToMicros(usd: number): Micros {
  if (!isUsdAmount(usd)) throw new RangeError('not a USD amount with at most 6 decimals');
  return Math.round(usd * MICROS_PER_USD);
}

/** Integer micro-USD to the USD number written in JSON (the nearest double to the decimal). */
export function microsToUsd(micros: Micros): number {
  if (!Number.isSafeInteger(micros)) throw new RangeError('micro-USD must be a safe integer');
  return micros / MICROS_PER_USD;
}
