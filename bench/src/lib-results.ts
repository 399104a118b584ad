/** Small helpers the benchmarks share: medians and bench/results/<name>.json. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@svc/test-kit';

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Writes the result as pretty JSON (paths relative to the repository) and returns the path. */
export function writeResult(name: string, result: unknown): string {
  const root = repoRoot();
  const dir = join(root, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(result, null, 2).split(`${root}/`).join('') + '\n');
  return file;
}
