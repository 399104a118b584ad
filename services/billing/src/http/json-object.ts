import { AppError } from '@svc/errors';

/** The body as a plain JSON object with only `allowed` fields, else 400 naming the problem. */
export function jsonObject(body: unknown, allowed: readonly string[], { optional = false } = {}): Record<string, unknown> {
  if (body === undefined || body === null) {
    if (optional) return {};
    throw new AppError('invalid_request', 'body must be a JSON object');
  }
  if (typeof body !== 'object' || Array.isArray(body)) throw new AppError('invalid_request', 'body must be a JSON object');
  const record = body as Record<string, unknown>;
  for (const field of Object.keys(record)) {
    if (!allowed.includes(field)) throw new AppError('invalid_request', `unknown field "${field}"`);
  }
  return record;
}

/** Query parameters: only `allowed` names, each at most once. */
export function queryParams(query: unknown, allowed: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  if (query === undefined || query === null || typeof query !== 'object') return out;
  for (const [name, value] of Object.entries(query as Record<string, unknown>)) {
    if (!allowed.includes(name)) throw new AppError('invalid_request', `unknown query parameter "${name}"`);
    if (typeof value !== 'string') throw new AppError('invalid_request', `query parameter "${name}" must be given once`);
    out[name] = value;
  }
  return out;
}
