/**
 * What a web_search over MCP costs against a POST /v1/search (docs/benchmarks.md, "mcp"):
 * the same gateway, the same search (model, query, max_results), the same load, in one run.
 *
 * The MCP side is a tools/call of web_search on POST /mcp as an initialized client sends it
 * (Accept, MCP-Protocol-Version, the API key; no session id, so no tool-call idempotency,
 * like a POST /v1/search without Idempotency-Key). Rounds are interleaved after a warm-up
 * of each (search then mcp in odd rounds, mcp then search in even ones), with the
 * gateway's CPU sampled per round, so the figure that matters, the gateway's CPU per call,
 * does not depend on what else the machine was doing. Every call of the rounds is checked
 * to have been a real, charged search: the account's balance must have dropped by the price
 * times the calls answered, plus at most one call per connection at the end of each load
 * run (autocannon stops counting at the deadline while the gateway finishes and charges
 * the searches already sent).
 * Prints Markdown and writes bench/results/mcp.json.
 *
 * Env: ROUNDS (10), DURATION_S (4), WARMUP_S (3), CONNECTIONS (16), MODEL (exa/fast), BENCH_REDIS_DB (15).
 */
import { cpus, loadavg } from 'node:os';
import { bearer, call, newAccount, newApiKey, startStack, waitFor } from '@svc/test-kit';
import type { Stack } from '@svc/test-kit';
import { runLoad } from './lib-autocannon';
import type { LoadResult } from './lib-autocannon';
import { measureCpu } from './lib-cpu';
import type { CpuReport } from './lib-cpu';
import { median, writeResult } from './lib-results';
import { NO_LIMITS_ENV, BENCH_STACK, knobsFromEnv } from './lib-stack';

const { ROUNDS, DURATION_S, WARMUP_S, CONNECTIONS } = knobsFromEnv({ ROUNDS: 10, DURATION_S: 4, WARMUP_S: 3, CONNECTIONS: 16 });
const MODEL = process.env.MODEL ?? 'exa/fast';
/** exa/fast at 10 results: 0.009 USD, the reservation and the charge. */
const PRICE_MICROS: Readonly<Record<string, number>> = { 'exa/fast': 9_000, 'brave/web': 6_000, 'tavily/basic': 10_000 };
const ARGS = { query: 'open source search engines benchmark', model: MODEL, max_results: 10 };
const PROTOCOL_VERSION = '2025-06-18';

type Name = 'search' | 'mcp';

interface Target {
  name: Name;
  path: string;
  headers: Record<string, string>;
  body: string;
}

function row(name: string, r: LoadResult, cpuMsPerCall: number): string {
  return `| ${name} | ${r.requestsPerSecond.toFixed(0)} | ${r.latencyMs.p50} | ${r.latencyMs.p99} | ${r.total} | ${r.non2xx} | ${r.errors + r.timeouts} | ${cpuMsPerCall.toFixed(3)} |`;
}

