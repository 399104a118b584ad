import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Ajv from 'ajv';
import type { ValidateFunction } from 'ajv';
import { createGenerator } from 'ts-json-schema-generator';
import { Exa, ExaError } from 'exa-js';
import { tavily } from '@tavily/core';
import { RESEARCH_MODELS } from '@svc/contracts';
import type { ResearchModelSpec } from '@svc/contracts';
import type { FastifyInstance } from 'fastify';
import { repoRoot } from '@svc/test-kit';
import { ExaAgentAdapter } from '../../services/billing/src/adapters/research/exa-agent.adapter';
import { TavilyResearchAdapter } from '../../services/billing/src/adapters/research/tavily-research.adapter';
import { buildSimulator, DEFAULT_KEYS } from '../../tools/provider-sim/src/server';

/**
 * The research endpoints against the providers' own clients (docs/providers.md, "The contract
 * suite"; docs/decisions/0062), as providers.contract.spec.ts does for search:
 *
 * 1. every effort and model the catalog names, sent through exa-js (`agent.runs`) and
 *    @tavily/core (`research`, `getResearch`) to the simulator: accepted, followed to the end,
 *    and answered in shapes the clients parse;
 * 2. what billing's research adapters really send, caught on a loopback recorder, validated
 *    against JSON Schema generated from the clients' own request types;
 * 3. the simulator refusing what the real APIs refuse, in their error shapes.
 */

type Json = Record<string, unknown>;

const generator = createGenerator({
  path: join(repoRoot(), 'test/contract/official-request-types.ts'),
  tsconfig: join(repoRoot(), 'test/contract/tsconfig.json'),
  skipTypeCheck: true,
  expose: 'export',
  topRef: false,
  jsDoc: 'none',
});

const ajv = new Ajv({ strict: false, allErrors: true });

/** exa-js's CreateAgentRunParams, closed: the body may hold only what the client's type declares. */
function exaBodySchema(): Json {
  const schema = generator.createSchema('ExaAgentRunBody') as Json;
  return { ...schema, additionalProperties: false };
}

/**
 * Tavily's research body as @tavily/core puts it on the wire: `input` and the declared options
 * the client sends, renamed to snake_case (the client's own options that never reach the body,
 * timeout and the session headers, left out; its index signature is not part of the contract).
 */
function tavilyBodySchema(): Json {
  const options = generator.createSchema('TavilyResearchOptionsType') as Json;
  const properties = options.properties as Record<string, Json>;
  const sent: Record<string, string> = { model: 'model', outputSchema: 'output_schema', stream: 'stream', citationFormat: 'citation_format' };
  const renamed: Record<string, Json> = { input: { type: 'string' } };
  for (const [name, wire] of Object.entries(sent)) {
    const rules = properties[name];
    if (rules === undefined) throw new Error(`@tavily/core's research options no longer declare ${name}`);
    renamed[wire] = rules;
  }
  return { type: 'object', properties: renamed, required: ['input'], additionalProperties: false, ...(options.definitions === undefined ? {} : { definitions: options.definitions }) };
}

const EXA_BODY = exaBodySchema();
const TAVILY_BODY = tavilyBodySchema();
const validators: Record<'exa' | 'tavily', ValidateFunction> = { exa: ajv.compile(EXA_BODY), tavily: ajv.compile(TAVILY_BODY) };

function problems(validate: ValidateFunction, value: unknown): string[] {
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

/** Every value a property of a schema allows by `enum`/`const` (through refs, unions and arrays). */
function enumValues(schema: Json, property: string): string[] {
  const out = new Set<string>();
  const definitions = (schema.definitions ?? {}) as Record<string, Json>;
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    const n = node as Json;
    if (typeof n.$ref === 'string') visit(definitions[n.$ref.replace('#/definitions/', '')]);
    if (Array.isArray(n.enum)) for (const value of n.enum) if (typeof value === 'string') out.add(value);
    if (typeof n.const === 'string') out.add(n.const);
    for (const branch of [...((n.anyOf as unknown[]) ?? []), ...((n.oneOf as unknown[]) ?? [])]) visit(branch);
  };
  visit((schema.properties as Record<string, unknown>)[property]);
  return [...out].sort();
}

