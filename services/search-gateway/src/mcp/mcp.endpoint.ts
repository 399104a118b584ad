import { OAUTH_PATHS } from '@svc/contracts';
import type { KeyRecord } from '@svc/contracts';
import { AppError, describeError, errorBody } from '@svc/errors';
import type { ErrorBody } from '@svc/errors';
import { bearerChallenge, PUBLIC_ROUTE_CONFIG } from '@svc/http-edge';
import { newRequestId } from '@svc/ids';
import {
  createMcpHandler,
  isInitializeRequest,
  isLegacyRequest,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { CallToolResult, McpHttpHandler, McpRequestContext, StandardSchemaV1, Tool } from '@modelcontextprotocol/server';
import { ResearchRelay, researchResult, TASKS_EXTENSION, taskOf } from './mcp.research';
import type { BillingAnswer } from './mcp.research';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { authError } from '../auth/auth-chain';
import type { AuthChain, AuthFailure } from '../auth/auth-chain';
import type { CatalogService } from '../catalog/catalog.service';
import { upstreamRequestHeaders } from '../forward/forward-headers';
import type { UpstreamClient } from '../forward/upstream.client';
import { idempotencyDigest } from '../search/idempotency';
import { UpstreamTimer } from '../search/server-timing';
import { SearchEntry } from '../search/search.entry';
import type { SearchAsked } from '../search/search.entry';
import type { AttemptedRequest } from '../search/search.result';
import { EXTRACT_BODY_SCHEMA, toExtractRequest } from '../search/extract.schema';
import type { ExtractBody } from '../search/extract.schema';
import { formatSearchBodyErrors, SEARCH_BODY_SCHEMA, searchValidatorCompiler, toSearchRequest } from '../search/search.schema';
import type { SearchBody } from '../search/search.schema';
import { refusalError } from '../search/search.routes';
import type { SearchService } from '../search/search.service';
import { newSessionId, sessionIdOf, toolCallDigest } from './mcp.session';
import { creditsText, errorResult, fetchText, IDEMPOTENCY_KEY_ARGUMENT, isToolName, MCP_DEFAULT_TOTAL_CHARS, modelsText, searchText, TOOLS } from './mcp.tools';
import type { CreditsView, FetchSuccessView, SearchSuccessView, ToolName } from './mcp.tools';
import type { SearchResult } from '../search/search.service';

export interface McpDependencies {
  auth: AuthChain;
  search: SearchService;
  catalog: CatalogService;
  /** The pool to billing that GET /v1/credits is forwarded through. */
  billing: UpstreamClient;
  internalToken: string;
  log: Logger;
  /**
   * The public base URL: with it, the connector URL `/mcp/oauth` is served too (OAuth access
   * tokens only, decision 0029) with its protected-resource metadata; without it, only `/mcp`.
   */
  publicBaseUrl?: string;
}

/** Who is calling, for the tools of one HTTP request. */
interface Caller {
  readonly record: KeyRecord;
  /**
   * The client's Mcp-Session-Id on a 2025-era request, null without one and on every
   * 2026-07-28 request (that revision has no sessions): then only an `idempotency_key`
   * argument makes a tool call idempotent.
   */
  readonly sessionId: string | null;
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  /** Request ids handed out so far: the first tool call takes the HTTP request's id. */
  ids: number;
  /** The provider time of this HTTP request's web_search calls (Server-Timing's upstream). */
  upstream?: UpstreamTimer;
}

const SERVER_INFO = { name: 'search-gateway', title: 'Search gateway', version: '1.0.0' } as const;
const INSTRUCTIONS =
  'Web search from Brave, Exa and Tavily on one prepaid balance. Call list_models for the model ids and prices, ' +
  'web_search to search (give several models for fallback), web_fetch to read pages (per-URL fallback), get_credits for the balance, ' +
  'deep_research to hand a whole question to a research agent under a hard cost cap (get_research reads the run).';

/** The params of the Tasks extension's tasks/get and tasks/cancel (a Standard Schema, as the SDK takes for extension methods). */
const TASK_PARAMS: StandardSchemaV1<unknown, { taskId: string }> = {
  '~standard': {
    version: 1,
    vendor: 'search-gateway',
    validate: (value: unknown) => {
      const taskId = typeof value === 'object' && value !== null ? (value as { taskId?: unknown }).taskId : undefined;
      return typeof taskId === 'string' && taskId.length <= 200 ? { value: { taskId } } : { issues: [{ message: 'taskId must be a string' }] };
    },
  },
};

/**
 * How long a 2026-07-28 client may keep the tools/list result (and server/discover) before
 * asking again: the tools change only with a deployment. `public`: the list is the same
 * for every caller.
 */
export const TOOLS_LIST_TTL_MS = 3_600_000;

/** A validator of web_search's arguments: the one POST /v1/search compiles for its body. */
type ArgumentsValidator = ((data: unknown) => unknown) & { errors?: Parameters<typeof formatSearchBodyErrors>[0] | null };

/** The one message of a refused access token: which of missing, unknown, expired or revoked is not told. */
const ACCESS_TOKEN_REFUSED = 'a valid OAuth access token is required: Authorization: Bearer svc-oat-... (this URL takes no API keys; /mcp does)';

/** Request headers not copied onto the web-standard Request handed to the SDK. */
const NOT_COPIED = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade', 'expect']);

/**
 * POST /mcp: a remote MCP server on the Streamable HTTP transport, stateless, serving the
 * 2026-07-28 revision and the 2025-era ones on the same URL (decision 0024). The key is
 * checked before the body is read, as on POST /v1/search, and a refusal is an HTTP error
 * in the platform's shape. Then the SDK (v2, `@modelcontextprotocol/server`) classifies
 * the request by its `_meta` envelope: a 2026-07-28 request goes to the SDK's per-request
 * handler (which checks the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers against
 * the body and answers server/discover), a 2025-era one to a fresh stateless
 * Streamable HTTP transport. Every request gets its own SDK server, built by one factory,
 * so any replica serves any request.
 */
export class McpEndpoint {
  private readonly validateArguments: ArgumentsValidator;
  /** web_fetch's arguments: the validator POST /v1/extract compiles for its body. */
  private readonly validateFetchArguments: ArgumentsValidator;
  /** The SDK builds an Ajv instance per server unless handed one; one serves every request. */
  private readonly schemaValidator = new AjvJsonSchemaValidator();
  /** The 2026-07-28 leg; 2025-era requests never reach it. */
  private readonly modern: McpHttpHandler;
  /** POST /v1/search's path into a search: one authentication (with the address fence), idempotency and Server-Timing. */
  private readonly entry: SearchEntry;
  /** billing's research runs, for deep_research, get_research and the Tasks extension's methods. */
  private readonly research: ResearchRelay;

  constructor(private readonly deps: McpDependencies) {
    this.entry = new SearchEntry(deps.auth, deps.search);
    this.research = new ResearchRelay(deps.billing, deps.internalToken, deps.log);
    this.validateArguments = searchValidatorCompiler({ schema: SEARCH_BODY_SCHEMA, method: 'POST', url: '/mcp', httpPart: 'body' }) as ArgumentsValidator;
    this.validateFetchArguments = searchValidatorCompiler({ schema: EXTRACT_BODY_SCHEMA, method: 'POST', url: '/mcp', httpPart: 'body' }) as ArgumentsValidator;
    this.modern = createMcpHandler((context) => this.newServer(callerOf(context), true), {
      legacy: 'reject',
      // Our handlers send nothing before their result, so every answer is one JSON body.
      responseMode: 'auto',
      onerror: (error) => this.deps.log.debug({ err: describeError(error) }, 'mcp request refused'),
    });
  }

  register(scope: FastifyInstance): void {
    // The caller authenticated by the route's guard (SearchEntry: the search route's own), its 2025-era session id read here.
    const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      await this.serve({ record: this.entry.callerOf(request), sessionId: sessionIdOf(request.headers['mcp-session-id']), request, reply, ids: 0 });
    };
    if (this.deps.publicBaseUrl !== undefined) this.registerOAuth(scope, this.deps.publicBaseUrl.replace(/\/+$/, ''), handler);
    scope.route({ method: 'POST', url: '/mcp', onRequest: this.entry.guard('api_key'), handler });
  }

  /**
   * POST /mcp/oauth, the connector URL: the same MCP server, but its credential is an OAuth
   * access token (`svc-oat-...`), which resolves through the same key chain to its grant's
   * API key (decision 0029), so the grant key's limits, charges, revocation and address fence
   * apply. Its other refusals are 401s that name the protected-resource metadata (RFC 9728
   * section 5.1), served beside it; `/mcp` offers none of this.
   */
  private registerOAuth(scope: FastifyInstance, base: string, handler: (request: FastifyRequest, reply: FastifyReply) => Promise<void>): void {
    const metadataUrl = base + OAUTH_PATHS.resourceMetadata;
    const metadata = JSON.stringify({
      resource: base + OAUTH_PATHS.resource,
      authorization_servers: [base],
      bearer_methods_supported: ['header'],
      scopes_supported: [],
      resource_name: 'Search gateway (web search for AI agents)',
      resource_documentation: `${base}/dashboard`,
    });
    scope.get(OAUTH_PATHS.resourceMetadata, { config: PUBLIC_ROUTE_CONFIG }, (request, reply) =>
      reply.header('x-svc-request-id', request.id).header('cache-control', 'public, max-age=3600').type('application/json').send(metadata));
    // The grant key's address fence refuses as it does everywhere (403); any other refusal is OAuth's 401 with its challenge.
    const refused = (failure: AuthFailure, request: FastifyRequest, reply: FastifyReply): AppError => {
      if (failure.code === 'ip_not_allowed') return authError(failure);
      void reply.header('www-authenticate', bearerChallenge(request.headers.authorization, { resource_metadata: metadataUrl }));
      return new AppError('invalid_api_key', ACCESS_TOKEN_REFUSED);
    };
    scope.route({ method: 'POST', url: OAUTH_PATHS.resource, onRequest: this.entry.guard('access_token', refused), handler });
  }

  /** Hands the request to the SDK (the 2026-07-28 handler or a stateless 2025-era transport) and sends its answer. */
  private async serve(caller: Caller): Promise<void> {
    const { request, reply } = caller;
    const body: unknown = request.body;
    const webRequest = toWebRequest(request, body);
    let response: Response;
    let legacy: boolean;
    try {
      legacy = await isLegacyRequest(webRequest, body);
      if (!legacy && isListen(body)) {
        // A listen stream would stay open for nothing: the tools change only with a deployment
        // (tools/list says so with its ttlMs), and we advertise no listChanged.
        await reply.code(200).header('x-svc-request-id', request.id).type('application/json').send({
          jsonrpc: '2.0',
          id: body.id,
          error: { code: ProtocolErrorCode.MethodNotFound, message: 'subscriptions/listen is not offered: the tool list changes only with a deployment' },
        });
        return;
      }
      if (legacy) {
        response = await this.serveLegacy(caller, webRequest, body);
      } else {
        const authInfo = { token: '', clientId: caller.record.id, scopes: [], extra: { caller: { ...caller, sessionId: null } } };
        response = await this.modern.fetch(webRequest, { parsedBody: body, authInfo });
      }
    } catch (error) {
      this.deps.log.error({ request_id: request.id, err: describeError(error) }, 'mcp request failed');
      throw new AppError('internal', 'internal error');
    }
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    // The 2025-era session id is stored nowhere (decision 14); it only scopes tool-call idempotency.
    if (legacy && isInitializeRequest(body)) headers['mcp-session-id'] = newSessionId();
    headers['x-svc-request-id'] = request.id;
    const payload = Buffer.from(await response.arrayBuffer());
    await reply.code(response.status).headers(headers).send(payload);
  }

  /** A 2025-era request: a fresh server and stateless transport, one JSON answer, both closed after it. */
  private async serveLegacy(caller: Caller, webRequest: Request, body: unknown): Promise<Response> {
    const server = this.newServer(caller, false);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    try {
      await server.connect(transport);
      return await transport.handleRequest(webRequest, { parsedBody: body });
    } finally {
      await transport.close().catch(() => undefined);
      await server.close().catch(() => undefined);
    }
  }

  /**
   * `modern`: a 2026-07-28 request's server, which offers the Tasks extension (docs/mcp.md,
   * "deep_research"): deep_research answers a task to a client that declares the extension on
   * its request, and tasks/get and tasks/cancel read and cancel the run the task is.
   */
  private newServer(caller: Caller, modern: boolean): Server {
    const server = new Server(SERVER_INFO, {
      capabilities: { tools: {}, ...(modern ? { extensions: { [TASKS_EXTENSION]: {} } } : {}) },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: this.schemaValidator,
      cacheHints: { 'tools/list': { ttlMs: TOOLS_LIST_TTL_MS, cacheScope: 'public' }, 'server/discover': { ttlMs: TOOLS_LIST_TTL_MS, cacheScope: 'public' } },
    });
    server.setRequestHandler('tools/list', () => ({ tools: TOOLS as Tool[] }));
    server.setRequestHandler('tools/call', (call, context) => {
      const { name } = call.params;
      if (!isToolName(name)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown tool "${name}"; the tools are ${TOOLS.map((t) => t.name).join(', ')}`);
      const tasks = modern && server.getClientCapabilities()?.extensions?.[TASKS_EXTENSION] !== undefined;
      return this.callTool(caller, name, call.params.arguments ?? {}, context.mcpReq.id, tasks);
    });
    if (modern) {
      // The Tasks extension's methods on the 2026-07-28 era: a task is a research run.
      const declared = (): void => {
        if (server.getClientCapabilities()?.extensions?.[TASKS_EXTENSION] === undefined) {
          throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
        }
      };
      server.setRequestHandler('tasks/get', { params: TASK_PARAMS }, async (params) => {
        declared();
        return taskOf(this.taskRun(await this.research.get(caller.record, caller.request, this.nextRequestId(caller), params.taskId)));
      });
      server.setRequestHandler('tasks/cancel', { params: TASK_PARAMS }, async (params) => {
        declared();
        this.taskRun(await this.research.cancel(caller.record, caller.request, this.nextRequestId(caller), params.taskId));
        return {};
      });
    }
    return server;
  }

  private nextRequestId(caller: Caller): string {
    return caller.ids++ === 0 ? caller.request.id : newRequestId();
  }

  /** A task's run, or the protocol error of a task that is not the caller's (or not a run). */
  private taskRun(answer: BillingAnswer): Extract<BillingAnswer, { ok: true }>['run'] {
    if (answer.ok) return answer.run;
    if (answer.status === 404) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
    throw new ProtocolError(ProtocolErrorCode.InternalError, `${answer.error.error.code}: ${answer.error.error.message}`);
  }

  private async callTool(caller: Caller, name: ToolName, args: Record<string, unknown>, jsonRpcId: string | number, tasks = false): Promise<CallToolResult> {
    const requestId = this.nextRequestId(caller);
    try {
      switch (name) {
        case 'deep_research':
          return await this.deepResearch(caller, requestId, args, jsonRpcId, tasks);
        case 'get_research':
          return await this.getResearch(caller, requestId, args);
        case 'web_search':
          return await this.webSearch(caller, requestId, args, jsonRpcId);
        case 'web_fetch':
          return await this.webFetch(caller, requestId, args, jsonRpcId);
        case 'list_models':
          noArguments(name, args);
          return this.listModels(requestId);
        case 'get_credits':
          noArguments(name, args);
          return await this.credits(caller, requestId);
        default: {
          const unreachable: never = name;
          return unreachable;
        }
      }
    } catch (error) {
      if (!(error instanceof AppError)) this.deps.log.error({ request_id: requestId, tool: name, err: describeError(error) }, 'mcp tool failed');
      return errorResult(errorBody(error, requestId), error instanceof AppError ? error.extra.retryAfterSeconds : undefined);
    }
  }

  /**
   * Exactly POST /v1/search: the body schema's validator, toSearchRequest, then the search
   * route's own path (SearchEntry: the search service, which does the limits, reservations,
   * fallback and charges; the Idempotency-Key's digest beside the body's; Server-Timing).
   * `idempotency_key` plays the Idempotency-Key header (same digest, same store, scoped to the
   * API key); without it a 2025-era call is idempotent per (session, JSON-RPC id).
   */
  private async webSearch(caller: Caller, requestId: string, args: Record<string, unknown>, jsonRpcId: string | number): Promise<CallToolResult> {
    const { body, keyDigest } = this.argumentsOf(args, this.validateArguments);
    const request = withToolBudget(toSearchRequest(body as unknown as SearchBody));
    const result = await this.entry.run(askedOf(caller, requestId, request, body, keyDigest, jsonRpcId));
    return toolResult(result, keyDigest !== null, (answer: SearchSuccessView & Record<string, unknown>) => searchText(answer));
  }

  /**
   * Exactly POST /v1/extract, as web_search is POST /v1/search: the body schema's validator,
   * toExtractRequest, then SearchEntry (the same limits, money, fallback per URL and
   * idempotency), with the tools' default budget on the answer's text.
   */
  private async webFetch(caller: Caller, requestId: string, args: Record<string, unknown>, jsonRpcId: string | number): Promise<CallToolResult> {
    const { body, keyDigest } = this.argumentsOf(args, this.validateFetchArguments);
    const request = withToolBudget(toExtractRequest(body as unknown as ExtractBody));
    const result = await this.entry.extract(askedOf(caller, requestId, request, body, keyDigest, jsonRpcId));
    return toolResult(result, keyDigest !== null, (answer: FetchSuccessView & Record<string, unknown>) => fetchText(answer));
  }

  /** A tool's arguments as its route's body (checked by that body's validator) and the digest of its `idempotency_key`, taken out of them. */
  private argumentsOf(args: Record<string, unknown>, validate: ArgumentsValidator): { body: Record<string, unknown>; keyDigest: string | null } {
    const { [IDEMPOTENCY_KEY_ARGUMENT]: idempotencyKey, ...body } = args;
    const keyDigest = idempotencyKey === undefined ? null : idempotencyKeyDigest(idempotencyKey);
    if (validate(body) !== true) throw new AppError('invalid_request', `arguments ${formatSearchBodyErrors(validate.errors ?? []).message}`);
    return { body, keyDigest };
  }

  /**
   * POST /v1/research as the gateway forwards it. To a client that declared the Tasks extension
   * the answer is a task (resultType "task", its id the run's): billing has written the run
   * before it answers, so a tasks/get for it resolves at once, as the extension requires. To any
   * other client, the run and how to read it with get_research. `idempotency_key` (or, on a 2025
   * session, the session and JSON-RPC id) makes a retried call start one run.
   */
  private async deepResearch(caller: Caller, requestId: string, args: Record<string, unknown>, jsonRpcId: string | number, tasks: boolean): Promise<CallToolResult> {
    const sessionKey = caller.sessionId === null ? null : `mcp:${toolCallDigest(caller.sessionId, jsonRpcId)}`;
    const answer = await this.research.create(caller.record, caller.request, requestId, args, sessionKey);
    if (!answer.ok) return errorResult(answer.error, answer.retryAfterSeconds);
    if (tasks) return { resultType: 'task', ...taskOf(answer.run) } as unknown as CallToolResult;
    return researchResult(answer.run);
  }

  private async getResearch(caller: Caller, requestId: string, args: Record<string, unknown>): Promise<CallToolResult> {
    const { id, ...extra } = args;
    const unknown = Object.keys(extra)[0];
    if (unknown !== undefined) throw new AppError('invalid_request', `arguments has an unknown field "${unknown.slice(0, 64)}"`);
    if (typeof id !== 'string' || !/^rsr_[0-9A-Za-z]{1,64}$/.test(id)) throw new AppError('invalid_request', 'id must be a research run id (rsr_...)');
    const answer = await this.research.get(caller.record, caller.request, requestId, id);
    return answer.ok ? researchResult(answer.run) : errorResult(answer.error, answer.retryAfterSeconds);
  }

  private listModels(requestId: string): CallToolResult {
    const models = JSON.parse(this.deps.catalog.modelsJson(requestId)) as { data: Parameters<typeof modelsText>[0] } & Record<string, unknown>;
    return { content: [{ type: 'text', text: modelsText(models.data) }], structuredContent: models };
  }

  /** GET /v1/credits as the gateway forwards it: to billing, with the internal token and the key's identity. */
  private async credits(caller: Caller, requestId: string): Promise<CallToolResult> {
    const { record, request } = caller;
    const incoming = { accept: 'application/json', 'x-forwarded-for': request.headers['x-forwarded-for'] };
    const headers = upstreamRequestHeaders(incoming, {
      internalToken: this.deps.internalToken,
      requestId,
      identity: { accountId: record.accountId, keyId: record.id, kind: record.kind },
      clientIp: request.ip,
    });
    let response;
    try {
      response = await this.deps.billing.send({ method: 'GET', path: '/v1/credits', headers, body: undefined });
    } catch (error) {
      this.deps.log.error({ request_id: requestId, upstream: 'billing', err: describeError(error) }, 'get_credits: billing unreachable');
      throw new AppError('internal', 'internal error');
    }
    const parsed = parseJson(response.body.toString('utf8'));
    if (response.status === 200 && isCredits(parsed)) {
      return { content: [{ type: 'text', text: creditsText(parsed) }], structuredContent: parsed };
    }
    if (isErrorBody(parsed)) return errorResult(parsed, undefined);
    this.deps.log.error({ request_id: requestId, upstream: 'billing', status: response.status }, 'get_credits: unexpected answer from billing');
    throw new AppError('internal', 'internal error');
  }
}

/**
 * A search's or an extract's result as the tool's: a refusal (429 with its wait, 503 with 1 s,
 * ...) becomes the platform's error, as the route makes it for HTTP, with the request id it
 * carries and the wait HTTP sends as Retry-After; a 200 its text (`text`) and structured content.
 */
/** The tools' default budget on the answer's text (MCP_DEFAULT_TOTAL_CHARS) where the arguments give none; not part of what idempotency compares. */
function withToolBudget<R extends { readonly maxTotalChars: number | null }>(request: R): R {
  return request.maxTotalChars === null ? { ...request, maxTotalChars: MCP_DEFAULT_TOTAL_CHARS } : request;
}

/**
 * A tool call as its route hands a search or extract to SearchEntry. The HTTP answer (written
 * by the transport after the tool calls) carries Server-Timing as the route's does: the
 * platform's own time and the providers' so far in this request. Without an idempotency_key a
 * 2025-era call is idempotent per (session, JSON-RPC id).
 */
function askedOf<R extends AttemptedRequest>(caller: Caller, requestId: string, request: R, body: unknown, keyDigest: string | null, jsonRpcId: string | number): SearchAsked<R> {
  return {
    record: caller.record,
    requestId,
    request,
    body,
    keyDigest: keyDigest ?? (caller.sessionId === null ? null : toolCallDigest(caller.sessionId, jsonRpcId)),
    reply: caller.reply,
    upstream: (caller.upstream ??= new UpstreamTimer()),
  };
}

function toolResult<V>(result: SearchResult, keyed: boolean, text: (answer: V & Record<string, unknown>) => string): CallToolResult {
  if (result.kind === 'refused') {
    const error = keyed && result.reason === 'body_mismatch'
      ? new AppError('invalid_request', `this ${IDEMPOTENCY_KEY_ARGUMENT} was used with different arguments`)
      : refusalError(result);
    return errorResult(errorBody(error, result.requestId), result.retryAfterSeconds);
  }
  if (result.status === 200) {
    const answer = JSON.parse(result.body) as V & Record<string, unknown>;
    return { content: [{ type: 'text', text: text(answer) }], structuredContent: answer };
  }
  // 402 and 502 have no wait; a 503 (every model at capacity) waits 1 s, as its Retry-After.
  return errorResult(JSON.parse(result.body) as ErrorBody, result.status === 503 ? 1 : undefined);
}

/** The caller a 2026-07-28 request's server is built for (passed through the SDK as authInfo). */
function callerOf(context: McpRequestContext): Caller {
  const caller = context.authInfo?.extra?.caller as Caller | undefined;
  if (caller === undefined) throw new Error('mcp server built without a caller');
  return caller;
}

/** A 2026-07-28 subscriptions/listen request (the SDK would answer it with an SSE stream held open). */
function isListen(body: unknown): body is { id: string | number } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const message = body as { method?: unknown; id?: unknown };
  return message.method === 'subscriptions/listen' && (typeof message.id === 'string' || typeof message.id === 'number');
}

/** The Fastify request as a web-standard Request for the SDK (the body already parsed, passed beside it). */
function toWebRequest(request: FastifyRequest, body: unknown): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || NOT_COPIED.has(name)) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return new Request(`http://gateway${request.url}`, { method: 'POST', headers, body: JSON.stringify(body) ?? '' });
}

/** The `idempotency_key` argument's digest: the Idempotency-Key header's (docs/api.md 10.7), so one key names one search either way. */
function idempotencyKeyDigest(value: unknown): string {
  try {
    const digest = typeof value === 'string' ? idempotencyDigest(value) : null;
    if (digest !== null) return digest;
  } catch {
    // the header's message names the header; the argument's names the argument
  }
  throw new AppError('invalid_request', `${IDEMPOTENCY_KEY_ARGUMENT} must be 1 to 255 printable ASCII characters`);
}

function noArguments(tool: ToolName, args: Record<string, unknown>): void {
  const extra = Object.keys(args)[0];
  if (extra !== undefined) throw new AppError('invalid_request', `${tool} takes no arguments (got "${extra.slice(0, 64)}")`);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isCredits(value: unknown): value is CreditsView & Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return ['balance_usd', 'reserved_usd', 'total_purchased_usd', 'total_spent_usd'].every((field) => typeof v[field] === 'number');
}

function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null) return false;
  const error = (value as { error?: unknown }).error;
  return typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string' && typeof (error as { message?: unknown }).message === 'string';
}
