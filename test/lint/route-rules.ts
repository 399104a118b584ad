import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Type } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants';
import { undeclaredAccessRoutes, unguardedNestRoutes } from '@svc/http-edge';
import { repoRoot } from '@svc/test-kit';

/**
 * The route-access rules of the Nest services, run on source folders (the services in
 * `npm run lint`, a planted folder in the rules' own test): every route public or guarded
 * (decision 0020); every route behind a guard that acts on a key declares the key kind once,
 * on its controller or handler; and no controller checks a caller's key kind itself
 * (decision 0039), which would be a second, undeclared rule.
 */

/** `@Controller(` or a house decorator that includes it (`@PublicController(`, `@AccessController(`, …). */
const CONTROLLER_DECORATOR = /@\w*Controller\(/;
/** A key-kind check written in a handler: a comparison of the caller's kind, or the refusal itself. */
const KIND_CHECK = /\b(?:keyKind|kind)\s*[!=]==?\s*'(?:api|management)'|'wrong_key_type'|\brequireManagement\(/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'dist' || name === 'generated') return [];
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The files of `roots` (relative to the repository) that declare a controller. */
function controllerFiles(roots: readonly string[]): string[] {
  return roots.flatMap((root) => sourceFiles(join(repoRoot(), root))).filter((file) => CONTROLLER_DECORATOR.test(readFileSync(file, 'utf8')));
}

/** Every Nest controller class the files of `roots` export, with its file (relative to the repository). */
export async function nestControllers(roots: readonly string[]): Promise<{ file: string; controller: Type }[]> {
  const found: { file: string; controller: Type }[] = [];
  for (const file of controllerFiles(roots)) {
    const module = (await import(file)) as Record<string, unknown>;
    for (const value of Object.values(module)) {
      if (typeof value === 'function' && Reflect.getMetadata(PATH_METADATA, value) !== undefined) found.push({ file: relative(repoRoot(), file), controller: value as Type });
    }
  }
  return found;
}

/** Each broken rule, as `file: route (Controller.handler): why` or `file:line: why`. */
export async function routeAccessViolations(roots: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const { file, controller } of await nestControllers(roots)) {
    for (const route of unguardedNestRoutes([controller])) found.push(`${file}: ${route}: neither public nor guarded`);
    for (const route of undeclaredAccessRoutes([controller])) found.push(`${file}: ${route}`);
  }
  for (const file of controllerFiles(roots)) {
    readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
      if (KIND_CHECK.test(line)) found.push(`${relative(repoRoot(), file)}:${i + 1}: a handler checks the key kind itself (declare it on the controller or route instead)`);
    });
  }
  return found;
}
