import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { accepts, bearerOf } from './accepted-keys';
import { checkEnum, dollars, firstProblem, isObject, unknownField } from './body-checks';
import type { JsonObject } from './body-checks';
import type { SimProvider } from './directives';
import { resultsFor } from './results';
import type { SimContext } from './simulate';

/**
 * Long-running research (docs/decisions/0062): Exa's Agent runs (`/exa/agent/runs`) and
 * Tavily's research (`/tavily/research`), as exa-js 2.23 and @tavily/core 0.7 call them, with
 * deterministic outputs and metered costs. A run lives in memory; its status follows the time
 * since its creation (SIM_RESEARCH_MS, or a `run<ms>` directive). Directives in the run's
 * input, `sim:<exa|tavily|*>=<behaviour>[,<behaviour>]`, each a word between spaces:
 *
 * - `run<ms>`: the run takes this long (0 to 3,600,000);
 * - `fail`: the run ends failed (Exa reports half its usage so far; Tavily no usage);
 * - `overcap`: the provider reports more than the run's budget or the model's most possible
 *   cost (Exa: 1.5 times its budget, or 3 times a fixed effort's price; Tavily: 300 credits);
 * - `forever`: the run never finishes (until cancelled);
 * - `error500`, `error429`: the create call answers so (nothing is started).
 */

export const RESEARCH_DEFAULT_MS = 1_500;
const MAX_RUN_MS = 3_600_000;

interface Directives {
  durationMs: number | null;
  fail: boolean;
  overcap: boolean;
  forever: boolean;
  startError: 500 | 429 | null;
}

/** The directives for `provider` in `input` (a provider's own words win over `*`), or a problem. */
export function researchDirectives(input: string, provider: SimProvider): { ok: true; directives: Directives } | { ok: false; problem: string } {
  const directives: Directives = { durationMs: null, fail: false, overcap: false, forever: false, startError: null };
  const specific: string[] = [];
  const wildcard: string[] = [];
  for (const word of input.split(' ')) {
    const match = /^sim:([^=\s]+)=(\S+)$/.exec(word);
    if (match === null) continue;
    const [, target, list] = match as unknown as [string, string, string];
    if (target === provider) specific.push(...list.split(','));
    else if (target === '*') wildcard.push(...list.split(','));
  }
  for (const behaviour of specific.length > 0 ? specific : wildcard) {
    const run = /^run(\d{1,7})$/.exec(behaviour);
    if (run !== null && Number(run[1]) <= MAX_RUN_MS) directives.durationMs = Number(run[1]);
    else if (behaviour === 'fail') directives.fail = true;
    else if (behaviour === 'overcap') directives.overcap = true;
    else if (behaviour === 'forever') directives.forever = true;
    else if (behaviour === 'error500') directives.startError = 500;
    else if (behaviour === 'error429') directives.startError = 429;
    else return { ok: false, problem: `unknown simulator research behaviour "${behaviour}"` };
  }
  return { ok: true, directives };
}

/** A deterministic number in [min, max] from a seed. */
function between(seed: string, min: number, max: number): number {
  const value = createHash('sha256').update(seed).digest().readUInt32BE(0);
  return min + (value % (max - min + 1));
}

/** A run the simulator keeps. */
export interface SimRun {
  readonly id: string;
  readonly provider: 'exa' | 'tavily';
  /** Exa's effort or Tavily's model. */
  readonly variant: string;
  readonly input: string;
  readonly outputSchema: JsonObject | null;
  readonly createdAtMs: number;
  readonly durationMs: number;
  readonly directives: Directives;
  /** Exa's metered budget (micro-USD) or null. */
  readonly budgetMicros: number | null;
  cancelledAtMs: number | null;
  /** Polls answered (the GET calls). */
  polls: number;
}

const EXA_FIXED_MICROS: Readonly<Record<string, number>> = { minimal: 12_000, low: 25_000, medium: 100_000, high: 500_000, xhigh: 1_000_000 };
const EXA_METERED_DEFAULT_MICROS: Readonly<Record<string, number>> = { auto: 5_000_000, ultra: 20_000_000, max: 20_000_000 };
const TAVILY_CREDITS: Readonly<Record<string, readonly [number, number]>> = { mini: [4, 110], pro: [15, 250], auto: [15, 250] };

/** The simulator's research runs, shared by the Exa and Tavily routes (GET /_sim/research lists them). */
export class ResearchSim {
  readonly runs = new Map<string, SimRun>();

