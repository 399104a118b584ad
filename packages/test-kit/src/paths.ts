import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The repository root: the nearest folder above this file with a tsconfig.build.json. */
export function repoRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'tsconfig.build.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('repository root not found');
    dir = parent;
  }
  return dir;
}
