import { isModelId, isProvider } from './catalog';
import type { ModelSpec } from './catalog';
import { findResearchModel } from './research';

/**
 * Key fences (docs/api.md, "Key fences"): an API key may be limited to some models or
 * providers (`allowed_models`) and to some client addresses (`allowed_ips`). Absent on a
 * record: the key is not fenced. The bounds of both lists are LIMITS.allowedModels and
 * LIMITS.allowedIps (limits.ts).
 */

/** The `error` of an attempt skipped because the key may not use its model. */
export const MODEL_NOT_ALLOWED_MESSAGE = 'model not allowed for this key';

/** An entry of `allowed_models`: a catalog model id (of any kind: search, extract or research), or `<provider>/*` for every model of a provider. */
export function isModelFenceEntry(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  if (value.endsWith('/*')) return isProvider(value.slice(0, -2));
  return isModelId(value) || findResearchModel(value) !== undefined;
}

/** Whether a fence's entries let a key use `model` (a record without the fence allows every model). */
export function modelAllowed(allowed: readonly string[], model: Pick<ModelSpec, 'id' | 'provider'>): boolean {
  for (const entry of allowed) {
    if (entry === model.id) return true;
    if (entry.length === model.provider.length + 2 && entry.endsWith('/*') && entry.startsWith(model.provider)) return true;
  }
  return false;
}
