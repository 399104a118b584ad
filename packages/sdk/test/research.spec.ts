import { LIMITS } from '@svc/contracts';
import { RESEARCH_WAIT_DEFAULTS, ResearchWaitTimeoutError, SearchGateway, SearchGatewayError } from '@svc/sdk';
import type { ResearchRun } from '@svc/sdk';
import { main } from '../src/cli/main';
import type { CliIo } from '../src/cli/main';
import { ScriptedServer, apiError, json } from './scripted-server';

/**
 * research.create / wait / cancel and `svc research` against a scripted server: what is sent,
 * the bounded poll of wait (its waits, its give-up, an error that stops it), and the command
 * line's output and exit codes.
 */
const RUN: ResearchRun = {
  id: 'rsr_00000000000000000000000001', object: 'research_run', status: 'queued', input: 'q', models: ['exa/agent-medium'], model: 'exa/agent-medium',
  max_cost_usd: 0.5, held_usd: 0.125, cost_usd: null, attempts: [{ model: 'exa/agent-medium', provider: 'exa', status: 'pending', error: null, cost_usd: null }],
  error: null, metadata: null, created_at: '2026-12-20T10:00:00.000Z', started_at: null, completed_at: null, cancel_requested_at: null,
  output: null, sources: [], request_id: 'req_aaaaaaaaaaaaaaaaaaaaaaaa',
};
const ATTEMPT = { model: 'exa/agent-medium', provider: 'exa', status: 'pending', error: null, cost_usd: null } as const;
const running: ResearchRun = { ...RUN, status: 'running', started_at: '2026-12-20T10:00:01.000Z', attempts: [{ ...ATTEMPT, status: 'running' }] };
const completed: ResearchRun = {
  ...running, status: 'completed', held_usd: 0, cost_usd: 0.125, completed_at: '2026-12-20T10:01:00.000Z',
  attempts: [{ ...ATTEMPT, status: 'completed', cost_usd: 0.125 }],
  output: { text: 'The answer.', structured: null }, sources: [{ url: 'https://example.com/a', title: 'A' }],
};

