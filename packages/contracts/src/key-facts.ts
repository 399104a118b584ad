import { INTERNAL_HEADERS } from './internal-headers';
import { isModelFenceEntry } from './key-fences';
import { LIMIT_RESETS } from './key-record';
import type { KeyRecord, LimitReset } from './key-record';
import { LIMITS } from './limits';

/**
 * What billing needs of an API key to reserve money for it (research runs, docs/decisions/0062):
 * its credit limit and period, and its model fence. The gateway, which authenticated the key,
 * sends them beside the identity headers on the routes that reserve; billing trusts them only
 * with the internal token, as it trusts the identity (decision 0001).
 */
export interface KeyFacts {
  /** Null: the key has no credit limit. */
  readonly limitMicros: number | null;
  /** Null: a limit over all time (or no limit). */
  readonly limitReset: LimitReset | null;
  /** Null: every model. */
  readonly allowedModels: readonly string[] | null;
}

/** The headers the gateway adds for `record` (none for an unlimited, unfenced key). */
export function keyFactsHeaders(record: Pick<KeyRecord, 'limitMicros' | 'limitReset' | 'allowedModels'>): Record<string, string> {
  const headers: Record<string, string> = {};
  if (record.limitMicros !== null) headers[INTERNAL_HEADERS.keyLimit] = `${record.limitMicros}:${record.limitReset ?? 'none'}`;
  if (record.allowedModels !== undefined) headers[INTERNAL_HEADERS.keyModels] = record.allowedModels.join(',');
  return headers;
}

const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? undefined : value);

/** Reads the key facts billing was sent; null when a header is present but malformed (the caller refuses the request). */
export function parseKeyFacts(headers: Readonly<Record<string, string | string[] | undefined>>): KeyFacts | null {
  const limit = headers[INTERNAL_HEADERS.keyLimit];
  const models = headers[INTERNAL_HEADERS.keyModels];
  let limitMicros: number | null = null;
  let limitReset: LimitReset | null = null;
  if (limit !== undefined) {
    const match = /^(\d{1,16}):(daily|weekly|monthly|none)$/.exec(single(limit) ?? '');
    if (match === null) return null;
    limitMicros = Number(match[1]);
    if (!Number.isSafeInteger(limitMicros)) return null;
    const reset = match[2] ?? 'none';
    limitReset = (LIMIT_RESETS as readonly string[]).includes(reset) ? (reset as LimitReset) : null;
  }
  let allowedModels: string[] | null = null;
  if (models !== undefined) {
    const text = single(models);
    if (text === undefined || text === '') return null;
    allowedModels = text.split(',');
    if (allowedModels.length > LIMITS.allowedModels.max || !allowedModels.every((entry) => isModelFenceEntry(entry))) return null;
  }
  return { limitMicros, limitReset, allowedModels };
}
