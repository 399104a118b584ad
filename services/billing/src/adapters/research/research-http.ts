import { describeError } from '@svc/errors';
import type { CallFailure } from './research-provider';

/** One research provider's HTTP settings (RESEARCH_<PROVIDER>_*; the same keys and base URLs as the gateway's search adapters). */
export interface ResearchHttpSettings {
  baseUrl: string;
  apiKey: string;
  /** One call's bound (RESEARCH_CALL_TIMEOUT_MS). */
  timeoutMs: number;
}

export type JsonAnswer = { ok: true; status: number; body: unknown } | { ok: false; failure: CallFailure };

/** Seconds or an HTTP date in Retry-After, as milliseconds (null when absent or unreadable). */
function retryAfterMs(header: string | null): number | null {
  if (header === null) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, 600_000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, Math.min(at - Date.now(), 600_000));
}

/**
 * One call to a provider, its answer as JSON: a 2xx is the answer; 429 and 5xx, a timeout or an
 * unreachable host are passing (`retry`, with Retry-After when sent); any other 4xx is a refusal
 * of the request as it is. `describe` reads the provider's own error shape. Never logs or
 * returns the key.
 */
export async function callJson(
  settings: ResearchHttpSettings,
  request: { method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: unknown },
  describe: (status: number, body: unknown) => string,
): Promise<JsonAnswer> {
  let response: Response;
  try {
    response = await fetch(`${settings.baseUrl}${request.path}`, {
      method: request.method,
      headers: { accept: 'application/json', ...(request.body === undefined ? {} : { 'content-type': 'application/json' }), ...request.headers },
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
      signal: AbortSignal.timeout(settings.timeoutMs),
    });
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
    return { ok: false, failure: { kind: 'retry', error: timedOut ? `no answer within ${settings.timeoutMs} ms` : `unreachable (${describeError(error)})`, retryAfterMs: null } };
  }
  const text = await response.text().catch(() => '');
  let body: unknown;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    body = null;
  }
  if (response.status >= 200 && response.status < 300) {
    if (body === null || typeof body !== 'object') return { ok: false, failure: { kind: 'retry', error: `malformed answer (status ${response.status})`, retryAfterMs: null } };
    return { ok: true, status: response.status, body };
  }
  const error = `${response.status} ${describe(response.status, body)}`.trim();
  if (response.status === 429 || response.status >= 500) return { ok: false, failure: { kind: 'retry', error, retryAfterMs: retryAfterMs(response.headers.get('retry-after')) } };
  return { ok: false, failure: { kind: 'refused', error } };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A short, printable piece of a provider's message (never more than 200 characters). */
export function shortText(value: unknown): string {
  return typeof value === 'string' ? value.replace(/[^\x20-\x7e]/g, ' ').slice(0, 200) : '';
}
