/**
 * An environment variable, where the runtime has one: Node and Bun (`process.env`), Deno 2
 * (`process.env`, which throws without `--allow-env`: then it counts as unset). In a browser
 * there is no `process`, and every variable is unset. An empty value counts as unset.
 */
export function readEnv(name: string): string | undefined {
  try {
    const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
    const value = proc?.env?.[name];
    return value === undefined || value === '' ? undefined : value;
  } catch {
    return undefined;
  }
}
