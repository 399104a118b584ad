import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ConstructorOptions, DiffResult, SchemaEngine } from '@prisma/schema-engine-wasm' with { 'resolution-mode': 'import' };

/**
 * Loads Prisma's schema engine compiled to WebAssembly.
 *
 * The package's entry point imports the `.wasm` file as an ES module, which Node does not
 * support without a flag, so this instantiates the module itself from the wasm-bindgen glue
 * (`schema_engine_bg.js`, an ES module loaded with a dynamic import). Under Jest the glue
 * must be transformed to CommonJS: `@prisma/schema-engine-wasm` is in jest.config.js's
 * list of ESM-only packages.
 */
interface EngineBindings {
  SchemaEngine: {
    new: (options: ConstructorOptions, callback: (log: string) => void, adapter: object) => Promise<SchemaEngine>;
  };
  __wbg_set_wasm(exports: Record<string, unknown>): void;
}

/** The part of the WebAssembly global used here (the project's `lib` has no DOM types). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: Record<string, object>) => { exports: Record<string, unknown> };
}

const GLUE = '@prisma/schema-engine-wasm/schema_engine_bg';

let bindings: Promise<EngineBindings> | undefined;

async function instantiate(): Promise<EngineBindings> {
  const glue = (await import('@prisma/schema-engine-wasm/schema_engine_bg')) as unknown as EngineBindings;
  const wasmPath = join(dirname(require.resolve(GLUE)), 'schema_engine_bg.wasm');
  const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
  const instance = new wasm.Instance(new wasm.Module(readFileSync(wasmPath)), { './schema_engine_bg.js': glue });
  glue.__wbg_set_wasm(instance.exports);
  const start = instance.exports.__wbindgen_start;
  if (typeof start === 'function') (start as () => void)();
  return glue;
}

function loadBindings(): Promise<EngineBindings> {
  bindings ??= instantiate();
  return bindings;
}

/** Creates an engine bound to a driver adapter factory (already wrapped for error capture). */
export async function createSchemaEngine(adapter: object, log: (line: string) => void = () => undefined): Promise<SchemaEngine> {
  return (await loadBindings()).SchemaEngine.new({ datamodels: undefined }, log, adapter);
}

export type { DiffResult, SchemaEngine };
