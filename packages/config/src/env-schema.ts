/**
 * A service's environment is read once at start with one schema. A bad or missing value
 * stops the service with a message naming the variable (never echoing a secret's value).
 */

export interface Field<T> {
  readonly describe: string;
  readonly isSecret: boolean;
  /** Returns the value, or a problem description. `raw` is undefined when unset or empty. */
  parse(raw: string | undefined): { ok: true; value: T } | { ok: false; problem: string };
}

export type EnvSchema = Record<string, Field<unknown>>;
export type EnvOf<S extends EnvSchema> = { readonly [K in keyof S]: S[K] extends Field<infer T> ? T : never };

export class ConfigError extends Error {
  constructor(readonly variable: string, problem: string) {
    super(`invalid environment: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

/** An error of a settings reader outside the schema that names the variable at fault. */
interface VariableProblem {
  variable: string;
  problem: string;
}

function namesVariable(error: unknown): error is Error & VariableProblem {
  return error instanceof Error && typeof (error as Partial<VariableProblem>).variable === 'string' && typeof (error as Partial<VariableProblem>).problem === 'string';
}

/**
 * Runs a reader of settings the schema does not hold (another package's parser, such as the
 * provider-key KEKs); an error naming its variable (`variable`, `problem`) becomes a ConfigError.
 */
export function readSetting<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (namesVariable(error)) throw new ConfigError(error.variable, error.problem);
    throw error;
  }
}

interface Opts<T> {
  default?: T;
  optional?: boolean;
}

function field<T>(
  describe: string,
  opts: Opts<T>,
  convert: (raw: string) => { ok: true; value: T } | { ok: false; problem: string },
  isSecret = false,
): Field<T> {
  return {
    describe,
    isSecret,
    parse(raw) {
      if (raw === undefined) {
        if (opts.default !== undefined) return { ok: true, value: opts.default };
        if (opts.optional === true) return { ok: true, value: undefined as T };
        return { ok: false, problem: 'is required' };
      }
      return convert(raw);
    },
  };
}

export function int(opts: Opts<number> & { min?: number; max?: number } = {}): Field<number> {
  const min = opts.min ?? Number.MIN_SAFE_INTEGER;
  const max = opts.max ?? Number.MAX_SAFE_INTEGER;
  return field(`an integer from ${min} to ${max}`, opts, (raw) => {
    if (!/^-?\d+$/.test(raw)) return { ok: false, problem: `must be an integer (got "${raw}")` };
    const value = Number(raw);
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      return { ok: false, problem: `must be an integer from ${min} to ${max} (got "${raw}")` };
    }
    return { ok: true, value };
  });
}

export function str(opts: Opts<string> = {}): Field<string> {
  return field('a string', opts, (raw) => ({ ok: true, value: raw }));
}

export function secret(opts: { optional?: boolean; minLength?: number } = {}): Field<string | undefined> {
  const minLength = opts.minLength ?? 1;
  return field<string | undefined>(
    'a secret',
    { optional: opts.optional ?? false },
    (raw) => (raw.length >= minLength ? { ok: true, value: raw } : { ok: false, problem: `must be at least ${minLength} characters` }),
    true,
  );
}

export function bool(opts: Opts<boolean> = {}): Field<boolean> {
  return field('true or false', opts, (raw) => {
    if (raw === 'true' || raw === '1') return { ok: true, value: true };
    if (raw === 'false' || raw === '0') return { ok: true, value: false };
    return { ok: false, problem: `must be true or false (got "${raw}")` };
  });
}

export function url(opts: Opts<string> & { protocols?: string[] } = {}): Field<string> {
  return field('a URL', opts, (raw) => {
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      return { ok: false, problem: 'must be a URL' };
    }
    if (opts.protocols !== undefined && !opts.protocols.includes(parsed.protocol.replace(/:$/, ''))) {
      return { ok: false, problem: `must use one of ${opts.protocols.join(', ')}` };
    }
    return { ok: true, value: raw.replace(/\/+$/, '') };
  });
}

/**
 * REDIS_URL: one `redis://` or `rediss://` URL, or a comma-separated list of them (the seed
 * nodes of a Redis Cluster, with REDIS_CLUSTER=true). The value is never echoed: it may hold
 * a password.
 */
export function redisUrls(opts: Opts<string> = {}): Field<string> {
  return field('one redis:// or rediss:// URL, or a comma-separated list of them', opts, (raw) => {
    const urls = raw.split(',').map((part) => part.trim()).filter((part) => part !== '');
    if (urls.length === 0) return { ok: false, problem: 'names no Redis' };
    for (const [index, value] of urls.entries()) {
      let parsed: URL;
      try {
        parsed = new URL(value);
      } catch {
        return { ok: false, problem: `must be a URL or a comma-separated list of URLs (entry ${index + 1} is not a URL)` };
      }
      if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
        return { ok: false, problem: `must use one of redis, rediss (entry ${index + 1})` };
      }
    }
    return { ok: true, value: urls.map((value) => value.replace(/\/+$/, '')).join(',') };
  });
}

export function oneOf<const T extends string>(values: readonly T[], opts: Opts<T> = {}): Field<T> {
  return field(`one of ${values.join(', ')}`, opts, (raw) =>
    (values as readonly string[]).includes(raw)
      ? { ok: true, value: raw as T }
      : { ok: false, problem: `must be one of ${values.join(', ')} (got "${raw}")` },
  );
}

/** Parses every variable of the schema; throws a ConfigError naming the first bad one. */
export function parseEnv<S extends EnvSchema>(schema: S, source: NodeJS.ProcessEnv = process.env): EnvOf<S> {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(schema)) {
    const raw = source[name];
    const result = spec.parse(raw === '' ? undefined : raw);
    if (!result.ok) {
      const problem = spec.isSecret ? result.problem.replace(/\(got .*\)$/, '').trim() : result.problem;
      throw new ConfigError(name, problem);
    }
    out[name] = result.value;
  }
  return Object.freeze(out) as EnvOf<S>;
}

/** For a service's main: parse, or print the problem and exit with status 1. */
export function loadEnvOrExit<S extends EnvSchema>(schema: S, service: string): EnvOf<S> {
  try {
    return parseEnv(schema);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${service}: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}
