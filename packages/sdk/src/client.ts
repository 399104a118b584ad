import { readEnv } from './env.js';
import { ResearchWaitTimeoutError, SearchGatewayConnectionError, SearchGatewayError, SearchGatewayTimeoutError } from './errors.js';
import { DEFAULT_MAX_RETRIES, isRetryableStatus, parseRetryAfter, retryDelayMs } from './retry.js';
import type {
  ApiKey,
  AuditEntry,
  AuditLogPage,
  AuditLogQuery,
  ApiKeyList,
  ApiKeyResponse,
  CheckoutRequest,
  CheckoutSession,
  CreateKeyRequest,
  CreatedApiKey,
  Credits,
  DeletedApiKey,
  DeletedProviderKey,
  EndpointKey,
  ExtractRequest,
  ExtractResponse,
  KeyInfo,
  ModelList,
  PageQuery,
  Pricing,
  Provider,
  ProviderKeyList,
  ProviderKeyResponse,
  FanoutSearchResponse,
  SearchAnswer,
  ResearchListQuery,
  ResearchRequest,
  ResearchRun,
  ResearchRunList,
  ResearchRunSummary,
  SearchRequest,
  SearchResponse,
  ServiceStatus,
  UpdateKeyRequest,
  Usage,
  UsageQuery,
} from './types.js';

export const DEFAULT_BASE_URL = 'http://localhost:8080';
/** Per attempt. A search tries up to 10 models, each with a 15 s provider timeout. */
export const DEFAULT_TIMEOUT_MS = 120_000;

/** What the client needs of `fetch`. */
export type FetchLike = (url: string, init: {
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}) => Promise<Response>;

export interface SearchGatewayOptions {
  /** An API key (`svc-…`). Default: the environment variable `SVC_API_KEY`. */
  apiKey?: string;
  /**
   * A management key (`svc-mgmt-…`) for the management endpoints (keys, provider keys,
   * checkout). Default: `SVC_MANAGEMENT_KEY`. Without one, those endpoints get `apiKey`
   * (so a management key passed as `apiKey` works for them too).
   */
  managementKey?: string;
  /** Default: `SVC_BASE_URL`, else `http://localhost:8080`. */
  baseUrl?: string;
  /** Retries after the first attempt; 0 disables retrying. Default 2. */
  maxRetries?: number;
  /** Per attempt, in milliseconds, until the whole body has arrived. Default 120,000. */
  timeoutMs?: number;
  /** A custom fetch. Default: the platform's `fetch`. */
  fetch?: FetchLike;
  /** How to wait before a retry (for tests). Must reject when `signal` aborts. */
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  /** A number in [0, 1) for the jitter (for tests). Default `Math.random`. */
  random?: () => number;
  /** The clock `research.wait` measures `maxWaitMs` with, in milliseconds (for tests). Default `Date.now`. */
  now?: () => number;
}

export interface RequestOptions {
  /** Aborts the call, retries and waits included; an aborted call is never retried. */
  signal?: AbortSignal;
  /** Overrides the client's per-attempt timeout. */
  timeoutMs?: number;
  /** Overrides the client's retry count. */
  maxRetries?: number;
}

export interface SearchOptions extends RequestOptions {
  /**
   * Sent as `Idempotency-Key` on every attempt of this search (1..255 printable ASCII
   * characters). Default: a new random UUID per call.
   */
  idempotencyKey?: string;
}

/** Which key an endpoint takes. */
type Auth = EndpointKey;

interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  auth: Auth;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  idempotencyKey?: string;
}

/** Marks the abort reason of an attempt's own timer. */
class AttemptTimeout {}

/**
 * A client of the search gateway's public API. One method per endpoint; every method
 * resolves to the parsed JSON body and rejects with `SearchGatewayError` on any non-2xx.
 */
