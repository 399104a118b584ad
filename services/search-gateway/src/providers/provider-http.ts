import { Agent, errors, request } from 'undici';
import type { Dispatcher } from 'undici';
import { failure } from './search-provider';
import type { ProviderFailure } from './search-provider';

export interface HttpAnswer {
  readonly ok: true;
  readonly status: number;
  readonly headers: Dispatcher.ResponseData['headers'];
  readonly body: string;
}

export interface HttpCall {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly headers: Record<string, string>;
  readonly body?: string;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

export interface ProviderHttpOptions {
  /** Most open connections to the provider (keep-alive pool). */
  readonly connections?: number;
  /** Larger answers are treated as malformed. */
  readonly maxResponseBytes?: number;
}

const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/**
 * HTTP to one provider over a keep-alive pool. Resolves with the complete answer (any
 * status), or a timeout / connection / malformed failure; it never rejects for the network.
 */
export class ProviderHttp {
  private readonly agent: Agent;

  constructor(options: ProviderHttpOptions = {}) {
    this.agent = new Agent({
      connections: options.connections ?? 128,
      keepAliveTimeout: 10_000,
      keepAliveMaxTimeout: 60_000,
      maxResponseSize: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    });
  }

  async call(call: HttpCall): Promise<HttpAnswer | ProviderFailure> {
    if (isAborted(call.signal)) return failure('connection', 'request cancelled before it was sent');
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, call.timeoutMs);
    const onCallerAbort = (): void => controller.abort();
    call.signal?.addEventListener('abort', onCallerAbort, { once: true });
    try {
      const response = await request(call.url, {
        dispatcher: this.agent,
        method: call.method,
        headers: call.headers,
        body: call.body,
        signal: controller.signal,
      });
      const body = await response.body.text();
      return { ok: true, status: response.statusCode, headers: response.headers, body };
    } catch (error) {
      if (timedOut) return failure('timeout', `provider did not answer within ${call.timeoutMs} ms`);
      if (isAborted(call.signal)) return failure('connection', 'request cancelled');
      if (error instanceof errors.ResponseExceededMaxSizeError) return failure('malformed', 'provider response too large');
      return failure('connection', 'could not reach the provider');
    } finally {
      clearTimeout(timer);
      call.signal?.removeEventListener('abort', onCallerAbort);
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/** The parsed JSON body, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A key we can put in a header: printable ASCII, no spaces at the ends. */
export function isUsableKey(key: string): boolean {
  return /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(key);
}

/** The classification every provider shares for statuses it has no special meaning for. */
export function genericFailure(status: number): ProviderFailure {
  if (status === 429) return failure('rate_limited', 'provider rate limited the request (429)', status);
  if (status >= 500) return failure('server_error', `provider returned ${status}`, status);
  if (status === 401 || status === 403) return failure('bad_key', `provider rejected the key (${status})`, status);
  if (status >= 400) return failure('bad_request', `provider rejected the request (${status})`, status);
  return failure('malformed', `provider returned unexpected status ${status}`, status);
}
