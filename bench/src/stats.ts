/** Percentile by nearest rank on a sorted copy. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export function summarize(values: readonly number[]): { n: number; p50: number; p99: number; max: number } {
  return { n: values.length, p50: percentile(values, 50), p99: percentile(values, 99), max: percentile(values, 100) };
}
