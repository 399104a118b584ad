/** Small helpers the benchmarks share: medians, paired rounds and bench/results/<name>.json. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@svc/test-kit';

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * Writes the result as pretty JSON and returns the path. No path of this machine goes into the
 * file (test/lint/machine-paths.spec.ts): paths in this checkout become relative to it, and a
 * path into another checkout (a build compared with BENCH_GATEWAY_SCRIPT, GATEWAY_A, BILLING_ROOT)
 * keeps only its part inside that checkout, after `<another checkout>/`.
 */
export function writeResult(name: string, result: unknown): string {
  const root = repoRoot();
  const dir = join(root, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.json`);
  const text = JSON.stringify(result, null, 2).split(`${root}/`).join('')
    .replace(/"\/[^"]*?\/((?:services|packages|tools|bench)\/[^"]*)"/g, '"<another checkout>/$1"');
  writeFileSync(file, `${text}\n`);
  return file;
}

/**
 * `count` paired rounds of two sides in alternating order (a then b in odd rounds, b then a in
 * even ones), so neither side always runs second on a warmer machine; `onRound` sees each
 * pair as it ends (its index from 0).
 */
export async function alternatingRounds<T>(count: number, a: () => Promise<T>, b: () => Promise<T>, onRound: (round: { a: T; b: T }, index: number) => void): Promise<{ a: T; b: T }[]> {
  const rounds: { a: T; b: T }[] = [];
  for (let i = 0; i < count; i++) {
    let ra: T;
    let rb: T;
    if (i % 2 === 0) {
      ra = await a();
      rb = await b();
    } else {
      rb = await b();
      ra = await a();
    }
    const round = { a: ra, b: rb };
    rounds.push(round);
    onRound(round, i);
  }
  return rounds;
}