export class SearchGateway {
  readonly baseUrl: string;
  readonly maxRetries: number;
  readonly timeoutMs: number;
  /** API keys of the account (management key). */
  readonly keys: KeysApi;
  /** The account's own provider keys (management key). */
  readonly providerKeys: ProviderKeysApi;
  /** The account's audit log (management key). */
  readonly auditLog: AuditLogApi;
  /** Research runs with a hard cap (created with an API key; read and cancelled with either key). */
  readonly research: ResearchApi;
  readonly #apiKey: string | undefined;
  readonly #managementKey: string | undefined;
  readonly #fetch: FetchLike;
  readonly #sleep: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  readonly #random: () => number;

  constructor(options: SearchGatewayOptions = {}) {
    this.#apiKey = options.apiKey ?? readEnv('SVC_API_KEY');
    this.#managementKey = options.managementKey ?? readEnv('SVC_MANAGEMENT_KEY');
    this.baseUrl = normaliseBaseUrl(options.baseUrl ?? readEnv('SVC_BASE_URL') ?? DEFAULT_BASE_URL);
    this.maxRetries = checkCount('maxRetries', options.maxRetries ?? DEFAULT_MAX_RETRIES);
    this.timeoutMs = checkPositive('timeoutMs', options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const custom = options.fetch;
    if (custom !== undefined) {
      this.#fetch = (url, init) => custom(url, init);
    } else if (typeof globalThis.fetch === 'function') {
      this.#fetch = (url, init) => globalThis.fetch(url, init);
    } else {
      throw new TypeError('this runtime has no fetch; pass one as the fetch option');
    }
    this.#sleep = options.sleep ?? sleep;
    this.#random = options.random ?? Math.random;
    this.keys = new KeysApi((call, opts) => this.#request(call, opts));
    this.providerKeys = new ProviderKeysApi((call, opts) => this.#request(call, opts));
    this.auditLog = new AuditLogApi((call, opts) => this.#request(call, opts));
    this.research = new ResearchApi((call, opts) => this.#request(call, opts), (ms, signal) => this.#wait(ms, signal), options.now ?? Date.now);
  }

  /**
   * POST /v1/search (API key). Carries an `Idempotency-Key`, the same on every retry. With
   * `strategy: "fanout"` the answer is a FanoutSearchResponse (the models' results merged), else a
   * SearchResponse (the first model that answered).
   */
  search(body: SearchRequest & { strategy: 'fanout' }, options?: SearchOptions): Promise<FanoutSearchResponse>;
  search(body: SearchRequest & { strategy?: 'fallback' }, options?: SearchOptions): Promise<SearchResponse>;
  search(body: SearchRequest, options?: SearchOptions): Promise<SearchAnswer>;
  search(body: SearchRequest, options: SearchOptions = {}): Promise<SearchAnswer> {
    const idempotencyKey = options.idempotencyKey ?? randomUuid();
    return this.#request({ method: 'POST', path: '/v1/search', auth: 'api', body, idempotencyKey }, options);
  }

  /**
   * POST /v1/extract (API key): the text of known pages, with fallback per URL over the extract
   * models named; charged per URL that came back. Carries an `Idempotency-Key`, the same on every retry.
   */
  extract(body: ExtractRequest, options: SearchOptions = {}): Promise<ExtractResponse> {
    const idempotencyKey = options.idempotencyKey ?? randomUuid();
    return this.#request({ method: 'POST', path: '/v1/extract', auth: 'api', body, idempotencyKey }, options);
  }

  /** GET /v1/models (public). */
  models(options: RequestOptions = {}): Promise<ModelList> {
    return this.#request({ method: 'GET', path: '/v1/models', auth: 'none' }, options);
  }

  /** GET /v1/status (public): every provider's breaker and every model's health. */
  status(options: RequestOptions = {}): Promise<ServiceStatus> {
    return this.#request({ method: 'GET', path: '/v1/status', auth: 'none' }, options);
  }

  /** GET /v1/credits/pricing (public). */
  pricing(options: RequestOptions = {}): Promise<Pricing> {
    return this.#request({ method: 'GET', path: '/v1/credits/pricing', auth: 'none' }, options);
  }

  /** GET /v1/credits (either key). */
  credits(options: RequestOptions = {}): Promise<Credits> {
    return this.#request({ method: 'GET', path: '/v1/credits', auth: 'either' }, options);
  }

  /** GET /v1/key (either key): the calling key itself. */
  key(options: RequestOptions = {}): Promise<KeyInfo> {
    return this.#request({ method: 'GET', path: '/v1/key', auth: 'either' }, options);
  }

  /** GET /v1/usage (either key; an API key sees only its own usage). */
  usage(query: UsageQuery = {}, options: RequestOptions = {}): Promise<Usage> {
    const { from, to, group_by, key_id } = query;
    return this.#request({ method: 'GET', path: '/v1/usage', auth: 'either', query: { from, to, group_by, key_id } }, options);
  }

  /** POST /v1/credits/checkout (management key): a payment link for buying credits. */
  checkout(body: CheckoutRequest, options: RequestOptions = {}): Promise<CheckoutSession> {
    return this.#request({ method: 'POST', path: '/v1/credits/checkout', auth: 'management', body }, options);
  }

  async #request<T>(call: Call, options: RequestOptions): Promise<T> {
    const maxRetries = checkCount('maxRetries', options.maxRetries ?? this.maxRetries);
    const timeoutMs = checkPositive('timeoutMs', options.timeoutMs ?? this.timeoutMs);
    const signal = options.signal;
    const url = this.#url(call);
    const headers: Record<string, string> = { accept: 'application/json' };
    const secret = this.#secretFor(call.auth);
    if (secret !== undefined) headers.authorization = `Bearer ${secret}`;
    if (call.idempotencyKey !== undefined) headers['idempotency-key'] = call.idempotencyKey;
    let body: string | undefined;
    if (call.body !== undefined) {
      body = JSON.stringify(call.body);
      headers['content-type'] = 'application/json';
    }
    // A transport failure leaves open whether the server acted. Retry it only where a
    // repeat cannot act twice: every method but POST, and a POST with an Idempotency-Key.
    const repeatable = call.method !== 'POST' || call.idempotencyKey !== undefined;
    for (let retry = 0; ; retry += 1) {
      throwIfAborted(signal);
      let response: Response;
      let text: string;
      try {
        ({ response, text } = await this.#attempt(url, { method: call.method, headers, body }, timeoutMs, signal));
      } catch (cause) {
        if (signal?.aborted === true) throw abortReason(signal);
        const failure = cause instanceof AttemptTimeout
          ? new SearchGatewayTimeoutError(timeoutMs)
          : new SearchGatewayConnectionError(`could not get an answer from ${this.baseUrl}: ${describe(cause)}`, { cause });
        if (!repeatable || retry >= maxRetries) throw failure;
        await this.#wait(retryDelayMs(retry, null, this.#random()), signal);
        continue;
      }
      if (response.status >= 200 && response.status < 300) {
        const parsed = parseJson(text);
        if (parsed.ok) return parsed.value as T;
        throw new SearchGatewayError({ status: response.status, body: text, headers: response.headers, retryAfter: null });
      }
      const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
      const parsed = parseJson(text);
      const error = new SearchGatewayError({ status: response.status, body: parsed.ok ? parsed.value : text, headers: response.headers, retryAfter });
      if (!isRetryableStatus(response.status) || retry >= maxRetries) throw error;
      await this.#wait(retryDelayMs(retry, retryAfter, this.#random()), signal);
    }
  }

  /** One HTTP exchange, the whole body read, within `timeoutMs`. */
  async #attempt(
    url: string,
    init: { method: string; headers: Record<string, string>; body: string | undefined },
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<{ response: Response; text: string }> {
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(abortReason(signal));
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => controller.abort(new AttemptTimeout()), timeoutMs);
    try {
      const request = { method: init.method, headers: init.headers, signal: controller.signal, ...(init.body === undefined ? {} : { body: init.body }) };
      const response = await this.#fetch(url, request);
      const text = await response.text();
      return { response, text };
    } catch (error) {
      // The timer's own reason, whatever the fetch implementation wraps it in.
      if (controller.signal.aborted && controller.signal.reason instanceof AttemptTimeout) throw controller.signal.reason;
      throw error;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  async #wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
    await this.#sleep(ms, signal);
    throwIfAborted(signal);
  }

  #secretFor(auth: Auth): string | undefined {
    switch (auth) {
      case 'none':
        return undefined;
      case 'api':
        return this.#apiKey;
      case 'management':
        return this.#managementKey ?? this.#apiKey;
      case 'either':
        return this.#apiKey ?? this.#managementKey;
    }
  }

  #url(call: Call): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) params.set(name, String(value));
    }
    const query = params.toString();
    return `${this.baseUrl}${call.path}${query === '' ? '' : `?${query}`}`;
  }
}

type Requester = <T>(call: Call, options: RequestOptions) => Promise<T>;

/** /v1/keys: API keys of the account. Management key. */
export class KeysApi {
  readonly #request: Requester;

  constructor(request: Requester) {
    this.#request = request;
  }

  /** GET /v1/keys: one page, newest first. */
  list(query: PageQuery = {}, options: RequestOptions = {}): Promise<ApiKeyList> {
    return this.#request({ method: 'GET', path: '/v1/keys', auth: 'management', query: { limit: query.limit, cursor: query.cursor } }, options);
  }

  /** Every key, page after page (following `next_cursor`); `limit` is the page size. */
  async *iterate(query: PageQuery = {}, options: RequestOptions = {}): AsyncGenerator<ApiKey, void, undefined> {
    yield* everyPage((cursor) => this.list({ limit: query.limit, cursor }, options), query.cursor);
  }

  /** GET /v1/keys/{id} */
  get(id: string, options: RequestOptions = {}): Promise<ApiKeyResponse> {
    return this.#request({ method: 'GET', path: `/v1/keys/${encodeURIComponent(id)}`, auth: 'management' }, options);
  }

  /** POST /v1/keys: the answer carries the secret, shown only here. */
  create(body: CreateKeyRequest = {}, options: RequestOptions = {}): Promise<CreatedApiKey> {
    return this.#request({ method: 'POST', path: '/v1/keys', auth: 'management', body }, options);
  }

  /** PATCH /v1/keys/{id}: changes the fields present. */
  update(id: string, body: UpdateKeyRequest, options: RequestOptions = {}): Promise<ApiKeyResponse> {
    return this.#request({ method: 'PATCH', path: `/v1/keys/${encodeURIComponent(id)}`, auth: 'management', body }, options);
  }

  /** PATCH /v1/keys/{id} `{"disabled": true}`: the key is refused at once. */
  disable(id: string, options: RequestOptions = {}): Promise<ApiKeyResponse> {
    return this.update(id, { disabled: true }, options);
  }

  /** PATCH /v1/keys/{id} `{"disabled": false}` */
  enable(id: string, options: RequestOptions = {}): Promise<ApiKeyResponse> {
    return this.update(id, { disabled: false }, options);
  }

  /** DELETE /v1/keys/{id}: for good. */
  delete(id: string, options: RequestOptions = {}): Promise<DeletedApiKey> {
    return this.#request({ method: 'DELETE', path: `/v1/keys/${encodeURIComponent(id)}`, auth: 'management' }, options);
  }
}

/** /v1/provider-keys: the account's own provider keys (BYOK). Management key. */
export class ProviderKeysApi {
  readonly #request: Requester;

  constructor(request: Requester) {
    this.#request = request;
  }

  /** GET /v1/provider-keys */
  list(options: RequestOptions = {}): Promise<ProviderKeyList> {
    return this.#request({ method: 'GET', path: '/v1/provider-keys', auth: 'management' }, options);
  }

  /** GET /v1/provider-keys/{provider} */
  get(provider: Provider, options: RequestOptions = {}): Promise<ProviderKeyResponse> {
    return this.#request({ method: 'GET', path: `/v1/provider-keys/${encodeURIComponent(provider)}`, auth: 'management' }, options);
  }

  /** PUT /v1/provider-keys/{provider} `{"key"}`: stores or replaces the provider's key. */
  set(provider: Provider, key: string, options: RequestOptions = {}): Promise<ProviderKeyResponse> {
    return this.#request({ method: 'PUT', path: `/v1/provider-keys/${encodeURIComponent(provider)}`, auth: 'management', body: { key } }, options);
  }

  /** DELETE /v1/provider-keys/{provider} */
  delete(provider: Provider, options: RequestOptions = {}): Promise<DeletedProviderKey> {
    return this.#request({ method: 'DELETE', path: `/v1/provider-keys/${encodeURIComponent(provider)}`, auth: 'management' }, options);
  }
}

/** Every item of a paged list, page after page from `cursor` (following `next_cursor` until there is none). */
async function* everyPage<T>(page: (cursor: string | undefined) => Promise<{ readonly data: readonly T[]; readonly next_cursor?: string | null }>, cursor: string | undefined): AsyncGenerator<T, void, undefined> {
  let next = cursor;
  do {
    const current = await page(next);
    yield* current.data;
    next = current.next_cursor ?? undefined;
  } while (next !== undefined);
}

function normaliseBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`baseUrl is not a URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`baseUrl must be http or https: ${JSON.stringify(value)}`);
  if (url.search !== '' || url.hash !== '') throw new TypeError('baseUrl must not have a query or a fragment');
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

function checkCount(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0) throw new RangeError(`${name} must be a whole number of at least 0`);
  return value;
}

function checkPositive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a number above 0`);
  return value;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.trim() === '') return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