  constructor(private readonly defaultMs: number, private readonly clock: () => number = Date.now) {}

  /** The simulator's clock (ms). */
  now(): number {
    return this.clock();
  }

  create(run: Omit<SimRun, 'createdAtMs' | 'durationMs' | 'cancelledAtMs' | 'polls'>): SimRun {
    const made: SimRun = { ...run, createdAtMs: this.clock(), durationMs: run.directives.durationMs ?? this.defaultMs, cancelledAtMs: null, polls: 0 };
    this.runs.set(made.id, made);
    return made;
  }

  /** Where the run is now. */
  state(run: SimRun): 'queued' | 'running' | 'completed' | 'failed' | 'cancelled' {
    if (run.cancelledAtMs !== null) return 'cancelled';
    const elapsed = this.clock() - run.createdAtMs;
    if (run.directives.forever || elapsed < run.durationMs) return elapsed < Math.min(200, run.durationMs / 10) ? 'queued' : 'running';
    return run.directives.fail ? 'failed' : 'completed';
  }

  /** What the provider charges for the run when it completes (Exa micro-USD; Tavily credits). */
  fullCost(run: SimRun): number {
    const seed = `${run.provider}\n${run.variant}\n${run.input}`;
    if (run.provider === 'tavily') {
      const [min, max] = TAVILY_CREDITS[run.variant] ?? [15, 250];
      return run.directives.overcap ? 300 : between(seed, min, max);
    }
    const fixed = EXA_FIXED_MICROS[run.variant];
    if (fixed !== undefined) return run.directives.overcap ? fixed * 3 : fixed;
    const budget = run.budgetMicros ?? EXA_METERED_DEFAULT_MICROS[run.variant] ?? 5_000_000;
    if (run.directives.overcap) return Math.round(budget * 1.5);
    return Math.round((budget * between(seed, 20, 80)) / 100);
  }

  /** What the provider reports now: the full cost once completed; a metered Exa run cancelled or failed, its share so far. */
  costNow(run: SimRun): number {
    const state = this.state(run);
    if (state === 'completed') return this.fullCost(run);
    if (run.provider === 'tavily' || EXA_FIXED_MICROS[run.variant] !== undefined) return 0;
    const until = run.cancelledAtMs ?? this.clock();
    const share = Math.min(1, Math.max(0, (until - run.createdAtMs) / Math.max(1, run.durationMs)));
    const cost = Math.round(this.fullCost(run) * share);
    return state === 'failed' ? Math.round(cost / 2) : cost;
  }

  /** The deterministic answer of a run. */
  output(run: SimRun): { text: string; structured: JsonObject | null; sources: { url: string; title: string }[] } {
    const query = run.input.split(' ').filter((word) => !word.startsWith('sim:')).join(' ');
    const sources = resultsFor(`${run.provider}/research-${run.variant}`, query, 3, 0, {}).map((r) => ({ url: r.url, title: r.title }));
    const text = `Research on "${query}" (${run.provider} ${run.variant}): ${sources.map((s, i) => `[${i + 1}] ${s.title}`).join('; ')}.`;
    let structured: JsonObject | null = null;
    if (run.outputSchema !== null && isObject(run.outputSchema.properties)) {
      structured = {};
      for (const [name, property] of Object.entries(run.outputSchema.properties)) {
        const type = isObject(property) ? property.type : undefined;
        structured[name] = type === 'number' ? 42.5 : type === 'integer' ? 7 : type === 'boolean' ? true : type === 'array' ? [] : type === 'object' ? {} : `${name} of ${query}`;
      }
    }
    return { text, structured, sources };
  }

  snapshot(): object[] {
    return [...this.runs.values()].map((run) => ({
      id: run.id, provider: run.provider, variant: run.variant, status: this.state(run), polls: run.polls,
      cost: run.provider === 'tavily' ? { credits: this.state(run) === 'completed' ? this.fullCost(run) : 0 } : { micros: this.costNow(run) },
      budget_micros: run.budgetMicros,
    }));
  }
}

function send(reply: FastifyReply, status: number, body: unknown, headers: Record<string, string> = {}): FastifyReply {
  reply.code(status);
  for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  return reply.send(body);
}

