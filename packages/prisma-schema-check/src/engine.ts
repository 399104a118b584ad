import { readFileSync } from 'node:fs';
import type * as NodeModule from 'node:module';
import { dirname, join } from 'node:path';
import type { ConstructorOptions, SchemaEngine } from '@prisma/schema-engine-wasm' with { 'resolution-mode': 'import' };

/**
 * Loads Prisma's schema engine compiled to WebAssembly.
 *
 * The package's entry point imports the `.wasm` file as an ES module, which Node does not
 * support without a flag, so this instantiates the module itself from the wasm-bindgen glue
 * (`schema_engine_bg.js`). The glue is an ES module; it is loaded with Node's own `require`
 * (Node 20.19+ loads synchronous ES modules that way), which also keeps Jest's module
 * registry out of it.
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

/**
 * Node's own `module` builtin. Under Jest, `import 'node:module'` yields Jest's stand-in,
 * whose `require` refuses ES modules on Node 20; `process.getBuiltinModule` (Node 20.16+)
 * returns the real one in both cases.
 */
function nativeModule(): typeof NodeModule {
  return process.getBuiltinModule('node:module');
}

const GLUE = '@prisma/schema-engine-wasm/schema_engine_bg';

let bindings: EngineBindings | undefined;

function loadBindings(): EngineBindings {
  if (bindings !== undefined) return bindings;
  const nodeRequire = nativeModule().createRequire(__filename);
  const gluePath = nodeRequire.resolve(GLUE);
  const glue = nodeRequire(gluePath) as EngineBindings & Record<string, unknown>;
  const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
  const module = new wasm.Module(readFileSync(join(dirname(gluePath), 'schema_engine_bg.wasm')));
  const instance = new wasm.Instance(module, { './schema_engine_bg.js': glue });
  glue.__wbg_set_wasm(instance.exports);
  const start = instance.exports.__wbindgen_start;
  if (typeof start === 'function') (start as () => void)();
  bindings = glue;
  return glue;
}

/** Creates an engine bound to a driver adapter factory (already wrapped for error capture). */
export async function createSchemaEngine(adapter: object, log: (line: string) => void = () => undefined): Promise<SchemaEngine> {
  return loadBindings().SchemaEngine.new({ datamodels: undefined }, log, adapter);
}

export type { SchemaEngine };