function abortReason(signal: AbortSignal | undefined): unknown {
  const reason: unknown = signal?.reason;
  return reason ?? new DOMException('This operation was aborted', 'AbortError');
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw abortReason(signal);
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  const code = typeof cause === 'object' && cause !== null && typeof (cause as { code?: unknown }).code === 'string' ? ` (${(cause as { code: string }).code})` : '';
  return `${error.message}${code}`;
}

/** Waits `ms`; rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A version 4 UUID from the platform's cryptographic random source. */
export function randomUuid(): string {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string; getRandomValues?: <A extends Uint8Array>(array: A) => A } }).crypto;
  if (typeof crypto?.randomUUID === 'function') return crypto.randomUUID();
  if (typeof crypto?.getRandomValues === 'function') {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
    bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
    const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  throw new TypeError('this runtime has no crypto.getRandomValues; pass idempotencyKey to search');
}

/** /v1/audit-log: who changed what in the account, newest first. Management key. */
export class AuditLogApi {
  readonly #request: Requester;

  constructor(request: Requester) {
    this.#request = request;
  }

  /** GET /v1/audit-log: one page; the filters all must hold. */
  list(query: AuditLogQuery = {}, options: RequestOptions = {}): Promise<AuditLogPage> {
    const { limit, cursor, action, actor_kind, actor_id, target_id, from, to } = query;
    return this.#request({ method: 'GET', path: '/v1/audit-log', auth: 'management', query: { limit, cursor, action, actor_kind, actor_id, target_id, from, to } }, options);
  }

