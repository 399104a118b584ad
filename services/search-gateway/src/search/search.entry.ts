import type { KeyRecord } from '@svc/contracts';
import type { AppError } from '@svc/errors';
import { guardHook } from '@svc/http-edge';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { authError } from '../auth/auth-chain';
import type { AuthChain, AuthFailure, AuthOutcome } from '../auth/auth-chain';
import { bodyDigest } from './idempotency';
import { serverTimingHeader } from './server-timing';
import type { UpstreamTimer } from './server-timing';
import type { ExtractRequest } from './extract.schema';
import type { AttemptedRequest, SearchCall } from './search.result';
import type { SearchRequest } from './search.schema';
import type { SearchResult, SearchService } from './search.service';

/** What a caller authenticates with: an API key (`/v1/search`, `/mcp`) or an OAuth access token (`/mcp/oauth`, decision 0029). */
export type SearchCredential = 'api_key' | 'access_token';

/** An authenticated caller's search (or extract: `R`), as a route hands it over. */
export interface SearchAsked<R extends AttemptedRequest = SearchRequest> {
  readonly record: KeyRecord;
  /** The request id of the search (the HTTP request's, or a tool call's own). */
  readonly requestId: string;
  readonly request: R;
  /** The body as sent (its digest is compared by an Idempotency-Key's repeats). */
  readonly body: unknown;
  /** The Idempotency-Key's digest (the header, or MCP's `idempotency_key` or session and call id), or null. */
  readonly keyDigest: string | null;
  /** The HTTP reply it is answered in: its clock is the search's, and it carries Server-Timing. */
  readonly reply: FastifyReply;
  /** The provider time of this HTTP request's searches so far (one per request: MCP may run several). */
  readonly upstream: UpstreamTimer;
}

/**
 * The one way into a search for a caller over HTTP: `POST /v1/search` and MCP's `web_search`
 * (on `/mcp` and `/mcp/oauth`) authenticate here (the credential, its state and kind, then
 * its address fence, before the body is read), and run the search here (the Idempotency-Key's
 * digest beside the body's, the search service, and the Server-Timing of the answer). An
 * extract (`POST /v1/extract`, MCP's `web_fetch`) comes in the same way (docs/decisions/0058).
 */
export class SearchEntry {
  /** The caller of each request its guard admitted, for the handler. */
  private readonly callers = new WeakMap<FastifyRequest, KeyRecord>();

  constructor(private readonly auth: AuthChain, private readonly search: SearchService) {}

  /** The caller, from its `Authorization` header and its address (`allowed_ips`, TRUSTED_PROXIES). */
  authenticate(request: FastifyRequest, credential: SearchCredential): Promise<AuthOutcome> {
    return credential === 'api_key'
      ? this.auth.authenticate(request.headers.authorization, 'api', request)
      : this.auth.authenticateAccessToken(request.headers.authorization, request);
  }

  /**
   * A route's guard (its onRequest hook, before the body is read): authenticates the caller
   * and keeps its record for `callerOf`. A refusal is thrown as `refused` makes it (default:
   * the platform's 401/403 of the failure).
   */
  guard(credential: SearchCredential, refused: (failure: AuthFailure, request: FastifyRequest, reply: FastifyReply) => AppError = authError) {
    return guardHook(async (request: FastifyRequest, reply: FastifyReply) => {
      const outcome = await this.authenticate(request, credential);
      if (!outcome.ok) throw refused(outcome, request, reply);
      this.callers.set(request, outcome.record);
    });
  }

  /** The caller the guard admitted for `request`. */
  callerOf(request: FastifyRequest): KeyRecord {
    const record = this.callers.get(request);
    if (record === undefined) throw new Error('a search route reached without its guard');
    return record;
  }

  /** Runs the search; its answer's Server-Timing (the platform's own time and the providers') is set on the reply. */
  async run(asked: SearchAsked): Promise<SearchResult> {
    const result = await this.search.search(callOf(asked));
    void asked.reply.header('server-timing', serverTimingHeader(asked.reply.elapsedTime, asked.upstream.ms));
    return result;
  }

  /** Runs an extract, as `run` a search (the same limits, money, idempotency and Server-Timing). */
  async extract(asked: SearchAsked<ExtractRequest>): Promise<SearchResult> {
    const result = await this.search.extract(callOf(asked));
    void asked.reply.header('server-timing', serverTimingHeader(asked.reply.elapsedTime, asked.upstream.ms));
    return result;
  }
}

/** The service's call for what a route handed over: its clock is the HTTP reply's. */
function callOf<R extends AttemptedRequest>(asked: SearchAsked<R>): SearchCall<R> {
  const { reply, upstream, keyDigest } = asked;
  return {
    record: asked.record,
    requestId: asked.requestId,
    request: asked.request,
    idempotency: keyDigest === null ? null : { keyDigest, bodyDigest: bodyDigest(asked.body) },
    elapsedMs: () => reply.elapsedTime,
    upstream,
  };
}
