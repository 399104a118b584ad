import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseQuery } from './directives';
import type { SimProvider } from './directives';
import type { StatsCounter } from './stats';

/** A reply in a provider's own wire format. */
export interface SimReply {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

export type FailureKind = 'badkey' | 'error500' | 'error429' | 'quota' | 'directive';

/** How a provider fails as a whole: never answers, 500, or 429 on every call. */
export const OUTAGE_KINDS = ['timeout', 'error500', 'error429'] as const;
export type OutageKind = (typeof OUTAGE_KINDS)[number];

export type Validation<P> =
  | { readonly ok: true; readonly query: string; readonly params: P }
  | { readonly ok: false; readonly reply: SimReply };

/** What makes one provider: its auth, its parameters, its errors and its success body. */
export interface ProviderSpec<P> {
  readonly provider: SimProvider;
  authorize(request: FastifyRequest): boolean;
  validate(request: FastifyRequest): Validation<P>;
  /** The provider's own error reply; `detail` only for `directive` problems. */
  failure(kind: FailureKind, detail: string): SimReply;
  success(params: P, query: string, empty: boolean, startedAt: number): SimReply;
}

/** One authorized provider request as it arrived (no headers: never a key). */
export interface SeenRequest {
  readonly provider: SimProvider;
  readonly path: string;
  /** Brave: the query string's parameters; Exa and Tavily: the JSON body. */
  readonly params: unknown;
}

/** How many requests GET /_sim/requests keeps, newest last. */
const SEEN_CAP = 200;

/** Shared by every route of one simulator instance. */
export class SimContext {
  /** The latest authorized requests, for tests that check what an upstream was asked. */
  readonly seen: SeenRequest[] = [];
  /** Callbacks that release every paused or hanging request (run when the server closes). */
  private readonly waiters = new Set<() => void>();
  private readonly counted = new WeakSet<FastifyRequest>();
  /** A provider failing as a whole (PUT /_sim/outage/:provider): every call answers so, whatever its key and query, until DELETE. */
  readonly outages = new Map<SimProvider, OutageKind>();
  /** Queries (by provider) that a `failfirst` directive has failed once already. */
  private readonly failedOnce = new Set<string>();

  constructor(readonly stats: StatsCounter, readonly baseLatencyMs: number) {}

  begin(request: FastifyRequest, provider: SimProvider): void {
    this.counted.add(request);
    this.stats.begin(provider);
  }

  end(request: FastifyRequest, provider: SimProvider): void {
    if (this.counted.delete(request)) this.stats.end(provider);
  }

  /** True the first time `query` reaches `provider` (then false: that first request fails). */
  firstOf(provider: SimProvider, query: string): boolean {
    const key = `${provider}\n${query}`;
    if (this.failedOnce.has(key)) return false;
    this.failedOnce.add(key);
    return true;
  }

  record(request: FastifyRequest, provider: SimProvider): void {
    const params = provider === 'brave' ? request.query : request.body;
    this.seen.push({ provider, path: request.url.split('?')[0] ?? request.url, params });
    if (this.seen.length > SEEN_CAP) this.seen.splice(0, this.seen.length - SEEN_CAP);
  }

  releaseAll(): void {
    for (const release of [...this.waiters]) release();
  }

  /** Resolves true after `ms`, or false as soon as the client goes away or the server closes. */
  pause(reply: FastifyReply, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      if (reply.raw.destroyed) {
        resolve(false);
        return;
      }
      const finish = (value: boolean): void => {
        clearTimeout(timer);
        reply.raw.off('close', onClose);
        this.waiters.delete(onClose);
        resolve(value);
      };
      const onClose = (): void => finish(false);
      const timer = setTimeout(() => finish(true), ms);
      reply.raw.once('close', onClose);
      this.waiters.add(onClose);
    });
  }

  /** Never answers: keeps the socket open until the client goes away or the server closes. */
  async hang(reply: FastifyReply): Promise<void> {
    reply.hijack();
    await new Promise<void>((resolve) => {
      if (reply.raw.destroyed) {
        resolve();
        return;
      }
      const onClose = (): void => {
        reply.raw.off('close', onClose);
        this.waiters.delete(onClose);
        resolve();
      };
      reply.raw.once('close', onClose);
      this.waiters.add(onClose);
    });
    if (!reply.raw.destroyed) reply.raw.destroy();
  }
}

export function sendReply(reply: FastifyReply, answer: SimReply): FastifyReply {
  reply.code(answer.status);
  for (const [name, value] of Object.entries(answer.headers ?? {})) reply.header(name, value);
  return reply.send(answer.body);
}