async function main(): Promise<void> {
  const price = PRICE_MICROS[MODEL];
  if (price === undefined) throw new Error(`MODEL must be one of ${Object.keys(PRICE_MICROS).join(', ')}`);
  const loadAtStart = loadavg().map((l) => Math.round(l * 100) / 100);
  const stack: Stack = await startStack({
    ...BENCH_STACK, name: 'benchmcp', gatewayEnv: { ...NO_LIMITS_ENV },
  });
  try {
    const gatewayInfo = stack.gateways[0];
    if (gatewayInfo === undefined) throw new Error('a gateway expected');
    const gw = gatewayInfo.url;
    const account = await newAccount(gw, 'benchmcp');
    const apiKey = await newApiKey(gw, account.managementKey);
    const grant = await call('POST', `${stack.billing.operatorUrl}/operator/accounts/${account.accountId}/grants`, {
      body: { amount_usd: 1_000_000, reason: 'mcp benchmark' }, headers: bearer(stack.operatorToken),
    });
    if (grant.status !== 201) throw new Error(`grant failed: ${grant.status} ${grant.text}`);

    const search: Target = { name: 'search', path: '/v1/search', headers: { 'content-type': 'application/json', ...bearer(apiKey.secret) }, body: JSON.stringify(ARGS) };
    const mcp: Target = {
      name: 'mcp',
      path: '/mcp',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': PROTOCOL_VERSION, ...bearer(apiKey.secret) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'web_search', arguments: ARGS } }),
    };

    // Both answer a real search before any load (the grant reaches Redis asynchronously).
    await waitFor('a first 200 from POST /v1/search', async () => {
      const response = await call('POST', `${gw}${search.path}`, { raw: search.body, headers: search.headers });
      return response.status === 200 && response.body?.model === MODEL ? true : undefined;
    }, { timeoutMs: 20_000, intervalMs: 200 });
    const probe = await call('POST', `${gw}${mcp.path}`, { raw: mcp.body, headers: mcp.headers });
    if (probe.status !== 200 || probe.body?.result?.isError === true || probe.body?.result?.structuredContent?.model !== MODEL) {
      throw new Error(`the MCP web_search did not answer a search: ${probe.status} ${probe.text.slice(0, 500)}`);
    }

    const load = (target: Target, seconds: number): Promise<LoadResult> =>
      runLoad({ url: `${gw}${target.path}`, method: 'POST', connections: CONNECTIONS, durationSeconds: seconds, headers: target.headers, body: target.body });
    console.log(`warm-up: ${WARMUP_S} s each`);
    await load(search, WARMUP_S);
    await load(mcp, WARMUP_S);

    const credits = async (): Promise<{ balance: number; reserved: number }> => {
      const response = await call('GET', `${gw}/v1/credits`, { headers: search.headers });
      if (response.status !== 200) throw new Error(`GET /v1/credits answered ${response.status}`);
      return { balance: Math.round(Number(response.body.balance_usd) * 1_000_000), reserved: Math.round(Number(response.body.reserved_usd) * 1_000_000) };
    };
    const balance = async (): Promise<number> => (await credits()).balance;
    await waitFor('settlements of the warm-up', async () => ((await credits()).reserved === 0 ? true : undefined), { timeoutMs: 30_000 });
    const balanceBefore = await balance();
    const groups = [{ name: 'search-gateway', pids: () => [gatewayInfo.process.pid] }];
    const cpuMsPerCall = (cpu: CpuReport, r: LoadResult): number => ((cpu.groups[0]?.cores ?? Number.NaN) * cpu.wallSeconds * 1000) / Math.max(1, r.total);
    const rounds: Record<Name, { load: LoadResult; cpu: CpuReport; cpuMsPerCall: number }>[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const order = i % 2 === 0 ? [search, mcp] : [mcp, search];
      const round: Partial<Record<Name, { load: LoadResult; cpu: CpuReport; cpuMsPerCall: number }>> = {};
      for (const target of order) {
        const { value, cpu } = await measureCpu(groups, () => load(target, DURATION_S));
        round[target.name] = { load: value, cpu, cpuMsPerCall: cpuMsPerCall(cpu, value) };
      }
      const s = round.search;
      const m = round.mcp;
      if (s === undefined || m === undefined) throw new Error('both targets run in every round');
      rounds.push({ search: s, mcp: m });
      console.log(`round ${i + 1}/${ROUNDS}: search ${s.load.requestsPerSecond.toFixed(0)} req/s ${s.cpuMsPerCall.toFixed(3)} CPU ms/call, mcp ${m.load.requestsPerSecond.toFixed(0)} req/s ${m.cpuMsPerCall.toFixed(3)} CPU ms/call`);
    }
    // Every 200 of the rounds was a charged search: HTTP 200s of /v1/search, and tools/call answers
    // (HTTP 200) on /mcp, whose tool results the probe above showed to be searches.
    await waitFor('settlements of the rounds', async () => ((await credits()).reserved === 0 ? true : undefined), { timeoutMs: 30_000 });
    const answered = rounds.reduce((n, r) => n + (r.search.load.statusCodes['200'] ?? 0) + (r.mcp.load.statusCodes['200'] ?? 0), 0);
    const charged = balanceBefore - (await balance());
    const chargedCalls = charged / price;

    const med = (k: Name, f: (r: { load: LoadResult; cpuMsPerCall: number }) => number): number => median(rounds.map((r) => f(r[k])));
    const summary = (k: Name) => ({
      rps: med(k, (r) => r.load.requestsPerSecond),
      p50_ms: med(k, (r) => r.load.latencyMs.p50),
      p99_ms: med(k, (r) => r.load.latencyMs.p99),
      gateway_cpu_ms_per_call: med(k, (r) => r.cpuMsPerCall),
      gateway_cores: median(rounds.map((r) => r[k].cpu.groups[0]?.cores ?? Number.NaN)),
      machine_busy_cores: median(rounds.map((r) => r[k].cpu.machineBusyCores)),
    });
    const result = {
      measured_at: new Date().toISOString(),
      command: 'npm run bench -- mcp',
      machine: { nproc: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', node: process.version, loadavg_at_start: loadAtStart, loadavg_at_end: loadavg().map((l) => Math.round(l * 100) / 100) },
      settings: { rounds: ROUNDS, duration_s: DURATION_S, warmup_s: WARMUP_S, connections: CONNECTIONS, arguments: ARGS, sim_base_latency_ms: 0 },
      median: {
        search: summary('search'),
        mcp: summary('mcp'),
        rps_ratio_mcp_to_search: median(rounds.map((r) => r.mcp.load.requestsPerSecond / r.search.load.requestsPerSecond)),
        cpu_ratio_mcp_to_search: median(rounds.map((r) => r.mcp.cpuMsPerCall / r.search.cpuMsPerCall)),
      },
      charged: { answered_calls: answered, charged_micros: charged, charged_calls: chargedCalls },
      rounds: rounds.map((r) => ({ search: { load: r.search.load, cpu_ms_per_call: r.search.cpuMsPerCall }, mcp: { load: r.mcp.load, cpu_ms_per_call: r.mcp.cpuMsPerCall } })),
    };
    const file = writeResult('mcp', result);

    console.log(`\nweb_search over MCP vs POST /v1/search (${MODEL}, max_results 10), ${CONNECTIONS} connections, ${ROUNDS} interleaved rounds of ${DURATION_S} s, simulator at 0 ms`);
    console.log('| target | req/s | p50 ms | p99 ms | responses | non-2xx | errors | gateway CPU ms/call |');
    console.log('|---|---|---|---|---|---|---|---|');
    rounds.forEach((r, i) => {
      console.log(row(`POST /v1/search #${i + 1}`, r.search.load, r.search.cpuMsPerCall));
      console.log(row(`MCP web_search #${i + 1}`, r.mcp.load, r.mcp.cpuMsPerCall));
    });
    const s = result.median.search;
    const m = result.median.mcp;
    console.log(`\nmedian: POST /v1/search ${s.rps.toFixed(0)} req/s (p50 ${s.p50_ms} ms, p99 ${s.p99_ms} ms, ${s.gateway_cpu_ms_per_call.toFixed(3)} gateway CPU ms/call)`);
    console.log(`median: MCP web_search ${m.rps.toFixed(0)} req/s (p50 ${m.p50_ms} ms, p99 ${m.p99_ms} ms, ${m.gateway_cpu_ms_per_call.toFixed(3)} gateway CPU ms/call)`);
    console.log(`MCP / search: throughput ${result.median.rps_ratio_mcp_to_search.toFixed(3)}, gateway CPU per call ${result.median.cpu_ratio_mcp_to_search.toFixed(3)} (medians of per-round ratios)`);
    console.log(`charged: ${chargedCalls} searches for ${answered} answered calls (${charged} micro-USD; the rest were sent before a run's deadline and answered after it)`);
    console.log(`load average at start ${loadAtStart.join(' ')}, at end ${result.machine.loadavg_at_end.join(' ')}`);
    console.log(`\nwrote ${file}`);
    const cutOff = CONNECTIONS * 2 * ROUNDS;
    if (!Number.isInteger(chargedCalls) || chargedCalls < answered || chargedCalls > answered + cutOff) {
      throw new Error(`charged ${chargedCalls} searches for ${answered} answered calls (at most ${cutOff} more may have been cut off)`);
    }
  } finally {
    await stack.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
