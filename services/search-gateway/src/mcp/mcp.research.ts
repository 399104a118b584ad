import { ANSWER_SCHEMAS, inlineAnswerSchema, keyFactsHeaders, LIMITS, RESEARCH_MODELS } from '@svc/contracts';
import type { KeyRecord } from '@svc/contracts';
import { AppError, describeError } from '@svc/errors';
import type { ErrorBody } from '@svc/errors';
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { upstreamRequestHeaders } from '../forward/forward-headers';
import type { UpstreamClient } from '../forward/upstream.client';

/**
 * The research tools of /mcp (docs/mcp.md, "deep_research"; docs/decisions/0063): billing's
 * research runs, reached the way the gateway forwards POST /v1/research (the key's identity,
 * limit and fence in the internal headers). On a 2026-07-28 request whose client declares the
 * Tasks extension (`io.modelcontextprotocol/tasks`), deep_research answers with a task whose id
 * is the run's id, and `tasks/get` reads the run; on any other request it answers the run and
 * `get_research` reads it. The server keeps nothing: a task is its run in billing's database.
 */

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** How often a client is asked to poll a task (its `pollIntervalMs`). */
export const TASK_POLL_INTERVAL_MS = 2_000;

const RESEARCH_MODEL_IDS = RESEARCH_MODELS.map((model) => model.id);
const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** deep_research's arguments: POST /v1/research's body, and `idempotency_key`. */
export const DEEP_RESEARCH_INPUT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['input', 'max_cost_usd'],
  properties: {
    input: { type: 'string', minLength: LIMITS.researchInput.min, maxLength: LIMITS.researchInput.max, description: `The question or task (1 to ${LIMITS.researchInput.max} characters).` },
    model: { type: 'string', enum: RESEARCH_MODEL_IDS, description: `One research model: ${RESEARCH_MODEL_IDS.join(', ')}. Give model, models, or both.` },
    models: { type: 'array', minItems: LIMITS.researchModels.min, maxItems: LIMITS.researchModels.max, items: { type: 'string', enum: RESEARCH_MODEL_IDS }, description: 'Research models in fallback order: the next runs only when the one before fails, within what the cap leaves.' },
    max_cost_usd: { type: 'number', exclusiveMinimum: 0, maximum: LIMITS.maxCostUsd.max, description: 'The hard cap in USD: the run is never charged more. It is held from the balance at once and what the run does not cost is given back.' },
    output_schema: { type: 'object', description: 'Optional JSON Schema for a structured answer.' },
    metadata: { type: 'object', additionalProperties: { type: 'string' }, description: 'Optional labels of your own (strings), returned with the run.' },
    idempotency_key: { type: 'string', minLength: 1, maxLength: 255, description: 'Optional: the same key with the same arguments starts one run only (the first run is answered again).' },
  },
} as const;

export const GET_RESEARCH_INPUT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: { id: { type: 'string', pattern: '^rsr_[0-9A-Za-z]{1,64}$', description: 'The run id deep_research answered.' } },
} as const;

export const RESEARCH_RUN_OUTPUT_SCHEMA = inlineAnswerSchema(ANSWER_SCHEMAS.ResearchRun);

export const RESEARCH_TOOLS: readonly Tool[] = [
  {
    name: 'deep_research',
    title: 'Deep research (with a hard cost cap)',
    description:
      'Hand a whole question to a research agent (Exa Agent or Tavily research) that searches, reads and writes a cited answer, taking from a minute to an hour. ' +
      'max_cost_usd is a hard cap held from the balance at once; the run is charged what the provider reports, never more than the cap, and the rest is given back. ' +
      'Clients that support MCP tasks get a task to follow; others get the run id: read it with get_research until its status is completed, failed or cancelled.',
    inputSchema: DEEP_RESEARCH_INPUT_SCHEMA as unknown as Tool['inputSchema'],
    outputSchema: RESEARCH_RUN_OUTPUT_SCHEMA as unknown as Tool['outputSchema'],
    annotations: { title: 'Deep research', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  },
  {
    name: 'get_research',
    title: 'Read a research run',
    description: 'A research run started by deep_research: its status, cost against its cap, and, once completed, its answer and sources.',
    inputSchema: GET_RESEARCH_INPUT_SCHEMA as unknown as Tool['inputSchema'],
    outputSchema: RESEARCH_RUN_OUTPUT_SCHEMA as unknown as Tool['outputSchema'],
    annotations: { title: 'Read a research run', readOnlyHint: true, openWorldHint: false },
  },
];

/** The fields of a run the text and the task read. */
export interface RunView {
  id: string;
  status: 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';
  model: string | null;
  max_cost_usd: number;
  held_usd: number;
  cost_usd: number | null;
  error: string | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  output?: { text: string | null; structured: unknown } | null;
  sources?: { url: string; title: string | null }[];
}

/** A run as text an agent reads. */
export function researchText(run: RunView): string {
  const lines = [`Research run ${run.id}: ${run.status}${run.model === null ? '' : ` (${run.model})`}, cap ${run.max_cost_usd} USD, ${run.cost_usd === null ? `${run.held_usd} USD held until it ends` : `cost ${run.cost_usd} USD`}.`];
  if (run.status === 'queued' || run.status === 'running') lines.push(`Read it with get_research {"id": "${run.id}"} until it is completed, failed or cancelled.`);
  if (run.error !== null) lines.push(`Error: ${run.error}`);
  if (run.output?.text !== undefined && run.output.text !== null) lines.push('', run.output.text);
  if (run.output?.structured !== undefined && run.output.structured !== null) lines.push('', JSON.stringify(run.output.structured));
  if (run.sources !== undefined && run.sources.length > 0) {
    lines.push('', 'Sources:');
    run.sources.forEach((source, i) => lines.push(`[${i + 1}] ${source.title ?? source.url} ${source.url}`));
  }
  return lines.join('\n');
}

/** The run as a tool result (a failed run is a tool error the agent reads; the run is in structuredContent either way). */
export function researchResult(run: RunView & Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: researchText(run) }], structuredContent: run, ...(run.status === 'failed' ? { isError: true } : {}) };
}

