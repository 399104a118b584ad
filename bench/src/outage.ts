/**
 * One provider outage, with and without the breaker (docs/decisions/0027): Exa stops
 * answering (the simulator's outage control: every call hangs), and a client keeps sending
 * searches listing ["exa/auto", "brave/web"] through two gateways. Per run: search latency
 * (p50, p95, max), how many searches waited for Exa, and what the customer paid in all and
 * for Exa's timed-out attempts (the timeout rule keeps each one's base price). The breaker's
 * thresholds are the production defaults; PROVIDER_TIMEOUT_MS is short (OUTAGE_TIMEOUT_MS,
 * default 1000) so the run is quick: with the 15 s default each waiting search waits 15 s.
 *
 *   OUTAGE_SEARCHES (default 200), OUTAGE_CONCURRENCY (default 4), OUTAGE_TIMEOUT_MS (default 1000)
 *
 * Prints a Markdown table and writes bench/results/outage.json.
 */
import { bearer, call, newAccount, newApiKey, startStack } from '@svc/test-kit';
import type { Stack } from '@svc/test-kit';
import { writeResult } from './lib-results';
import { summarize } from './stats';

const SEARCHES = Number(process.env.OUTAGE_SEARCHES ?? 200);
const CONCURRENCY = Number(process.env.OUTAGE_CONCURRENCY ?? 4);
const TIMEOUT_MS = Number(process.env.OUTAGE_TIMEOUT_MS ?? 1000);
const MODELS = ['exa/auto', 'brave/web'];

interface RunResult {
  breaker: boolean;
  searches: number;
  answered: number;
  /** Searches whose Exa attempt was called and timed out (they waited PROVIDER_TIMEOUT_MS). */
  waitedForExa: number;
  /** Searches whose Exa attempt was skipped by the open breaker. */
  skippedExa: number;
  latencyMs: { n: number; p50: number; p99: number; max: number; p95: number };
  paidUsd: number;
  paidForExaUsd: number;
  wallSeconds: number;
}

const round6 = (usd: number): number => Math.round(usd * 1_000_000) / 1_000_000;

async function run(breaker: boolean): Promise<RunResult> {
  const stack: Stack = await startStack({
    name: `bench_outage_${breaker ? 'on' : 'off'}`,
    redisDb: 12,
    simulator: true,
    logLevel: 'warn',
    gatewayEnv: {
      PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS),
      PROVIDER_BREAKER_ENABLED: String(breaker),
      RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000', ACCOUNT_MAX_IN_FLIGHT: '100000',
      PROVIDER_MAX_IN_FLIGHT_EXA: '100000', PROVIDER_MAX_IN_FLIGHT_BRAVE: '100000',
    },
    gateways: [{}, {}],
  });
  try {
    const gateways = stack.gateways.map((g) => g.url);
    const gw = gateways[0] ?? '';
    const account = await newAccount(gw, 'outage');
    const key = await newApiKey(gw, account.managementKey);
    const grant = await call('POST', `${stack.billing.operatorUrl}/operator/accounts/${account.accountId}/grants`, { body: { amount_usd: 1_000, reason: 'outage bench' }, headers: bearer(stack.operatorToken) });
    if (grant.status !== 201) throw new Error(`grant failed: ${grant.status}`);
    // Warm: the grant reaches the spendable balance, Exa answers.
    for (let i = 0; ; i++) {
      const warm = await call('POST', `${gw}/v1/search`, { body: { query: 'warm up', models: MODELS, max_results: 5 }, headers: bearer(key.secret) });
      if (warm.status === 200 && warm.body.model === 'exa/auto') break;
      if (i > 100) throw new Error(`warm-up failed: ${warm.status} ${warm.text.slice(0, 200)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const outage = await call('PUT', `${stack.simulator?.url}/_sim/outage/exa`, { body: { kind: 'timeout' } });
    if (outage.status !== 200) throw new Error('the simulator refused the outage');

    const latencies: number[] = [];
    let next = 0;
    let answered = 0;
    let waitedForExa = 0;
    let skippedExa = 0;
    let paid = 0;
    let paidForExa = 0;
    const started = performance.now();
    await Promise.all(Array.from({ length: CONCURRENCY }, async (_, worker) => {
      for (;;) {
        const i = next++;
        if (i >= SEARCHES) return;
        const t0 = performance.now();
        const response = await call('POST', `${gateways[(i + worker) % gateways.length]}/v1/search`, { body: { query: `outage ${i}`, models: MODELS, max_results: 5 }, headers: bearer(key.secret) });
        latencies.push(performance.now() - t0);
        if (response.status !== 200) continue;
        answered += 1;
        paid += response.body.cost_usd as number;
        const exa = (response.body.attempts as { model: string; status: string; cost_usd?: number }[]).find((a) => a.model === 'exa/auto');
        if (exa?.status === 'error') {
          waitedForExa += 1;
          paidForExa += exa.cost_usd ?? 0;
        } else if (exa?.status === 'skipped') {
          skippedExa += 1;
        }
      }
    }));
    const wallSeconds = (performance.now() - started) / 1000;
    const sorted = [...latencies].sort((a, b) => a - b);
    const p95 = sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)] ?? Number.NaN;
    return {
      breaker, searches: SEARCHES, answered, waitedForExa, skippedExa,
      latencyMs: { ...summarize(latencies), p95 },
      paidUsd: round6(paid), paidForExaUsd: round6(paidForExa), wallSeconds: Math.round(wallSeconds * 10) / 10,
    };
  } finally {
    await stack.stop();
  }
}

async function main(): Promise<void> {
  const results = [await run(true), await run(false)];
  const ms = (v: number): string => `${Math.round(v)} ms`;
  console.log(`\nExa down (every call hangs), ${SEARCHES} searches listing ${JSON.stringify(MODELS)}, ${CONCURRENCY} at a time over 2 gateways, PROVIDER_TIMEOUT_MS=${TIMEOUT_MS}, breaker thresholds at their defaults\n`);
  console.log('| breaker | answered | waited for Exa | Exa skipped | p50 | p95 | max | paid in all | paid for Exa timeouts | run |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    console.log(`| ${r.breaker ? 'on' : 'off'} | ${r.answered}/${r.searches} | ${r.waitedForExa} | ${r.skippedExa} | ${ms(r.latencyMs.p50)} | ${ms(r.latencyMs.p95)} | ${ms(r.latencyMs.max)} | $${r.paidUsd.toFixed(6)} | $${r.paidForExaUsd.toFixed(6)} | ${r.wallSeconds} s |`);
  }
  const file = writeResult('outage', { settings: { searches: SEARCHES, concurrency: CONCURRENCY, providerTimeoutMs: TIMEOUT_MS, models: MODELS, gateways: 2 }, results });
  console.log(`\nwritten to ${file}`);
}

main().then(() => process.exit(0), (error: unknown) => {
  console.error(error);
  process.exit(1);
});