/** A body that claims to be JSON and is not. */
const MALFORMED_BODY = '{"results": [{"title": "cut off mid-str';

/** The route handler for one provider endpoint: auth, parameters, then the query's directive. */
export function simulatedHandler<P>(spec: ProviderSpec<P>, context: SimContext) {
  const gone = (request: FastifyRequest, reply: FastifyReply): undefined => {
    reply.hijack();
    if (!reply.raw.destroyed) reply.raw.destroy();
    context.end(request, spec.provider);
    return undefined;
  };

  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const startedAt = Date.now();
    if (context.baseLatencyMs > 0 && !(await context.pause(reply, context.baseLatencyMs))) return gone(request, reply);
    // A whole-provider outage answers every call the same way, before its key or parameters are looked at.
    const outage = context.outages.get(spec.provider);
    if (outage !== undefined) {
      if (outage === 'timeout') {
        await context.hang(reply);
        context.end(request, spec.provider);
        return undefined;
      }
      return sendReply(reply, spec.failure(outage, ''));
    }
    if (!spec.authorize(request)) return sendReply(reply, spec.failure('badkey', ''));
    context.record(request, spec.provider);
    const valid = spec.validate(request);
    if (!valid.ok) return sendReply(reply, valid.reply);
    const parsed = parseQuery(valid.query, spec.provider);
    if (!parsed.ok) return sendReply(reply, spec.failure('directive', parsed.problem));
    const behaviour = parsed.behaviour;
    switch (behaviour.kind) {
      case 'ok':
        return sendReply(reply, spec.success(valid.params, parsed.query, false, startedAt));
      case 'empty':
        return sendReply(reply, spec.success(valid.params, parsed.query, true, startedAt));
      case 'slow':
        if (!(await context.pause(reply, behaviour.ms))) return gone(request, reply);
        return sendReply(reply, spec.success(valid.params, parsed.query, false, startedAt));
      case 'failfirst':
        if (!context.firstOf(spec.provider, parsed.query)) return sendReply(reply, spec.success(valid.params, parsed.query, false, startedAt));
        if (!(await context.pause(reply, behaviour.ms))) return gone(request, reply);
        return sendReply(reply, spec.failure('error500', ''));
      case 'timeout':
        await context.hang(reply);
        context.end(request, spec.provider);
        return undefined;
      case 'malformed':
        return reply.code(200).header('content-type', 'application/json; charset=utf-8').send(MALFORMED_BODY);
      case 'error500':
      case 'error429':
      case 'quota':
      case 'badkey':
        return sendReply(reply, spec.failure(behaviour.kind, ''));
    }
  };
}

/** True for Fastify's own 4xx errors (bad JSON, wrong media type, body too large). */
export function clientError(error: { statusCode?: number }): boolean {
  return error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500;
}

/** One endpoint of a provider's API: its method and path, and its handler (from the spec it follows, see `endpoint`). */
export interface SimEndpoint {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  handler(context: SimContext): ReturnType<typeof simulatedHandler>;
}

/** An endpoint following `spec` (each endpoint of a provider has parameters of its own). */
export function endpoint<P>(method: 'GET' | 'POST', path: string, spec: ProviderSpec<P>): SimEndpoint {
  return { method, path, handler: (context) => simulatedHandler(spec, context) };
}

/** A provider's whole API under its prefix: its endpoints and its own replies when no endpoint answers. */
export interface ProviderApi {
  readonly provider: SimProvider;
  readonly endpoints: readonly SimEndpoint[];
  /** The provider's reply to an unknown path. */
  notFound(): SimReply;
  /** The provider's reply to a body Fastify rejects (bad JSON, wrong media type, too large). */
  badRequest(): SimReply;
  /** The provider's reply to any other error (its 500). */
  serverError(): SimReply;
}

/** Registers a provider's API on its prefixed instance: the counters around every request, the endpoints, the error replies. */
export function registerProviderApi(app: FastifyInstance, context: SimContext, api: ProviderApi): void {
  app.addHook('onRequest', async (request) => context.begin(request, api.provider));
  app.addHook('onResponse', async (request) => context.end(request, api.provider));
  for (const { method, path, handler } of api.endpoints) {
    if (method === 'GET') app.get(path, handler(context));
    else app.post(path, handler(context));
  }
  app.setNotFoundHandler((_request, reply) => sendReply(reply, api.notFound()));
  app.setErrorHandler((error: { statusCode?: number }, _request, reply) =>
    sendReply(reply, clientError(error) ? api.badRequest() : api.serverError()),
  );
}