/** A loopback server that records what an adapter sends and answers a minimal started run. */
class Recorder {
  readonly requests: { method: string; path: string; body: unknown }[] = [];
  private server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((request: IncomingMessage, response: ServerResponse) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const path = new URL(request.url ?? '/', 'http://recorder').pathname;
        this.requests.push({ method: request.method ?? '', path, body: text === '' ? undefined : JSON.parse(text) });
        const body = path.startsWith('/exa') ? { id: 'agent_run_recorded', object: 'agent_run', status: 'queued' } : { request_id: 'recorded-request', status: 'pending' };
        response.writeHead(path.startsWith('/exa') ? 200 : 201, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  last(): { method: string; path: string; body: unknown } {
    const last = this.requests[this.requests.length - 1];
    if (last === undefined) throw new Error('nothing recorded');
    return last;
  }
}

const of = (provider: 'exa' | 'tavily'): ResearchModelSpec[] => RESEARCH_MODELS.filter((model) => model.provider === provider);
const INPUT = 'contract suite research sim:*=run300';
const SCHEMA = { type: 'object', properties: { summary: { type: 'string', description: 'A summary' }, count: { type: 'integer', description: 'A count' } }, required: ['summary'] };

describe('research: the providers\' official clients as the contract', () => {
  let simulator: FastifyInstance;
  let simUrl: string;
  const recorder = new Recorder();

  beforeAll(async () => {
    simulator = buildSimulator({ researchMs: 300 });
    simUrl = await simulator.listen({ host: '127.0.0.1', port: 0 });
    await recorder.start();
  });

  afterAll(async () => {
    await recorder.stop();
    await simulator.close();
  });

  const exaClient = (): Exa => new Exa(DEFAULT_KEYS.exa, `${simUrl}/exa`);
  const tavilyClient = () => tavily({ apiKey: DEFAULT_KEYS.tavily, apiBaseURL: `${simUrl}/tavily` });

  describe('1. official client → simulator', () => {
    it('reads the efforts and models from the official types (a guard: the generator saw them)', () => {
      expect(enumValues(EXA_BODY, 'effort')).toEqual(expect.arrayContaining(['minimal', 'low', 'medium', 'high', 'xhigh', 'auto', 'ultra']));
      expect(enumValues(TAVILY_BODY, 'model')).toEqual(['auto', 'mini', 'pro']);
    });

    it('every catalog effort is one exa-js types, and every Tavily model one @tavily/core types', () => {
      const efforts = enumValues(EXA_BODY, 'effort');
      const models = enumValues(TAVILY_BODY, 'model');
      for (const model of of('exa')) expect({ model: model.id, typed: efforts.includes(model.upstreamVariant) }).toEqual({ model: model.id, typed: true });
      for (const model of of('tavily')) expect({ model: model.id, typed: models.includes(model.upstreamVariant) }).toEqual({ model: model.id, typed: true });
    });

    it.each(of('exa').map((model) => [model.id, model] as const))('exa-js: %s created, polled to the end and parsed', async (_id, model) => {
      const exa = exaClient();
      const run = await exa.agent.runs.create({
        query: INPUT, effort: model.upstreamVariant as 'auto', outputSchema: SCHEMA, metadata: { svc_run_id: 'contract' },
        ...(model.budget === null ? {} : { budget: { maxCostDollars: 2.5 } }),
      });
      expect(run.id).toMatch(/^agent_run_/);
      const done = await exa.agent.runs.pollUntilFinished(run.id, { pollInterval: 100, timeoutMs: 10_000 });
      expect(done.status).toBe('completed');
      expect(done.output?.structured).toEqual(expect.objectContaining({ summary: expect.any(String), count: 7 }));
      expect(done.output?.grounding?.[0]?.citations.length).toBeGreaterThan(0);
      const cost = done.costDollars?.total ?? 0;
      if (model.budget === null) {
        expect(Math.round(cost * 1_000_000)).toBe(model.providerPriceMicros);
      } else {
        expect(cost).toBeGreaterThan(0);
        expect(cost).toBeLessThanOrEqual(2.5);
      }
    });

    it('exa-js: a cancel ends a run cancelled, with what it used so far', async () => {
      const exa = exaClient();
      const run = await exa.agent.runs.create({ query: 'cancel me sim:exa=forever', effort: 'auto', budget: { maxCostDollars: 3 } });
      await new Promise((resolve) => setTimeout(resolve, 250));
      const cancelled = await exa.agent.runs.cancel(run.id);
      expect(cancelled.status).toBe('cancelled');
      expect((await exa.agent.runs.get(run.id)).status).toBe('cancelled');
    });

    it('exa-js: overcap reports more than the budget; fail ends failed; both parsed', async () => {
      const exa = exaClient();
      const over = await exa.agent.runs.create({ query: 'over sim:exa=overcap,run100', effort: 'auto', budget: { maxCostDollars: 2 } });
      const overDone = await exa.agent.runs.pollUntilFinished(over.id, { pollInterval: 50, timeoutMs: 5_000 });
      expect(overDone.costDollars?.total).toBe(3);
      const failing = await exa.agent.runs.create({ query: 'fails sim:exa=fail,run100', effort: 'low' });
      const failed = await exa.agent.runs.pollUntilFinished(failing.id, { pollInterval: 50, timeoutMs: 5_000 });
      expect(failed.status).toBe('failed');
      expect(failed.error?.message).toEqual(expect.any(String));
    });

    it.each(of('tavily').map((model) => [model.id, model] as const))('@tavily/core: %s created, polled with usage to the end and parsed', async (_id, model) => {
      const client = tavilyClient();
      const created = await client.research(INPUT, { model: model.upstreamVariant as 'mini' });
      expect(created).toEqual(expect.objectContaining({ requestId: expect.any(String), status: 'pending', model: model.upstreamVariant }));
      const started = Date.now();
      let answer = await client.getResearch((created as { requestId: string }).requestId, { includeUsage: true });
      while (answer.status !== 'completed' && Date.now() - started < 10_000) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        answer = await client.getResearch((created as { requestId: string }).requestId, { includeUsage: true });
      }
      // The client hands back Tavily's body as it is (snake_case), whatever its declared type says.
      const raw = answer as unknown as { status: string; content: unknown; sources: { url: string }[]; usage?: { credits: number } };
      expect(raw.status).toBe('completed');
      expect(typeof raw.content).toBe('string');
      expect(raw.sources.length).toBeGreaterThan(0);
      expect(raw.usage?.credits).toBeGreaterThan(0);
      expect((raw.usage?.credits ?? 0) * model.priceMicros).toBeLessThanOrEqual(model.maxCostMicros);
    });

    it('@tavily/core: an output_schema gives structured content', async () => {
      const client = tavilyClient();
      const created = await client.research('structured sim:tavily=run100', { model: 'mini', outputSchema: SCHEMA }) as { requestId: string };
      await new Promise((resolve) => setTimeout(resolve, 300));
      const raw = (await client.getResearch(created.requestId)) as unknown as { status: string; content: unknown };
      expect(raw.status).toBe('completed');
      expect(raw.content).toEqual(expect.objectContaining({ summary: expect.any(String), count: 7 }));
    });
  });

  describe('2. billing\'s research adapters against the official request types', () => {
    const settings = (path: string) => ({ baseUrl: `${recorder.url}/${path}`, apiKey: 'recorder-key', timeoutMs: 5_000 });

    it.each(RESEARCH_MODELS.map((model) => [model.id, model] as const))('%s: the start request, with and without an output schema', async (_id, model) => {
      for (const outputSchema of [null, SCHEMA]) {
        const adapter = model.provider === 'exa' ? new ExaAgentAdapter(settings('exa')) : new TavilyResearchAdapter(settings('tavily'));
        const budget = model.budget === null ? null : 2_400_000;
        const outcome = await adapter.start({ model, input: 'what changed', outputSchema, providerBudgetMicros: budget, runId: 'rsr_contract' });
        expect(outcome.kind).toBe('started');
        const sent = recorder.last();
        if (model.provider === 'exa') {
          expect([sent.method, sent.path]).toEqual(['POST', '/exa/agent/runs']);
          expect(problems(validators.exa, sent.body)).toEqual([]);
          expect(sent.body).toEqual(expect.objectContaining({ effort: model.upstreamVariant, ...(budget === null ? {} : { budget: { maxCostDollars: 2.4 } }) }));
          if (budget === null) expect(sent.body).not.toHaveProperty('budget');
        } else {
          expect([sent.method, sent.path]).toEqual(['POST', '/tavily/research']);
          expect(problems(validators.tavily, sent.body)).toEqual([]);
          expect(sent.body).toEqual(expect.objectContaining({ model: model.upstreamVariant, input: 'what changed' }));
        }
      }
    });

    it('the recorder check can fail: a value or field the official types do not allow is reported', () => {
      expect(problems(validators.exa, { query: 'x', effort: 'turbo' })).not.toEqual([]);
      expect(problems(validators.exa, { query: 'x', budget: { maxCost: 1 } })).not.toEqual([]);
      expect(problems(validators.tavily, { input: 'x', model: 'max' })).not.toEqual([]);
      expect(problems(validators.tavily, { input: 'x', outputSchema: {} })).not.toEqual([]);
    });

    it('the adapters follow a run in the simulator to its end, with its cost', async () => {
      const exa = new ExaAgentAdapter({ baseUrl: `${simUrl}/exa`, apiKey: DEFAULT_KEYS.exa, timeoutMs: 5_000 });
      const tav = new TavilyResearchAdapter({ baseUrl: `${simUrl}/tavily`, apiKey: DEFAULT_KEYS.tavily, timeoutMs: 5_000 });
      const medium = RESEARCH_MODELS.find((model) => model.id === 'exa/agent-medium') as ResearchModelSpec;
      const mini = RESEARCH_MODELS.find((model) => model.id === 'tavily/research-mini') as ResearchModelSpec;
      for (const [adapter, model] of [[exa, medium], [tav, mini]] as const) {
        const started = await adapter.start({ model, input: 'adapter run sim:*=run150', outputSchema: null, providerBudgetMicros: null, runId: 'rsr_x' });
        if (started.kind !== 'started') throw new Error(`not started: ${JSON.stringify(started)}`);
        await new Promise((resolve) => setTimeout(resolve, 400));
        const polled = await adapter.poll(started.providerRunId, model);
        expect(polled).toEqual({ kind: 'state', state: expect.objectContaining({ kind: 'completed', sources: expect.arrayContaining([expect.objectContaining({ url: expect.stringMatching(/^https:\/\//) })]) }) });
        const state = polled.kind === 'state' ? polled.state : null;
        if (state?.kind !== 'completed') throw new Error('not completed');
        if (model.provider === 'exa') expect(state.cost).toEqual({ providerCostMicros: 100_000 });
        else expect(state.cost).toEqual({ credits: expect.any(Number) });
      }
    });
  });

  describe('3. the simulator refuses what the real APIs refuse, in their error shapes', () => {
    it('Exa: a budget on a fixed effort is 400, read by exa-js as an ExaError', async () => {
      const error = await exaClient().agent.runs.create({ query: 'x', effort: 'medium', budget: { maxCostDollars: 1 } }).then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(ExaError);
      expect((error as ExaError).statusCode).toBe(400);
      expect((error as Error).message).toContain('budget is currently supported only for metered efforts');
    });

    it('Exa: an unknown effort, a budget out of range, and an unknown field are 400', async () => {
      for (const params of [{ query: 'x', effort: 'turbo' }, { query: 'x', effort: 'auto', budget: { maxCostDollars: 0.5 } }, { query: 'x', extra: true }]) {
        const error = await exaClient().agent.runs.create(params as never).then(() => null, (e: unknown) => e);
        expect((error as ExaError).statusCode).toBe(400);
      }
    });

    it('Exa: an unknown run is 404, a bad key 401', async () => {
      expect(((await exaClient().agent.runs.get('agent_run_nope').then(() => null, (e: unknown) => e)) as ExaError).statusCode).toBe(404);
      expect(((await new Exa('wrong-key', `${simUrl}/exa`).agent.runs.get('agent_run_nope').then(() => null, (e: unknown) => e)) as ExaError).statusCode).toBe(401);
    });

    it('Tavily: an unknown model is 400 with {detail: {error}}, read by @tavily/core', async () => {
      const error = await tavilyClient().research('x', { model: 'max' as 'mini' }).then(() => null, (e: unknown) => e);
      expect((error as Error).message).toContain('Invalid model');
    });

    it('Tavily: an unknown task is 404 and a bad key 401, read by @tavily/core', async () => {
      expect(((await tavilyClient().getResearch('nope').then(() => null, (e: unknown) => e)) as Error).message).toContain('not found');
      const badKey = tavily({ apiKey: 'tvly-wrong', apiBaseURL: `${simUrl}/tavily` });
      expect(((await badKey.research('x').then(() => null, (e: unknown) => e)) as Error).message).toContain('Unauthorized');
    });
  });
});
