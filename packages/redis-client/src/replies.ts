/** A Redis reply (an integer, or a number as a string) as a safe integer; throws naming `what` otherwise. */
export function integerReply(value: unknown, what: string): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`${what} is not a safe integer`);
  return n;
}
