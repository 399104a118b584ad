import { Client as McpClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import type { JsonRpcResponse, RawClientDispatch } from '@modelcontextprotocol/ext-tasks/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { bearer, call, grantCredits, newAccount, newApiKey, SETTLING_STACK, useStack, waitFor } from '@svc/test-kit';
import { RESEARCH_WORKER_TEST_ENV } from './research-stack';

/**
 * deep_research over MCP (docs/mcp.md; docs/decisions/0063), against the whole stack: a client
 * that declares the Tasks extension (the official SDK v2 client, driven by the official
 * @modelcontextprotocol/ext-tasks requester) gets a task and follows it with tasks/get; the same
 * client without the extension, and the v1 SDK on the 2025 handshake, get the run's id and read
 * it with get_research. Each run is charged what the same POST /v1/research is.
 */
const TASKS = 'io.modelcontextprotocol/tasks';
const ARGS = { model: 'exa/agent-low', max_cost_usd: 1 } as const;

describe('deep_research with a tasks-capable client and without', () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const close of closers) await close().catch(() => undefined);
  });
  const suite = useStack({
    ...SETTLING_STACK, name: 'mcpresearch', redisDb: 13, researchWorker: true,
    simulatorEnv: { SIM_RESEARCH_MS: '1500' },
    researchWorkerEnv: { ...RESEARCH_WORKER_TEST_ENV },
  }, { db: true });

  async function fundedKey(micros: number): Promise<{ accountId: string; secret: string }> {
    const account = await newAccount(suite.gw, 'mcp-research');
    await grantCredits(suite.stack, account.accountId, micros, { redis: suite.redis });
    const key = await newApiKey(suite.gw, account.managementKey);
    return { accountId: account.accountId, secret: key.secret };
  }

  /**
   * fetch whose JSON is parsed in the test's own realm. Jest runs a suite in a VM context, and
   * objects undici's Response.json() makes have the outer realm's Object.prototype, which
   * ext-tasks' JSON-value check (a plain object has Object.prototype) refuses; in a plain
   * Node process the two are the same realm.
   */
  const realmFetch = async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const response = await fetch(url, init);
    const text = await response.text();
    return Object.assign(new Response(text, { status: response.status, headers: response.headers }), { json: async () => JSON.parse(text) as unknown });
  };

  /**
   * The SDK v2 client as ext-tasks' types name it. The package ships CommonJS and ES module
   * builds, each with its own declaration of Client; this file resolves the CommonJS one and
   * ext-tasks the ES module one, so TypeScript sees two classes. At run time they are the same.
   */
  const asTaskClient = (client: McpClient): Parameters<typeof createTaskSessionFromClient>[0] => client as unknown as Parameters<typeof createTaskSessionFromClient>[0];

  async function v2Client(secret: string, tasks: boolean): Promise<McpClient> {
    const transport = new StreamableHTTPClientTransport(new URL(`${suite.gw}/mcp`), { requestInit: { headers: bearer(secret) }, fetch: realmFetch });
    const client = new McpClient(
      { name: 'e2e-research', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } }, ...(tasks ? { capabilities: { extensions: { [TASKS]: {} } } } : {}) },
    );
    await client.connect(transport);
    closers.push(() => client.close());
    return client;
  }

  /**
   * The host side of ext-tasks' raw path (the SDK client's wire codecs do not carry the Tasks
   * extension's results): the framed request as a JSON-RPC request POSTed to /mcp with the
   * 2026-07-28 standard headers, and its reply as the port's result or error.
   */
  function rawDispatch(secret: string, seen: { method: string; body: unknown }[]): RawClientDispatch {
    let next = 1000;
    return async (request) => {
      const message = request as { method: string; params?: Record<string, unknown> };
      const name = message.method === 'tools/call' ? message.params?.name : message.params?.taskId;
      const response = await fetch(`${suite.gw}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json', accept: 'application/json, text/event-stream', ...bearer(secret),
          'mcp-protocol-version': '2026-07-28', 'mcp-method': message.method, ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: next++, ...message }),
      });
      const body = JSON.parse(await response.text()) as { result?: unknown; error?: { code: number; message: string; data?: unknown } };
      seen.push({ method: message.method, body });
      return (body.error === undefined ? { kind: 'result', result: body.result } : { kind: 'error', error: body.error }) as JsonRpcResponse;
    };
  }

  async function runCost(id: string): Promise<number> {
    const rows = await suite.db.query<{ cost_micros: string }>('SELECT cost_micros FROM research_runs WHERE id = $1', [id]);
    return Number(rows.rows[0]?.cost_micros);
  }

  it('a client that declares the Tasks extension: deep_research answers a task, followed with tasks/get to the run\'s answer, charged as POST /v1/research', async () => {
    const { accountId, secret } = await fundedKey(5_000_000);
    const client = await v2Client(secret, true);
    expect(client.getServerCapabilities()?.extensions).toEqual(expect.objectContaining({ [TASKS]: {} }));
    const seen: { method: string; body: unknown }[] = [];
    const session = createTaskSessionFromClient(asTaskClient(client), {
      endpointId: 'e2e-gateway',
      rawDispatch: rawDispatch(secret, seen),
      v2RequestFraming: { protocolVersion: '2026-07-28', clientInfo: { name: 'e2e-research', version: '1.0.0' }, clientCapabilities: { extensions: { [TASKS]: {} } } },
    });
    closers.push(() => session.close());
    const execution = await session.callTool('deep_research', { ...ARGS, input: 'tasks path question sim:exa=run1200' });
    expect(execution.kind).toBe('task');
    const { outcome } = await execution.settle();
    const result = resultFromTaskOutcome(outcome) as CallToolResult;
    const run = result.structuredContent as { id: string; status: string; cost_usd: number; output: { text: string } };
    expect(run).toMatchObject({ status: 'completed', cost_usd: 0.03125 });
    expect(run.output.text).toContain('tasks path question');
    // What went over the wire: a tools/call answered with a task whose id is the run's, then tasks/get polls.
    const created = seen.find((s) => s.method === 'tools/call')?.body as { result: { resultType: string; taskId: string; status: string } };
    expect(created.result).toMatchObject({ resultType: 'task', taskId: run.id, status: 'working' });
    expect(seen.filter((s) => s.method === 'tasks/get').length).toBeGreaterThanOrEqual(1);
    // Charged as the same run over HTTP would be: the model's price, once, in the ledger.
    expect(await runCost(run.id)).toBe(31_250);
    const http = await call('POST', `${suite.gw}/v1/research`, { body: { ...ARGS, input: 'the same over http sim:exa=run100' }, headers: bearer(secret) });
    await waitFor('the http run settled', async () => ((await call('GET', `${suite.gw}/v1/research/${http.body.id}`, { headers: bearer(secret) })).body.cost_usd === 0.03125 ? true : undefined));
    await waitFor('both charged in the ledger', async () => {
      const rows = await suite.db.query<{ b: string }>('SELECT balance_micros AS b FROM account_balances WHERE account_id = $1', [accountId]);
      return Number(rows.rows[0]?.b) === 5_000_000 - 2 * 31_250 ? true : undefined;
    });
  });

  it('a tasks-capable client cancels a task with tasks/cancel: the run ends cancelled', async () => {
    const { secret } = await fundedKey(5_000_000);
    const client = await v2Client(secret, true);
    const session = createTaskSessionFromClient(asTaskClient(client), {
      endpointId: 'e2e-gateway-cancel',
      rawDispatch: rawDispatch(secret, []),
      v2RequestFraming: { protocolVersion: '2026-07-28', clientInfo: { name: 'e2e-research', version: '1.0.0' }, clientCapabilities: { extensions: { [TASKS]: {} } } },
    });
    closers.push(() => session.close());
    const execution = await session.callTool('deep_research', { model: 'exa/agent-auto', max_cost_usd: 2, input: 'to cancel sim:exa=forever' });
    if (execution.kind !== 'task') throw new Error('a task expected');
    await new Promise((resolve) => setTimeout(resolve, 800));
    await session.cancelTask(execution.handle.taskId);
    const run = await waitFor('the run cancelled', async () => {
      const got = await call('GET', `${suite.gw}/v1/research/${execution.handle.taskId}`, { headers: bearer(secret) });
      return got.body.status === 'cancelled' ? got.body : undefined;
    });
    expect(Number(run.cost_usd)).toBeLessThanOrEqual(2);
  });

  it('the same client without the extension gets the run\'s id and reads it with get_research; tasks/get is refused with -32021', async () => {
    const { secret } = await fundedKey(5_000_000);
    const client = await v2Client(secret, false);
    const started = (await client.callTool({ name: 'deep_research', arguments: { ...ARGS, input: 'plain client question sim:exa=run800' } })) as CallToolResult;
    expect(started.isError).toBeFalsy();
    const run = started.structuredContent as { id: string; status: string };
    expect(run.status).toBe('queued');
    const text = started.content[0]?.type === 'text' ? started.content[0].text : '';
    expect(text).toContain(`get_research {"id": "${run.id}"}`);
    const done = await waitFor('get_research to read it completed', async () => {
      const read = (await client.callTool({ name: 'get_research', arguments: { id: run.id } })) as CallToolResult;
      return (read.structuredContent as { status: string }).status === 'completed' ? read : undefined;
    }, { timeoutMs: 20_000, intervalMs: 200 });
    expect(done.structuredContent).toMatchObject({ id: run.id, cost_usd: 0.03125, status: 'completed' });
    expect(await runCost(run.id)).toBe(31_250);
    // tasks/get from a request that did not declare the extension: the extension's error.
    const refused = await fetch(`${suite.gw}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...bearer(secret), 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tasks/get', 'mcp-name': run.id },
      body: JSON.stringify({
        jsonrpc: '2.0', id: 7, method: 'tasks/get',
        params: { taskId: run.id, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } },
      }),
    });
    expect(((await refused.json()) as { error: { code: number } }).error.code).toBe(-32021);
  });

  it('the v1 SDK on the 2025 handshake: deep_research answers the run, get_research reads it; errors are tool errors', async () => {
    const { secret } = await fundedKey(1_000_000);
    const client = new V1Client({ name: 'e2e-v1', version: '1.0.0' });
    await client.connect(new V1Transport(new URL(`${suite.gw}/mcp`), { requestInit: { headers: bearer(secret) } }));
    closers.push(() => client.close());
    const started = await client.callTool({ name: 'deep_research', arguments: { ...ARGS, input: 'v1 client question sim:exa=run300' } });
    const run = started.structuredContent as { id: string; status: string };
    expect(run.id).toMatch(/^rsr_/);
    await waitFor('completed', async () => {
      const read = await client.callTool({ name: 'get_research', arguments: { id: run.id } });
      return (read.structuredContent as { status: string }).status === 'completed' ? true : undefined;
    }, { timeoutMs: 20_000, intervalMs: 200 });
    const tooDear = await client.callTool({ name: 'deep_research', arguments: { input: 'too dear', model: 'exa/agent-auto', max_cost_usd: 5 } });
    expect(tooDear.isError).toBe(true);
    const error = JSON.parse(((tooDear.content as { text: string }[])[1]?.text) ?? '{}') as { error: { code: string; needed_usd: number } };
    expect(error.error).toMatchObject({ code: 'insufficient_credits', needed_usd: 5 });
  });
});