  /** Every entry matching the filters, page after page (following `next_cursor`). */
  async *iterate(query: AuditLogQuery = {}, options: RequestOptions = {}): AsyncGenerator<AuditEntry, void, undefined> {
    yield* everyPage((cursor) => this.list({ ...query, cursor }, options), query.cursor);
  }
}

/** How `research.wait` polls: from `intervalMs`, each wait half as long again, up to `maxIntervalMs`, for at most `maxWaitMs` in all. */
export interface ResearchWaitOptions extends RequestOptions {
  /** The first wait between reads, in milliseconds (at least 500). Default 2,000. */
  intervalMs?: number;
  /** The longest wait between reads (at least `intervalMs`). Default 15,000. */
  maxIntervalMs?: number;
  /** Give up after this long (then `ResearchWaitTimeoutError`; the run goes on). Default 600,000 (10 minutes); at most 7,200,000. */
  maxWaitMs?: number;
}

export const RESEARCH_WAIT_DEFAULTS = { intervalMs: 2_000, maxIntervalMs: 15_000, maxWaitMs: 600_000, maxMaxWaitMs: 7_200_000, minIntervalMs: 500 } as const;

/** /v1/research: research runs with a hard cap. */
export class ResearchApi {
  readonly #request: Requester;
  readonly #wait: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  readonly #now: () => number;

