#!/usr/bin/env node
// The longest chain of imports inside one source folder, counted in modules the way the floors
// of an import drawing are: every folder is one module (a nested folder such as `http/credits`
// is a module of its own, so nesting hides no step), and so is every file that lies directly in
// the source folder (`main.ts` is the module `main`). An import between two files of one folder
// is not a step; an import of a package or of another service is not counted.
//
//   node scripts/import-depth.mjs services/billing/src            prints the chain and its length
//   node scripts/import-depth.mjs services/billing/src --max 8    also exits 1 when it is longer
//   node scripts/import-depth.mjs services/billing/src --json     the result as JSON
//
// The imports are read by dependency-cruiser with the repository's .dependency-cruiser.cjs (the
// same reading `npm run check:cycles` makes: type-only imports count, specs and test folders do
// not), so the two checks agree on what imports what.
import { spawnSync } from 'node:child_process';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function usage(message) {
  process.stderr.write(`${message}\nusage: node scripts/import-depth.mjs <source folder> [--max N] [--json]\n`);
  process.exit(2);
}

/** The folder-level modules and the imports between them (from dependency-cruiser's JSON). */
export function moduleGraph(sourceFolder, cwd = root) {
  const absolute = resolve(cwd, sourceFolder);
  const run = spawnSync(process.execPath, [
    join(root, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs'),
    '--config', join(root, '.dependency-cruiser.cjs'), '--output-type', 'json', relative(cwd, absolute) || '.',
  ], { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (run.status !== 0 && run.stdout.trim() === '') throw new Error(`dependency-cruiser failed: ${run.stderr}`);
  const result = JSON.parse(run.stdout);
  const moduleOf = (source) => {
    const inside = relative(absolute, resolve(cwd, source));
    if (inside === '' || inside.startsWith('..') || inside.includes(`node_modules${sep}`)) return null;
    const parts = inside.split(sep);
    return parts.length === 1 ? parts[0].replace(/\.(d\.)?[cm]?[jt]sx?$/, '') : parts.slice(0, -1).join('/');
  };
  const modules = new Set();
  const edges = new Map();
  for (const file of result.modules) {
    const from = moduleOf(file.source);
    if (from === null) continue;
    modules.add(from);
    for (const dependency of file.dependencies) {
      const to = moduleOf(dependency.resolved);
      if (to === null || to === from) continue;
      modules.add(to);
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from).add(to);
    }
  }
  return { modules, edges };
}

/** The longest chain of modules (each importing the next); throws on a cycle, which lint forbids anyway. */
export function longestChain({ modules, edges }) {
  const best = new Map();
  const onStack = new Set();
  const visit = (module) => {
    const known = best.get(module);
    if (known !== undefined) return known;
    if (onStack.has(module)) throw new Error(`import cycle through ${module}`);
    onStack.add(module);
    let chain = [module];
    for (const next of [...(edges.get(module) ?? [])].sort()) {
      const tail = visit(next);
      if (tail.length + 1 > chain.length) chain = [module, ...tail];
    }
    onStack.delete(module);
    best.set(module, chain);
    return chain;
  };
  let longest = [];
  for (const module of [...modules].sort()) {
    const chain = visit(module);
    if (chain.length > longest.length) longest = chain;
  }
  return longest;
}

function main(argv) {
  const args = [...argv];
  const json = args.includes('--json');
  const maxAt = args.indexOf('--max');
  const max = maxAt === -1 ? null : Number(args[maxAt + 1]);
  if (max !== null && !Number.isInteger(max)) usage('--max needs a whole number');
  const folder = args.find((arg, i) => !arg.startsWith('--') && (maxAt === -1 || i !== maxAt + 1));
  if (folder === undefined) usage('name the source folder');
  const graph = moduleGraph(folder, process.cwd());
  const chain = longestChain(graph);
  if (json) process.stdout.write(`${JSON.stringify({ folder, modules: graph.modules.size, depth: chain.length, chain, max })}\n`);
  else process.stdout.write(`${folder}: ${graph.modules.size} modules; the longest import chain has ${chain.length}:\n  ${chain.join(' -> ')}\n`);
  if (max !== null && chain.length > max) {
    if (!json) process.stderr.write(`more than ${max} modules deep\n`);
    process.exit(1);
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