describe('research runs in the SDK', () => {
  const server = ScriptedServer.forSuite();

  const clock = (): { now: () => number; waits: number[]; sleep: (ms: number) => Promise<void> } => {
    let t = 0;
    const waits: number[] = [];
    return { now: () => t, waits, sleep: async (ms) => { waits.push(ms); t += ms; } };
  };

  it('create sends an Idempotency-Key (the same on a retry), so a retried creation never starts two runs', async () => {
    server.script(apiError(503, 'overloaded', {}, { 'retry-after': '0' }), json(202, RUN));
    const client = new SearchGateway({ baseUrl: server.url, apiKey: 'svc-api', sleep: async () => undefined });
    await expect(client.research.create({ input: 'q', model: 'exa/agent-medium', max_cost_usd: 0.5 })).resolves.toEqual(RUN);
    const keys = server.seen.map((r) => r.headers['idempotency-key']);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
  });

  it('wait polls until the run has ended, each wait half as long again up to maxIntervalMs', async () => {
    server.script(json(200, RUN), json(200, running), json(200, running), json(200, running), json(200, running), json(200, completed));
    const c = clock();
    const client = new SearchGateway({ baseUrl: server.url, apiKey: 'svc-api', sleep: c.sleep, now: c.now });
    await expect(client.research.wait(RUN.id, { intervalMs: 1_000, maxIntervalMs: 3_000 })).resolves.toEqual(completed);
    expect(c.waits).toEqual([1_000, 1_500, 2_250, 3_000, 3_000]);
    expect(server.seen.map((r) => `${r.method} ${r.url}`)).toEqual(Array(6).fill(`GET /v1/research/${RUN.id}`));
  });

  it('wait is bounded: past maxWaitMs it rejects with the last run read, and stops reading', async () => {
    server.script(json(200, running));
    const c = clock();
    const client = new SearchGateway({ baseUrl: server.url, apiKey: 'svc-api', sleep: c.sleep, now: c.now });
    const failure = await client.research.wait(RUN.id, { intervalMs: 2_000, maxWaitMs: 5_000 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ResearchWaitTimeoutError);
    expect((failure as ResearchWaitTimeoutError).run.status).toBe('running');
    // Waits of 2 s, 3 s (the last one cut to what was left): 3 reads in 5 s.
    expect(c.waits).toEqual([2_000, 3_000]);
    expect(server.seen).toHaveLength(3);
  });

  it('wait stops at an error answer (a 404 is not retried) and refuses bounds outside its range', async () => {
    server.script(apiError(404, 'not_found'));
    const client = new SearchGateway({ baseUrl: server.url, apiKey: 'svc-api', sleep: async () => undefined });
    await expect(client.research.wait('rsr_x')).rejects.toBeInstanceOf(SearchGatewayError);
    expect(server.seen).toHaveLength(1);
    await expect(client.research.wait('rsr_x', { intervalMs: 100 })).rejects.toThrow(RangeError);
    await expect(client.research.wait('rsr_x', { maxWaitMs: 7_200_001 })).rejects.toThrow(RangeError);
    await expect(client.research.wait('rsr_x', { intervalMs: 5_000, maxIntervalMs: 1_000 })).rejects.toThrow(RangeError);
  });

  it('its default and longest wait are the platform\'s (LIMITS.researchWaitSeconds)', () => {
    expect(RESEARCH_WAIT_DEFAULTS.maxWaitMs).toBe(LIMITS.researchWaitSeconds.default * 1000);
    expect(RESEARCH_WAIT_DEFAULTS.maxMaxWaitMs).toBe(LIMITS.researchWaitSeconds.max * 1000);
  });

  describe('svc research', () => {
    const run = async (argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
      let stdout = '';
      let stderr = '';
      const c = clock();
      const io: CliIo = {
        stdout: (t) => { stdout += t; },
        stderr: (t) => { stderr += t; },
        env: { SVC_BASE_URL: server.url, SVC_API_KEY: 'svc-api' },
        sleep: c.sleep,
        now: c.now,
      };
      return { code: await main(argv, io), stdout, stderr };
    };

    it('"…" --max-cost 0.50 --wait creates the run with the default models, waits, prints the answer and its sources, exits 0', async () => {
      server.script(json(202, RUN), json(200, running), json(200, completed));
      const { code, stdout } = await run(['research', 'how', 'do', 'tides', 'work?', '--max-cost', '0.50', '--wait']);
      expect(code).toBe(0);
      expect(JSON.parse(server.seen[0]?.body ?? '')).toEqual({
        input: 'how do tides work?', models: ['exa/agent-high', 'exa/agent-medium', 'exa/agent-low', 'exa/agent-minimal'], max_cost_usd: 0.5,
      });
      expect(server.seen.slice(1).map((r) => r.url)).toEqual([`/v1/research/${RUN.id}`, `/v1/research/${RUN.id}`]);
      expect(stdout).toContain(`${RUN.id} completed: exa/agent-medium, cost 0.125 USD of a 0.5 USD cap`);
      expect(stdout).toContain('The answer.');
      expect(stdout).toContain('1. A https://example.com/a');
    });

    it('one -m, --output-schema and --metadata go into the body; without --wait it prints the queued run', async () => {
      server.script(json(202, RUN));
      const { code, stdout } = await run(['research', 'q', '-m', 'tavily/research-mini', '--max-cost', '2', '--output-schema', '{"type":"object"}', '--metadata', 'team=a=b']);
      expect(code).toBe(0);
      expect(JSON.parse(server.seen[0]?.body ?? '')).toEqual({ input: 'q', model: 'tavily/research-mini', max_cost_usd: 2, output_schema: { type: 'object' }, metadata: { team: 'a=b' } });
      expect(stdout).toContain(`svc research wait ${RUN.id}`);
    });

    it('a run that failed exits 1 with its error; a 402 exits 4; a missing --max-cost is a usage error and sends nothing', async () => {
      server.script(json(202, RUN), json(200, { ...completed, status: 'failed', output: null, error: 'every model failed' }));
      const failed = await run(['research', 'q', '--max-cost', '1', '--wait']);
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain('failed: every model failed');
      server.script(apiError(402, 'insufficient_credits', { needed_usd: 0.5 }));
      expect((await run(['research', 'q', '--max-cost', '0.5'])).code).toBe(4);
      server.script(json(202, RUN));
      const usage = await run(['research', 'q']);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain('--max-cost');
      expect(server.seen).toHaveLength(0);
    });

    it('research get, list and cancel call their endpoints; research wait gives up after --wait-max (exit 1, the run goes on)', async () => {
      server.script(json(200, completed));
      expect((await run(['research', 'get', RUN.id])).stdout).toContain('The answer.');
      server.script(json(200, { data: [completed], next_cursor: null, request_id: 'req_b' }));
      const listed = await run(['research', 'list', '--status', 'completed']);
      expect(server.seen[0]?.url).toBe('/v1/research?limit=100&status=completed');
      expect(listed.stdout).toContain(`${RUN.id}  completed`);
      server.script(json(200, { ...running, cancel_requested_at: '2026-12-20T10:00:30.000Z' }));
      const cancel = await run(['research', 'cancel', RUN.id]);
      expect(server.seen[0]).toMatchObject({ method: 'POST', url: `/v1/research/${RUN.id}/cancel` });
      expect(cancel.stdout).toContain('cancel requested');
      server.script(json(200, running));
      const waited = await run(['research', 'wait', RUN.id, '--wait-max', '1']);
      expect(waited.code).toBe(1);
      expect(waited.stderr).toContain('had not ended within 1 s');
    });
  });
});