  constructor(request: Requester, wait: (ms: number, signal: AbortSignal | undefined) => Promise<void>, now: () => number) {
    this.#request = request;
    this.#wait = wait;
    this.#now = now;
  }

  /**
   * POST /v1/research (API key): reserves the cap and answers at once with the queued run.
   * Carries an `Idempotency-Key`, the same on every retry, so a retried create never starts two runs.
   */
  create(body: ResearchRequest, options: SearchOptions = {}): Promise<ResearchRun> {
    const idempotencyKey = options.idempotencyKey ?? randomUuid();
    return this.#request({ method: 'POST', path: '/v1/research', auth: 'api', body, idempotencyKey }, options);
  }

  /** GET /v1/research/{id}: the run, with its output and sources once completed. */
  get(id: string, options: RequestOptions = {}): Promise<ResearchRun> {
    return this.#request({ method: 'GET', path: `/v1/research/${encodeURIComponent(id)}`, auth: 'either' }, options);
  }

  /** GET /v1/research: one page, newest first (runs without their output). */
  list(query: ResearchListQuery = {}, options: RequestOptions = {}): Promise<ResearchRunList> {
    return this.#request({ method: 'GET', path: '/v1/research', auth: 'either', query: { limit: query.limit, cursor: query.cursor, status: query.status } }, options);
  }

