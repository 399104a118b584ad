import type { KeyRecord } from '@svc/contracts';
import { AppError, errorBody } from '@svc/errors';
import type { ErrorBody } from '@svc/errors';
import { newRequestId } from '@svc/ids';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, isInitializeRequest, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { authError } from '../auth/auth-chain';
import type { AuthChain } from '../auth/auth-chain';
import type { CatalogService } from '../catalog/catalog.service';
import { upstreamRequestHeaders } from '../forward/forward-headers';
import type { UpstreamClient } from '../forward/upstream.client';
import { bodyDigest } from '../search/idempotency';
import { serverTimingHeader, UpstreamTimer } from '../search/server-timing';
import { formatSearchBodyErrors, SEARCH_BODY_SCHEMA, searchValidatorCompiler, toSearchRequest } from '../search/search.schema';
import type { SearchBody } from '../search/search.schema';
import { refusalError } from '../search/search.routes';
import type { SearchService } from '../search/search.service';
import { newSessionId, sessionIdOf, toolCallDigest } from './mcp.session';
import { creditsText, errorResult, isToolName, modelsText, searchText, TOOLS } from './mcp.tools';
import type { CreditsView, SearchSuccessView, ToolName } from './mcp.tools';

export interface McpDependencies {
  auth: AuthChain;
  search: SearchService;
  catalog: CatalogService;
  /** The pool to billing that GET /v1/credits is forwarded through. */
  billing: UpstreamClient;
  internalToken: string;
  log: Logger;
}

/** Who is calling, for the tools of one HTTP request. */
interface Caller {
  readonly record: KeyRecord;
  /** The client's Mcp-Session-Id, null without one (then tool calls are not idempotent). */
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
  'web_search to search (give several models for fallback), get_credits for the balance.';

/** A validator of web_search's arguments: the one POST /v1/search compiles for its body. */
type ArgumentsValidator = ((data: unknown) => unknown) & { errors?: Parameters<typeof formatSearchBodyErrors>[0] | null };

/**
 * POST /mcp: a remote MCP server on the Streamable HTTP transport, stateless. The key is
 * checked before the body is read, as on POST /v1/search, and a refusal is an HTTP error
 * in the platform's shape. Every request gets a new SDK server and transport (they hold
 * nothing between requests), so any replica serves any request.
 */
export class McpEndpoint {
  private readonly validateArguments: ArgumentsValidator;
  /** The SDK builds an Ajv instance per server unless handed one; one serves every request. */
  private readonly schemaValidator = new AjvJsonSchemaValidator();

  constructor(private readonly deps: McpDependencies) {
    this.validateArguments = searchValidatorCompiler({ schema: SEARCH_BODY_SCHEMA, method: 'POST', url: '/mcp', httpPart: 'body' }) as ArgumentsValidator;
  }

  register(scope: FastifyInstance): void {
    const callers = new WeakMap<FastifyRequest, { record: KeyRecord; sessionId: string | null }>();
    scope.route({
      method: 'POST',
      url: '/mcp',
      onRequest: async (request) => {
        const outcome = await this.deps.auth.authenticate(request.headers.authorization, 'api');
        if (!outcome.ok) throw authError(outcome);
        callers.set(request, { record: outcome.record, sessionId: sessionIdOf(request.headers['mcp-session-id']) });
      },
      handler: async (request, reply) => {
        const known = callers.get(request);
        if (known === undefined) throw new Error('mcp handler reached without authentication');
        await this.serve({ ...known, request, reply, ids: 0 });
      },
    });
  }

  /** Hands the request to a fresh SDK server and transport, which write the response. */
  private async serve(caller: Caller): Promise<void> {
    const { request, reply } = caller;
    const res = reply.raw;
    reply.hijack();
    res.setHeader('x-svc-request-id', request.id);
    const body: unknown = request.body;
    if (isInitializeRequest(body)) res.setHeader('mcp-session-id', newSessionId());
    const server = this.newServer(caller);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      transport.close().catch(() => undefined);
      server.close().catch(() => undefined);
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, res, body);
    } catch (error) {
      this.deps.log.error({ request_id: request.id, err: describe(error) }, 'mcp request failed');
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify(errorBody(new AppError('internal', 'internal error'), request.id)));
      } else if (!res.writableEnded) {
        res.end();
      }
    }
  }

  private newServer(caller: Caller): Server {
    const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator: this.schemaValidator });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS as Tool[] }));
    server.setRequestHandler(CallToolRequestSchema, (call, extra) => {
      const { name } = call.params;
      if (!isToolName(name)) throw new McpError(ErrorCode.InvalidParams, `unknown tool "${name}"; the tools are ${TOOLS.map((t) => t.name).join(', ')}`);
      return this.callTool(caller, name, call.params.arguments ?? {}, extra.requestId);
    });
    return server;
  }

  private async callTool(caller: Caller, name: ToolName, args: Record<string, unknown>, jsonRpcId: string | number): Promise<CallToolResult> {
    const requestId = caller.ids++ === 0 ? caller.request.id : newRequestId();
    try {
      switch (name) {
        case 'web_search':
          return await this.webSearch(caller, requestId, args, jsonRpcId);
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
      if (!(error instanceof AppError)) this.deps.log.error({ request_id: requestId, tool: name, err: describe(error) }, 'mcp tool failed');
      return errorResult(errorBody(error, requestId), error instanceof AppError ? error.extra.retryAfterSeconds : undefined);
    }
  }

  /**
   * Exactly POST /v1/search: the body schema's validator, toSearchRequest, then
   * SearchService.search, which does the limits, reservations, fallback and charges.
   */
  private async webSearch(caller: Caller, requestId: string, args: Record<string, unknown>, jsonRpcId: string | number): Promise<CallToolResult> {
    if (this.validateArguments(args) !== true) {
      throw new AppError('invalid_request', `arguments ${formatSearchBodyErrors(this.validateArguments.errors ?? []).message}`);
    }
    const body = args as unknown as SearchBody;
    const request = toSearchRequest(body);
    const upstream = (caller.upstream ??= new UpstreamTimer());
    const result = await this.deps.search.search({
      upstream,
      record: caller.record,
      requestId,
      request,
      idempotency: caller.sessionId === null ? null : { keyDigest: toolCallDigest(caller.sessionId, jsonRpcId), bodyDigest: bodyDigest(body) },
      elapsedMs: () => caller.reply.elapsedTime,
    });
    // The HTTP answer (written by the transport after the tool calls) carries Server-Timing as
    // POST /v1/search does: the platform's own time and the providers' so far in this request.
    const totalMs = caller.reply.elapsedTime;
    if (!caller.reply.raw.headersSent) caller.reply.raw.setHeader('server-timing', serverTimingHeader(totalMs, upstream.ms));
    // A refusal (429 with its wait, 503 with 1 s, ...) becomes the platform's error here, as the
    // route makes it for HTTP: with the request id it carries and the wait HTTP sends as Retry-After.
    if (result.kind === 'refused') return errorResult(errorBody(refusalError(result), result.requestId), result.retryAfterSeconds);
    if (result.status === 200) {
      const answer = JSON.parse(result.body) as SearchSuccessView & Record<string, unknown>;
      return { content: [{ type: 'text', text: searchText(answer) }], structuredContent: answer };
    }
    // 402 and 502 have no wait; a 503 (every model at capacity) waits 1 s, as its Retry-After.
    return errorResult(JSON.parse(result.body) as ErrorBody, result.status === 503 ? 1 : undefined);
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
      this.deps.log.error({ request_id: requestId, upstream: 'billing', err: describe(error) }, 'get_credits: billing unreachable');
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

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