/** What a whole-provider outage answers (PUT /_sim/outage/:provider), or null when none. */
async function outage(context: SimContext, provider: SimProvider, reply: FastifyReply, failure: (status: number) => unknown): Promise<FastifyReply | null | 'hung'> {
  const kind = context.outages.get(provider);
  if (kind === undefined) return null;
  if (kind === 'timeout') {
    await context.hang(reply);
    return 'hung';
  }
  return kind === 'error429' ? send(reply, 429, failure(429), { 'retry-after': '1' }) : send(reply, 500, failure(500));
}

const EXA_EFFORTS = ['minimal', 'low', 'medium', 'high', 'xhigh', 'auto', 'ultra', 'max'] as const;
const EXA_METERED = ['auto', 'ultra', 'max'];
const EXA_FIELDS = ['query', 'systemPrompt', 'input', 'outputSchema', 'effort', 'budget', 'previousRunId', 'metadata', 'dataSources'];

function exaError(status: number, tag: string, error: string): JsonObject {
  return { requestId: randomBytes(16).toString('hex'), error, tag, status };
}

const exaFailure = (status: number): JsonObject =>
  status === 429 ? exaError(429, 'RATE_LIMIT_EXCEEDED', 'Rate limit exceeded') : exaError(500, 'INTERNAL_ERROR', 'Internal server error');

/** Exa's `agent_run` object for a run as it is now. */
function exaRun(sim: ResearchSim, run: SimRun): JsonObject {
  const status = sim.state(run);
  const terminal = status === 'completed' || status === 'failed' || status === 'cancelled';
  const cost = dollars(sim.costNow(run));
  const output = status === 'completed' ? sim.output(run) : null;
  return {
    id: run.id,
    object: 'agent_run',
    status,
    stopReason: status === 'completed' ? (run.directives.overcap ? 'budget_reached' : 'schema_satisfied') : status === 'failed' ? 'error' : status === 'cancelled' ? 'cancelled' : null,
    createdAt: new Date(run.createdAtMs).toISOString(),
    completedAt: terminal ? new Date(run.cancelledAtMs ?? run.createdAtMs + run.durationMs).toISOString() : null,
    request: { query: run.input, effort: run.variant },
    output: output === null ? null : {
      text: output.text,
      structured: output.structured,
      grounding: [{ field: output.structured === null ? 'text' : 'structured', citations: output.sources, confidence: 'high' }],
    },
    usage: { agentComputeUnits: Math.round(cost * 10), searches: 3 },
    costDollars: { total: cost, agentCompute: cost },
    ...(status === 'failed' ? { error: { type: 'agent_error', code: 'RUN_FAILED', message: 'The agent could not complete the run' } } : {}),
  };
}

function validateExa(body: unknown): { ok: true; body: JsonObject } | { ok: false; problem: string } {
  if (!isObject(body)) return { ok: false, problem: 'Request body must be a JSON object' };
  const extra = unknownField(body, EXA_FIELDS);
  if (extra !== undefined) return { ok: false, problem: `Unrecognized key in body: "${extra}"` };
  if (typeof body.query !== 'string' || body.query.trim() === '') return { ok: false, problem: 'query: Required non-empty string' };
  const effort = (body.effort as string | undefined) ?? 'auto';
  const budget = body.budget;
  const problem = firstProblem(
    checkEnum(body.effort, 'effort', EXA_EFFORTS),
    body.outputSchema !== undefined && !isObject(body.outputSchema) ? 'outputSchema must be an object' : undefined,
    body.metadata !== undefined && !isObject(body.metadata) ? 'metadata must be an object' : undefined,
    body.systemPrompt !== undefined && typeof body.systemPrompt !== 'string' ? 'systemPrompt must be a string' : undefined,
    budget !== undefined && !isObject(budget) ? 'budget must be an object' : undefined,
    isObject(budget) && !EXA_METERED.includes(effort) ? 'budget is currently supported only for metered efforts' : undefined,
    isObject(budget) && unknownField(budget, ['maxCostDollars', 'maxDurationSeconds']) !== undefined ? 'budget has an unrecognized key' : undefined,
    isObject(budget) && budget.maxCostDollars !== undefined && (typeof budget.maxCostDollars !== 'number' || budget.maxCostDollars < 1 || budget.maxCostDollars > 100)
      ? 'budget.maxCostDollars must be a number from 1 to 100' : undefined,
    isObject(budget) && budget.maxDurationSeconds !== undefined && effort !== 'ultra' ? 'budget.maxDurationSeconds is supported only for ultra' : undefined,
    isObject(budget) && budget.maxDurationSeconds !== undefined && (typeof budget.maxDurationSeconds !== 'number' || budget.maxDurationSeconds < 300 || budget.maxDurationSeconds > 10_800)
      ? 'budget.maxDurationSeconds must be a number from 300 to 10800' : undefined,
  );
  return problem === undefined ? { ok: true, body } : { ok: false, problem };
}

