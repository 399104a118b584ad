import type { FastifyInstance } from 'fastify';
import { buildSimulator } from '../src/server';

/**
 * The simulator's research runs on a clock the test moves: Exa's Agent runs and Tavily's
 * research go from queued to their end in the time asked, report deterministic outputs and
 * metered costs, and follow each directive (fail, overcap, forever, a refused create); a
 * cancel stops an Exa run and bills its usage so far. (What the official clients send and read
 * is the contract suite's: test/contract/research.contract.spec.ts.)
 */
describe('provider-sim: research runs', () => {
  let app: FastifyInstance;
  let now = 1_000_000;
  const EXA = { 'x-api-key': 'sim-exa-key' };
  const TAVILY = { authorization: 'Bearer tvly-sim-key' };

  beforeAll(async () => {
    app = buildSimulator({ researchMs: 10_000, researchClock: () => now });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
  });

  const exaCreate = (payload: Record<string, unknown>, headers: Record<string, string> = EXA) => app.inject({ method: 'POST', url: '/exa/agent/runs', payload, headers });
  const exaGet = async (id: string): Promise<Record<string, unknown>> => (await app.inject({ method: 'GET', url: `/exa/agent/runs/${id}`, headers: EXA })).json();
  const tavilyCreate = (payload: Record<string, unknown>) => app.inject({ method: 'POST', url: '/tavily/research', payload, headers: TAVILY });
  const tavilyGet = (id: string) => app.inject({ method: 'GET', url: `/tavily/research/${id}?include_usage=true`, headers: TAVILY });

  it('an Exa fixed effort runs for its time, then completes at its price with a deterministic output, structured per the schema and cited', async () => {
    const schema = { type: 'object', properties: { summary: { type: 'string' }, year: { type: 'integer' } } };
    const created = await exaCreate({ query: 'history of the telegraph', effort: 'medium', outputSchema: schema });
    expect(created.statusCode).toBe(200);
    const id = String(created.json().id);
    expect(id).toMatch(/^agent_run_[0-9a-f]{24}$/);
    expect(created.json()).toMatchObject({ object: 'agent_run', status: 'queued', costDollars: { total: 0 } });
    now += 5_000;
    expect(await exaGet(id)).toMatchObject({ status: 'running', output: null });
    now += 5_000;
    const done = await exaGet(id);
    expect(done).toMatchObject({ status: 'completed', stopReason: 'schema_satisfied', costDollars: { total: 0.1 } });
    const output = done.output as { text: string; structured: Record<string, unknown>; grounding: { citations: { url: string; title: string }[] }[] };
    expect(output.structured).toEqual({ summary: 'summary of history of the telegraph', year: 7 });
    expect(output.text).toContain('history of the telegraph');
    expect(output.grounding[0]?.citations).toHaveLength(3);
    // The same input, the same answer.
    const again = String((await exaCreate({ query: 'history of the telegraph', effort: 'medium', outputSchema: schema })).json().id);
    now += 10_000;
    expect((await exaGet(again)).output).toEqual(done.output);
  });

  it('a metered Exa effort bills part of its budget; overcap reports 1.5 times it; a fixed effort overcap 3 times its price', async () => {
    const metered = String((await exaCreate({ query: 'grid storage', effort: 'auto', budget: { maxCostDollars: 2 } })).json().id);
    const over = String((await exaCreate({ query: 'grid storage sim:exa=overcap', effort: 'auto', budget: { maxCostDollars: 2 } })).json().id);
    const fixedOver = String((await exaCreate({ query: 'grid storage sim:*=overcap', effort: 'low' })).json().id);
    now += 10_000;
    const cost = ((await exaGet(metered)).costDollars as { total: number }).total;
    expect(cost).toBeGreaterThanOrEqual(0.4);
    expect(cost).toBeLessThanOrEqual(1.6);
    expect(await exaGet(over)).toMatchObject({ status: 'completed', stopReason: 'budget_reached', costDollars: { total: 3 } });
    expect(await exaGet(fixedOver)).toMatchObject({ status: 'completed', costDollars: { total: 0.075 } });
  });

  it('fail ends an Exa run failed with half its usage so far; forever never ends until cancelled, then bills its usage to the cancel', async () => {
    const failing = String((await exaCreate({ query: 'q sim:exa=fail', effort: 'auto', budget: { maxCostDollars: 4 } })).json().id);
    const forever = String((await exaCreate({ query: 'q sim:exa=forever,run1000', effort: 'auto', budget: { maxCostDollars: 4 } })).json().id);
    now += 20_000;
    const failed = await exaGet(failing);
    expect(failed).toMatchObject({ status: 'failed', output: null, error: { code: 'RUN_FAILED' } });
    expect((failed.costDollars as { total: number }).total).toBeGreaterThan(0);
    expect(await exaGet(forever)).toMatchObject({ status: 'running' });
    const cancelled = (await app.inject({ method: 'POST', url: `/exa/agent/runs/${forever}/cancel`, headers: { ...EXA, 'content-type': 'application/json' } })).json();
    expect(cancelled).toMatchObject({ status: 'cancelled', stopReason: 'cancelled' });
    expect((cancelled.costDollars as { total: number }).total).toBeGreaterThan(0);
    // Cancelled stays cancelled; a second cancel changes nothing.
    now += 60_000;
    expect((await exaGet(forever)).costDollars).toEqual(cancelled.costDollars);
  });

  it('Exa refuses what Exa refuses: a bad key, an unknown field or effort, a budget on a fixed effort or out of range, a directive it does not know; error500/error429 refuse the create', async () => {
    expect((await exaCreate({ query: 'q' }, { 'x-api-key': 'nope' })).statusCode).toBe(401);
    expect((await exaCreate({ query: 'q', surprise: 1 })).statusCode).toBe(400);
    expect((await exaCreate({ query: 'q', effort: 'huge' })).statusCode).toBe(400);
    expect((await exaCreate({ query: 'q', effort: 'low', budget: { maxCostDollars: 2 } })).statusCode).toBe(400);
    expect((await exaCreate({ query: 'q', effort: 'auto', budget: { maxCostDollars: 0.5 } })).statusCode).toBe(400);
    expect((await exaCreate({ query: 'q sim:exa=explode' })).statusCode).toBe(400);
    expect((await exaCreate({ query: 'q sim:exa=error500' })).statusCode).toBe(500);
    const limited = await exaCreate({ query: 'q sim:exa=error429' });
    expect([limited.statusCode, limited.headers['retry-after']]).toEqual([429, '1']);
    expect((await app.inject({ method: 'GET', url: '/exa/agent/runs/agent_run_missing', headers: EXA })).statusCode).toBe(404);
  });

  it('Tavily: 201 pending, 202 while it runs, 200 completed with its credits (mini within 4..110) and the structured content; overcap reports 300 credits; fail reports no usage', async () => {
    const created = await tavilyCreate({ input: 'sodium-ion cells', model: 'mini', output_schema: { properties: { verdict: { type: 'string' } } } });
    expect(created.statusCode).toBe(201);
    const id = String(created.json().request_id);
    expect(created.json()).toMatchObject({ status: 'pending', model: 'mini' });
    expect((await tavilyGet(id)).statusCode).toBe(202);
    now += 5_000;
    expect((await tavilyGet(id)).json()).toMatchObject({ status: 'in_progress' });
    now += 5_000;
    const done = await tavilyGet(id);
    expect(done.statusCode).toBe(200);
    expect(done.json()).toMatchObject({ status: 'completed', content: { verdict: 'verdict of sodium-ion cells' } });
    const credits = (done.json() as { usage: { credits: number } }).usage.credits;
    expect(credits).toBeGreaterThanOrEqual(4);
    expect(credits).toBeLessThanOrEqual(110);
    expect((done.json() as { sources: unknown[] }).sources).toHaveLength(3);

    const over = String((await tavilyCreate({ input: 'x sim:tavily=overcap', model: 'pro' })).json().request_id);
    const failing = String((await tavilyCreate({ input: 'x sim:*=fail', model: 'pro' })).json().request_id);
    now += 10_000;
    expect((await tavilyGet(over)).json()).toMatchObject({ status: 'completed', usage: { credits: 300 } });
    const failed = await tavilyGet(failing);
    expect([failed.statusCode, failed.json().status, failed.json().usage]).toEqual([200, 'failed', undefined]);
    // Tavily has no cancel.
    expect((await app.inject({ method: 'POST', url: `/tavily/research/${over}/cancel`, headers: TAVILY })).statusCode).toBe(404);
    expect((await tavilyCreate({ input: 'x', model: 'max' })).statusCode).toBe(400);
  });

  it('GET /_sim/research lists every run with its status, polls, budget and what it would bill now', async () => {
    const runs = (await app.inject({ method: 'GET', url: '/_sim/research' })).json().runs as { provider: string; status: string; polls: number }[];
    expect(runs.length).toBeGreaterThanOrEqual(10);
    expect(runs.every((run) => ['exa', 'tavily'].includes(run.provider) && typeof run.polls === 'number')).toBe(true);
  });
});