/** The run as a task of the Tasks extension (its `tasks/get` answer, or with resultType 'task' the tools/call answer). */
export function taskOf(run: RunView & Record<string, unknown>): Record<string, unknown> {
  const base = {
    taskId: run.id,
    createdAt: run.created_at,
    lastUpdatedAt: run.completed_at ?? run.started_at ?? run.created_at,
    // A run is kept with the account's history: the task does not expire.
    ttlMs: null,
    pollIntervalMs: TASK_POLL_INTERVAL_MS,
  };
  switch (run.status) {
    case 'queued':
    case 'running':
      return { ...base, status: 'working', statusMessage: run.status === 'queued' ? 'queued' : `running at ${run.model ?? 'the provider'}` };
    case 'completed':
    case 'failed':
      // A run that failed is a tool result with isError (the protocol call did not fail). The
      // result is a tools/call result of the 2026-07-28 wire, with its discriminator.
      return { ...base, status: 'completed', statusMessage: run.status, result: { ...researchResult(run), resultType: 'complete' } };
    case 'cancelled':
      return { ...base, status: 'cancelled', statusMessage: `cancelled; cost ${String(run.cost_usd)} USD` };
    default: {
      const unreachable: never = run.status;
      return unreachable;
    }
  }
}

/** A call to billing's research API and its answer: the run, or the platform's error body (and Retry-After). */
export type BillingAnswer = { ok: true; run: RunView & Record<string, unknown> } | { ok: false; error: ErrorBody; retryAfterSeconds: number | undefined; status: number };

/** Billing's research routes, as the gateway forwards them, for the MCP tools. */
export class ResearchRelay {
  constructor(private readonly billing: UpstreamClient, private readonly internalToken: string, private readonly log: Logger) {}

  private async send(record: KeyRecord, request: FastifyRequest, requestId: string, call: { method: 'GET' | 'POST'; path: string; body?: unknown; facts?: boolean; idempotencyKey?: string }): Promise<BillingAnswer> {
    const incoming: Record<string, string | string[] | undefined> = { accept: 'application/json', 'x-forwarded-for': request.headers['x-forwarded-for'] };
    if (call.body !== undefined) incoming['content-type'] = 'application/json';
    if (call.idempotencyKey !== undefined) incoming['idempotency-key'] = call.idempotencyKey;
    const headers = upstreamRequestHeaders(incoming, {
      internalToken: this.internalToken,
      requestId,
      identity: { accountId: record.accountId, keyId: record.id, kind: record.kind, ...(call.facts === true ? { facts: keyFactsHeaders(record) } : {}) },
      clientIp: request.ip,
    });
    let response;
    try {
      response = await this.billing.send({ method: call.method, path: call.path, headers, body: call.body === undefined ? undefined : Buffer.from(JSON.stringify(call.body)) });
    } catch (error) {
      this.log.error({ request_id: requestId, upstream: 'billing', err: describeError(error) }, 'research tool: billing unreachable');
      throw new AppError('internal', 'internal error');
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(response.body.toString('utf8')) as unknown;
    } catch {
      parsed = undefined;
    }
    if (response.status < 300 && isRun(parsed)) return { ok: true, run: parsed };
    if (isErrorBody(parsed)) {
      const retry = Number(response.headers['retry-after']);
      return { ok: false, error: parsed, retryAfterSeconds: Number.isFinite(retry) && retry > 0 ? retry : undefined, status: response.status };
    }
    this.log.error({ request_id: requestId, upstream: 'billing', status: response.status }, 'research tool: unexpected answer from billing');
    throw new AppError('internal', 'internal error');
  }

  /** POST /v1/research with the tool's arguments (`idempotency_key` becomes the Idempotency-Key header). */
  create(record: KeyRecord, request: FastifyRequest, requestId: string, args: Record<string, unknown>, sessionKey: string | null): Promise<BillingAnswer> {
    const { idempotency_key: key, ...body } = args;
    if (key !== undefined && (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key) || key.trim() === '')) {
      throw new AppError('invalid_request', 'idempotency_key must be 1 to 255 printable ASCII characters');
    }
    const idempotencyKey = typeof key === 'string' ? key : sessionKey ?? undefined;
    return this.send(record, request, requestId, { method: 'POST', path: '/v1/research', body, facts: true, ...(idempotencyKey === undefined ? {} : { idempotencyKey }) });
  }

  get(record: KeyRecord, request: FastifyRequest, requestId: string, id: string): Promise<BillingAnswer> {
    return this.send(record, request, requestId, { method: 'GET', path: `/v1/research/${encodeURIComponent(id)}` });
  }

  cancel(record: KeyRecord, request: FastifyRequest, requestId: string, id: string): Promise<BillingAnswer> {
    return this.send(record, request, requestId, { method: 'POST', path: `/v1/research/${encodeURIComponent(id)}/cancel` });
  }
}

function isRun(value: unknown): value is RunView & Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.id === 'string' && typeof v.status === 'string' && v.object === 'research_run';
}

function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null) return false;
  const error = (value as { error?: unknown }).error;
  return typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string';
}
