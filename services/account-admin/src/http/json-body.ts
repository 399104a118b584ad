import { AppError } from '@svc/errors';

/**
 * Request bodies arrive as raw text (one catch-all content parser), so every problem is
 * our 400 invalid_request naming it rather than a framework error. An empty body is `{}`.
 */
export function parseJsonObject(raw: unknown): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'string') throw new AppError('invalid_request', 'body must be a JSON object');
  if (raw.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new AppError('invalid_request', 'body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AppError('invalid_request', 'body must be a JSON object');
  }
  return value as Record<string, unknown>;
}

/** 400 naming the first field that is not in `allowed`. */
export function rejectUnknownFields(body: Record<string, unknown>, allowed: readonly string[]): void {
  for (const field of Object.keys(body)) {
    if (!allowed.includes(field)) throw new AppError('invalid_request', `unknown field "${field}"`);
  }
}

export function has(body: Record<string, unknown>, field: string): boolean {
  return Object.prototype.hasOwnProperty.call(body, field);
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;

/** An RFC 3339 timestamp with a real calendar date and time, as epoch ms; null if it is not one. */
export function parseRfc3339(text: string): number | null {
  const m = RFC3339.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return null;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return null;
  const ms = Date.parse(text.toUpperCase());
  return Number.isFinite(ms) ? ms : null;
}
