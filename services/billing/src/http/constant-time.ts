import { createHash, timingSafeEqual } from 'node:crypto';

/** Compares a presented secret with the expected one in time independent of where they differ. */
export function secretsEqual(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** A header's single value (a repeated header is treated as absent). */
export function headerValue(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}
