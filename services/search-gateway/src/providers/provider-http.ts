import { Agent, errors } from 'undici';
import type { Dispatcher } from 'undici';
import { failure } from './search-provider';
import type { ProviderFailure } from './search-provider';

export interface HttpAnswer {
  readonly ok: true;
  readonly status: number;
  readonly body: string;
}

export interface HttpCall {
  /** Path and query under the provider's base URL, starting with '/'. */
  readonly path: string;
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

/** Why the call was given up before a complete answer (the timer's or the caller's abort). */
class CallAborted extends Error {
  constructor(readonly why: 'timeout' | 'cancelled') {
    super(why);
  }
}

/**
 * HTTP to one provider over a keep-alive pool. Resolves with the complete answer (any
 * status), or a timeout / connection / malformed failure; it never rejects for the network.
 *
 * Built on undici's dispatch handler rather than `request()`: the answer is collected from
 * its chunks, with no body stream, no AbortController and no header object per call (the
 * adapters read only the status and the body). The timeout covers the whole call (queueing,
 * connect, headers, body) and aborts it.
 */
export class ProviderHttp {
  private readonly agent: Agent;
  private readonly origin: string;
  private readonly basePath: string;

  /** `baseUrl`: the provider's base (origin and an optional path prefix, no trailing slash needed). */
  constructor(baseUrl: string, options: ProviderHttpOptions = {}) {
    const url = new URL(baseUrl);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.agent = new Agent({
      connections: options.connections ?? 128,
      keepAliveTimeout: 10_000,
      keepAliveMaxTimeout: 60_000,
      maxResponseSize: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    });
  }

  call(call: HttpCall): Promise<HttpAnswer | ProviderFailure> {
    if (call.signal?.aborted === true) return Promise.resolve(failure('connection', 'request cancelled before it was sent'));
    return new Promise((resolve) => {
      const exchange = new Exchange(call, resolve);
      this.agent.dispatch(
        { origin: this.origin, path: this.basePath + call.path, method: call.method, headers: call.headers, body: call.body ?? null },
        exchange,
      );
    });
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** One call's dispatch handler: collects the answer, owns the timer, settles exactly once. */
class Exchange implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private aborted: CallAborted | null = null;
  private status = 0;
  private readonly chunks: Buffer[] = [];
  private done = false;
  private readonly timer: NodeJS.Timeout;
  private readonly onCallerAbort: (() => void) | null = null;

  constructor(private readonly call: HttpCall, private readonly resolve: (outcome: HttpAnswer | ProviderFailure) => void) {
    this.timer = setTimeout(() => this.abort(new CallAborted('timeout')), call.timeoutMs);
    if (call.signal !== undefined) {
      const onCallerAbort = (): void => this.abort(new CallAborted('cancelled'));
      this.onCallerAbort = onCallerAbort;
      call.signal.addEventListener('abort', onCallerAbort, { once: true });
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Given up while it waited for a connection: stop it before it is sent.
    if (this.aborted !== null) controller.abort(this.aborted);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    this.status = statusCode;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    const body = this.chunks.length === 1 ? (this.chunks[0] as Buffer).toString('utf8') : Buffer.concat(this.chunks).toString('utf8');
    this.settle({ ok: true, status: this.status, body });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.settle(this.failureOf(error));
  }

  private abort(reason: CallAborted): void {
    if (this.done || this.aborted !== null) return;
    this.aborted = reason;
    // Answer now; undici reports the abort to onResponseError later (a no-op by then).
    this.settle(this.failureOf(reason));
    this.controller?.abort(reason);
  }

  private failureOf(error: Error): ProviderFailure {
    const aborted = this.aborted ?? (error instanceof CallAborted ? error : null);
    if (aborted?.why === 'timeout') return failure('timeout', `provider did not answer within ${this.call.timeoutMs} ms`);
    if (aborted?.why === 'cancelled') return failure('connection', 'request cancelled');
    if (error instanceof errors.ResponseExceededMaxSizeError) return failure('malformed', 'provider response too large');
    return failure('connection', 'could not reach the provider');
  }

  private settle(outcome: HttpAnswer | ProviderFailure): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    if (this.onCallerAbort !== null) this.call.signal?.removeEventListener('abort', this.onCallerAbort);
    this.resolve(outcome);
  }
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