  /** Every run matching the query, page after page (following `next_cursor`). */
  async *iterate(query: ResearchListQuery = {}, options: RequestOptions = {}): AsyncGenerator<ResearchRunSummary, void, undefined> {
    yield* everyPage((cursor) => this.list({ ...query, cursor }, options), query.cursor);
  }

  /** POST /v1/research/{id}/cancel: the run as it is then (a run that had ended comes back unchanged). */
  cancel(id: string, options: RequestOptions = {}): Promise<ResearchRun> {
    return this.#request({ method: 'POST', path: `/v1/research/${encodeURIComponent(id)}/cancel`, auth: 'either' }, options);
  }

  /**
   * Reads the run until it has ended (completed, failed or cancelled) and answers it; a bounded
   * poll: waits grow from `intervalMs` to `maxIntervalMs`, and after `maxWaitMs` it rejects with
   * `ResearchWaitTimeoutError` (the run goes on). Each read is retried as any GET is.
   */
  async wait(id: string, options: ResearchWaitOptions = {}): Promise<ResearchRun> {
    const { intervalMs = RESEARCH_WAIT_DEFAULTS.intervalMs, maxWaitMs = RESEARCH_WAIT_DEFAULTS.maxWaitMs } = options;
    const maxIntervalMs = options.maxIntervalMs ?? Math.max(intervalMs, RESEARCH_WAIT_DEFAULTS.maxIntervalMs);
    if (!Number.isFinite(intervalMs) || intervalMs < RESEARCH_WAIT_DEFAULTS.minIntervalMs) throw new RangeError(`intervalMs must be at least ${RESEARCH_WAIT_DEFAULTS.minIntervalMs}`);
    if (!Number.isFinite(maxIntervalMs) || maxIntervalMs < intervalMs) throw new RangeError('maxIntervalMs must be at least intervalMs');
    if (!Number.isFinite(maxWaitMs) || maxWaitMs <= 0 || maxWaitMs > RESEARCH_WAIT_DEFAULTS.maxMaxWaitMs) {
      throw new RangeError(`maxWaitMs must be above 0 and at most ${RESEARCH_WAIT_DEFAULTS.maxMaxWaitMs}`);
    }
    const deadline = this.#now() + maxWaitMs;
    let delay = intervalMs;
    for (;;) {
      const run = await this.get(id, options);
      if (run.status === 'completed' || run.status === 'failed' || run.status === 'cancelled') return run;
      const left = deadline - this.#now();
      if (left <= 0) throw new ResearchWaitTimeoutError(run, maxWaitMs);
      await this.#wait(Math.min(delay, left), options.signal);
      delay = Math.min(maxIntervalMs, Math.round(delay * 1.5));
    }
  }
}
