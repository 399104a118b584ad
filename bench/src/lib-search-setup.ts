/**
 * The setup the gateway-against-proxy benchmarks share (search.ts, latency.ts, cache.ts): the search
 * body, the bare proxy process (bare-proxy.ts) in front of the simulator's Exa endpoint, a
 * funded account with one API key, and the first searches that must answer before any load.
 */
import { join } from 'node:path';
import { bearer, call, freePort, newAccount, newApiKey, repoRoot, SIMULATOR_KEYS, startProcess, waitFor } from '@svc/test-kit';
import type { RunningProcess, Stack } from '@svc/test-kit';
import { findModel } from '@svc/contracts';

/** What the gateway sends Exa for exa/fast (the catalog's upstream variant): the proxy sends the same. */
const EXA_FAST_TYPE = findModel('exa/fast')?.upstreamVariant ?? 'fast';

/** The benches' query (the simulator's titles and snippets repeat its words). */
export const BENCH_QUERY = 'open source search engines benchmark';

/** The query of `uniqueSearchBody`, to which each request adds its own number. */
const UNIQUE_QUERY = 'open source search engines';

/**
 * The body every measured search sends, to the gateway and to the proxy alike; `unique`: its
 * query new on every request (autocannon replaces `[<id>]`), every search a miss where a cache is on.
 */
export function searchBody(model: string, query = BENCH_QUERY, unique = false): string {
  // `a,b`: a fallback list (`models`), the first model answering.
  const models = model.includes(',') ? { models: model.split(',') } : { model };
  return JSON.stringify({ query: unique ? `${query} [<id>]` : query, ...models, max_results: 10 });
}

/** A body whose query is new on every request: every search a miss where a cache is on. */
export function uniqueSearchBody(model: string): string {
  return searchBody(model, UNIQUE_QUERY, true);
}

/** Starts the bare proxy (bench/dist/bare-proxy.js) forwarding to the simulator at `simUrl`. */
export async function startBareProxy(simUrl: string): Promise<{ process: RunningProcess; url: string }> {
  const port = await freePort();
  const process = await startProcess({
    name: 'bare-proxy',
    script: join(repoRoot(), 'bench/dist/bare-proxy.js'),
    env: { PORT: String(port), HOST: '127.0.0.1', UPSTREAM_URL: `${simUrl}/exa/search`, UPSTREAM_KEY: SIMULATOR_KEYS.exa, UPSTREAM_TYPE: EXA_FAST_TYPE },
    readyUrl: `http://127.0.0.1:${port}/readyz`,
  });
  return { process, url: `http://127.0.0.1:${port}` };
}

/**
 * A dashboard signup (a new account), one API key (warm in the gateway's key cache after the
 * first search) and a $1,000,000 grant through billing's operator API. Returns the API key's secret.
 */
export async function fundedApiKey(stack: Stack, gateway: string, label: string, reason: string): Promise<string> {
  const account = await newAccount(gateway, label);
  const apiKey = await newApiKey(gateway, account.managementKey);
  const grant = await call('POST', `${stack.billing.operatorUrl}/operator/accounts/${account.accountId}/grants`, {
    body: { amount_usd: 1_000_000, reason }, headers: bearer(stack.operatorToken),
  });
  if (grant.status !== 201) throw new Error(`grant failed: ${grant.status} ${grant.text}`);
  return apiKey.secret;
}

/**
 * Waits until the gateway answers a search with 200 (the grant reaches the spendable balance
 * asynchronously), checks that answer (the model, results, the platform's key), and that
 * the proxy answers the same body with results.
 */
export async function firstSearches(gateway: string, headers: Record<string, string>, proxyUrl: string, body: string, model: string): Promise<void> {
  const probe = await call('POST', `${gateway}/v1/search`, { raw: body, headers });
  if (probe.status === 404 || probe.status === 405) throw new Error(`the gateway has no POST /v1/search (${probe.status})`);
  const first = await waitFor('a first 200 from POST /v1/search', async () => {
    const response = await call('POST', `${gateway}/v1/search`, { raw: body, headers });
    if (response.status !== 200) throw new Error(`search answered ${response.status}: ${response.text.slice(0, 300)}`);
    return response;
  }, { timeoutMs: 20_000, intervalMs: 200 });
  if (first.body?.model !== model || !Array.isArray(first.body?.results) || first.body.results.length === 0
    || first.body?.source !== 'platform') {
    throw new Error(`unexpected search answer: ${first.text.slice(0, 500)}`);
  }
  const viaProxy = await call('POST', `${proxyUrl}/v1/search`, { raw: body });
  if (viaProxy.status !== 200 || !Array.isArray(viaProxy.body?.results)) throw new Error(`proxy answered ${viaProxy.status}: ${viaProxy.text.slice(0, 300)}`);
}
