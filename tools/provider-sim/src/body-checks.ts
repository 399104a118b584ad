/** Small checks for request parameters; each returns a problem description or undefined. */

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function unknownField(body: JsonObject, allowed: readonly string[]): string | undefined {
  return Object.keys(body).find((key) => !allowed.includes(key));
}

export function checkInt(value: unknown, name: string, min: number, max: number): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    return `${name} must be an integer from ${min} to ${max}`;
  }
  return undefined;
}

export function checkEnum(value: unknown, name: string, values: readonly string[]): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !values.includes(value)) return `${name} must be one of ${values.join(', ')}`;
  return undefined;
}

export function checkStringArray(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) return `${name} must be an array of strings`;
  return undefined;
}

export function checkType(value: unknown, name: string, types: readonly ('string' | 'boolean' | 'object')[]): string | undefined {
  if (value === undefined) return undefined;
  const actual = isObject(value) ? 'object' : typeof value;
  if (!(types as readonly string[]).includes(actual)) return `${name} must be ${types.join(' or ')}`;
  return undefined;
}

export function firstProblem(...problems: (string | undefined)[]): string | undefined {
  return problems.find((problem) => problem !== undefined);
}

/** Micro-dollars to a dollar number, without accumulating floating-point error. */
export function dollars(micros: number): number {
  return micros / 1_000_000;
}