/**
 * JSON bodies as Exa takes them on these routes: exa-js sends `content-type: application/json`
 * with no body on a cancel, which Exa accepts (Fastify's own parser refuses an empty JSON body).
 * Registered in a child context, so the search route keeps the default parser.
 */
function emptyJsonAllowed(app: FastifyInstance): void {
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    try {
      done(null, JSON.parse(text));
    } catch {
      done(Object.assign(new Error('Request body must be valid JSON'), { statusCode: 400 }), undefined);
    }
  });
}

/** Exa's Agent runs under /exa: create, get, list, cancel. */
export function exaAgentRoutes(parent: FastifyInstance, context: SimContext, sim: ResearchSim, apiKey: string): void {
  void parent.register(async (app) => {
    emptyJsonAllowed(app);
    exaAgentRoutesIn(app, context, sim, apiKey);
  });
}

function exaAgentRoutesIn(app: FastifyInstance, context: SimContext, sim: ResearchSim, apiKey: string): void {
  const authorized = (request: FastifyRequest): boolean =>
    accepts(apiKey, request.headers['x-api-key']) || accepts(apiKey, bearerOf(request.headers.authorization));
  const gate = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | 'hung' | null> => {
    const down = await outage(context, 'exa', reply, exaFailure);
    if (down !== null) return down;
    if (!authorized(request)) return send(reply, 401, exaError(401, 'INVALID_API_KEY', 'Invalid API key'));
    return null;
  };
  const found = (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply): SimRun | null => {
    const run = sim.runs.get(request.params.id);
    if (run === undefined || run.provider !== 'exa') {
      void send(reply, 404, exaError(404, 'NOT_FOUND', 'Agent run not found'));
      return null;
    }
    return run;
  };

  app.post('/agent/runs', async (request, reply) => {
    const stop = await gate(request, reply);
    if (stop !== null) return stop === 'hung' ? undefined : stop;
    context.record(request, 'exa');
    const valid = validateExa(request.body);
    if (!valid.ok) return send(reply, 400, exaError(400, 'INVALID_REQUEST_BODY', valid.problem));
    const query = valid.body.query as string;
    const parsed = researchDirectives(query, 'exa');
    if (!parsed.ok) return send(reply, 400, exaError(400, 'INVALID_REQUEST_BODY', parsed.problem));
    if (parsed.directives.startError !== null) return send(reply, parsed.directives.startError, exaFailure(parsed.directives.startError), parsed.directives.startError === 429 ? { 'retry-after': '1' } : {});
    const budget = isObject(valid.body.budget) && typeof valid.body.budget.maxCostDollars === 'number' ? Math.round(valid.body.budget.maxCostDollars * 1_000_000) : null;
    const run = sim.create({
      id: `agent_run_${randomBytes(12).toString('hex')}`, provider: 'exa', variant: (valid.body.effort as string | undefined) ?? 'auto', input: query,
      outputSchema: isObject(valid.body.outputSchema) ? valid.body.outputSchema : null, directives: parsed.directives, budgetMicros: budget,
    });
    return send(reply, 200, exaRun(sim, run));
  });

  app.get('/agent/runs', async (request, reply) => {
    const stop = await gate(request, reply);
    if (stop !== null) return stop === 'hung' ? undefined : stop;
    const data = [...sim.runs.values()].filter((run) => run.provider === 'exa').reverse().slice(0, 100).map((run) => exaRun(sim, run));
    return send(reply, 200, { object: 'list', data, hasMore: false, nextCursor: null });
  });

  app.get<{ Params: { id: string } }>('/agent/runs/:id', async (request, reply) => {
    const stop = await gate(request, reply);
    if (stop !== null) return stop === 'hung' ? undefined : stop;
    const run = found(request, reply);
    if (run === null) return reply;
    run.polls += 1;
    return send(reply, 200, exaRun(sim, run));
  });

  app.post<{ Params: { id: string } }>('/agent/runs/:id/cancel', async (request, reply) => {
    const stop = await gate(request, reply);
    if (stop !== null) return stop === 'hung' ? undefined : stop;
    const run = found(request, reply);
    if (run === null) return reply;
    const state = sim.state(run);
    if (state === 'queued' || state === 'running') run.cancelledAtMs = sim.now();
    return send(reply, 200, exaRun(sim, run));
  });
}

const TAVILY_MODELS = ['mini', 'pro', 'auto'] as const;
const TAVILY_FIELDS = ['input', 'model', 'output_schema', 'stream', 'citation_format'];
const tavilyError = (error: string): JsonObject => ({ detail: { error } });
const tavilyFailure = (status: number): JsonObject =>
  status === 429 ? tavilyError('Your request has been blocked due to excessive requests. Please reduce rate of requests.') : tavilyError('Error when executing research task');

/** Tavily's research under /tavily: create and get (Tavily has no cancel). */
export function tavilyResearchRoutes(app: FastifyInstance, context: SimContext, sim: ResearchSim, apiKey: string): void {
  const gate = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | 'hung' | null> => {
    const down = await outage(context, 'tavily', reply, tavilyFailure);
    if (down !== null) return down;
    if (!accepts(apiKey, bearerOf(request.headers.authorization))) return send(reply, 401, tavilyError('Unauthorized: missing or invalid API key.'));
    return null;
  };

  app.post('/research', async (request, reply) => {
    const stop = await gate(request, reply);
    if (stop !== null) return stop === 'hung' ? undefined : stop;
    context.record(request, 'tavily');
    const body = request.body;
    if (!isObject(body)) return send(reply, 400, tavilyError('Request body must be a JSON object.'));
    const extra = unknownField(body, TAVILY_FIELDS);
    if (extra !== undefined) return send(reply, 400, tavilyError(`Unknown parameter: ${extra}.`));
    if (typeof body.input !== 'string' || body.input.trim() === '') return send(reply, 400, tavilyError('Input is missing.'));
    const problem = firstProblem(
      checkEnum(body.model, 'model', TAVILY_MODELS) === undefined ? undefined : 'Invalid model. Must be one of: mini, pro, auto',
      checkEnum(body.citation_format, 'citation_format', ['numbered', 'mla', 'apa', 'chicago']),
      body.stream !== undefined && body.stream !== false ? 'stream must be false on this endpoint of the simulator' : undefined,
      body.output_schema !== undefined && !(isObject(body.output_schema) && isObject(body.output_schema.properties)) ? 'output_schema must be an object with properties' : undefined,
    );
    if (problem !== undefined) return send(reply, 400, tavilyError(problem));
    const parsed = researchDirectives(body.input, 'tavily');
    if (!parsed.ok) return send(reply, 400, tavilyError(parsed.problem));
    if (parsed.directives.startError !== null) return send(reply, parsed.directives.startError, tavilyFailure(parsed.directives.startError), parsed.directives.startError === 429 ? { 'retry-after': '1' } : {});
    const model = (body.model as string | undefined) ?? 'auto';
    const run = sim.create({
      id: randomUUID(), provider: 'tavily', variant: model, input: body.input,
      outputSchema: isObject(body.output_schema) ? body.output_schema : null, directives: parsed.directives, budgetMicros: null,
    });
    return send(reply, 201, { request_id: run.id, created_at: new Date(run.createdAtMs).toISOString(), status: 'pending', input: run.input, model, response_time: 0.1 });
  });

  app.get<{ Params: { id: string }; Querystring: Record<string, string> }>('/research/:id', async (request, reply) => {
    const stop = await gate(request, reply);
    if (stop !== null) return stop === 'hung' ? undefined : stop;
    const run = sim.runs.get(request.params.id);
    if (run === undefined || run.provider !== 'tavily') return send(reply, 404, tavilyError('Research task not found'));
    run.polls += 1;
    const state = sim.state(run);
    const usage = request.query.include_usage === 'true';
    if (state === 'queued' || state === 'running') return send(reply, 202, { request_id: run.id, status: state === 'queued' ? 'pending' : 'in_progress', response_time: 0.1 });
    if (state === 'failed' || state === 'cancelled') return send(reply, 200, { request_id: run.id, status: 'failed', response_time: 0.1 });
    const output = sim.output(run);
    return send(reply, 200, {
      request_id: run.id, created_at: new Date(run.createdAtMs).toISOString(), status: 'completed',
      content: output.structured ?? output.text,
      sources: output.sources.map((source) => ({ ...source, favicon: `${new URL(source.url).origin}/favicon.ico` })),
      response_time: Math.round(run.durationMs / 100) / 10,
      ...(usage ? { usage: { credits: sim.fullCost(run) } } : {}),
    });
  });
}
