/**
 * How long a key change takes to reach another gateway process (spec section 3: "up to
 * about 15 seconds"). Starts account-admin, billing and three gateways with the production
 * cache lifetime (KEY_CACHE_TTL_MS default); gateway 0 handles every change, gateway 1 hears
 * pub/sub, gateway 2 has pub/sub off (KEY_CHANGES_SUBSCRIBE=false: every message lost).
 * A trial: warm the key on the peers, disable it through gateway 0, poll each peer until it
 * answers key_disabled. Prints p50/p99/max per path and writes bench/results/propagation.json.
 *
 * Provider keys (BYOK) the same way: store or delete an account's Exa key through gateway 0,
 * then search on each peer until the answer's `source` is `byok` (stored) or `platform`
 * (deleted). The simulator accepts the stored key. PROVIDER_KEY_TRIALS (default TRIALS; 0 skips).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bearer, call, newAccount, newApiKey, repoRoot, startStack } from '@svc/test-kit';
import { summarize } from './stats';

const TRIALS = Number(process.env.TRIALS ?? 60);
const PROVIDER_KEY_TRIALS = Number(process.env.PROVIDER_KEY_TRIALS ?? TRIALS);
/** The account's own Exa key in the provider-key trials (the simulator is told to accept it). */
const OWN_EXA_KEY = 'bench-own-exa-key-0001';
const LOST_BATCH = 10;

async function status(url: string, secret: string): Promise<string> {
  // GET /v1/credits: billing trusts the gateway's verdict, so the answer is the gateway's own (account-admin would re-check a deleted key itself).
  const response = await call('GET', `${url}/v1/credits`, { headers: bearer(secret) });
  return response.status === 200 ? 'ok' : String(response.body?.error?.code);
}

async function delayUntil(url: string, secret: string, expected: string, since: number, intervalMs: number): Promise<number> {
  const deadline = Math.max(since, Date.now()) + 30_000;
  for (;;) {
    if ((await status(url, secret)) === expected) return Date.now() - since;
    if (Date.now() > deadline) throw new Error(`no ${expected} after 30 s on ${url}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

async function main(): Promise<void> {
  const stack = await startStack({
    name: 'benchprop',
    redisDb: 14,
    gateways: [{}, {}, { env: { KEY_CHANGES_SUBSCRIBE: 'false' } }],
    logLevel: 'warn',
    simulator: true,
    simulatorEnv: { SIM_EXA_KEY: `sim-exa-key,${OWN_EXA_KEY}` },
    // The provider-key probes are searches, polled fast: no rate or in-flight limit in the way.
    gatewayEnv: { RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_BURST: '1000000', ACCOUNT_MAX_IN_FLIGHT: '100000', PROVIDER_MAX_IN_FLIGHT_EXA: '100000' },
  });
  try {
    const [g0, g1, g2] = stack.gateways.map((g) => g.url);
    if (g0 === undefined || g1 === undefined || g2 === undefined) throw new Error('three gateways expected');
    const account = await newAccount(g0, 'bench');
    const mgmt = bearer(account.managementKey);
    const patch = async (id: string, body: unknown): Promise<void> => {
      const response = await call('PATCH', `${g0}/v1/keys/${id}`, { body, headers: mgmt });
      if (response.status !== 200) throw new Error(`patch failed: ${response.status}`);
    };
    /**
     * A change and the answer it leads to. `apply` returns the moment from which a delay
     * counts: when the request was sent, or for an expiry edit the new expires_at itself.
     */
    const changes = {
      disable: { expect: 'key_disabled', apply: async (id: string) => { const at = Date.now(); await patch(id, { disabled: true }); return at; } },
      delete: {
        expect: 'invalid_api_key',
        apply: async (id: string) => {
          const at = Date.now();
          const response = await call('DELETE', `${g0}/v1/keys/${id}`, { headers: mgmt });
          if (response.status !== 200) throw new Error(`delete failed: ${response.status}`);
          return at;
        },
      },
      expiry: {
        expect: 'key_expired',
        apply: async (id: string) => {
          const expiresAt = Date.now() + 1_000;
          await patch(id, { expires_at: new Date(expiresAt).toISOString() });
          return expiresAt;
        },
      },
    } as const;
    type ChangeName = keyof typeof changes;

    const results: Record<string, { handler: string; pubsub: ReturnType<typeof summarize>; lost: ReturnType<typeof summarize> }> = {};
    for (const name of Object.keys(changes) as ChangeName[]) {
      const change = changes[name];
      let handlerImmediate = 0;
      const pubsub: number[] = [];
      const lost: number[] = [];
      // Pub/sub path and the handling gateway: one trial at a time, polled every millisecond.
      for (let i = 0; i < TRIALS; i++) {
        const key = await newApiKey(g0, account.managementKey);
        for (const url of [g1, g2]) if ((await status(url, key.secret)) !== 'ok') throw new Error('key not live');
        const at = await change.apply(key.id);
        if (name !== 'expiry' && (await status(g0, key.secret)) === change.expect) handlerImmediate += 1;
        pubsub.push(Math.max(0, await delayUntil(g1, key.secret, change.expect, at, 1)));
        if (name === 'expiry' && (await status(g0, key.secret)) === change.expect) handlerImmediate += 1;
      }
      // Lost-message path: ten trials at a time, polled every 20 ms, spread over a second.
      for (let i = 0; i < TRIALS; i += LOST_BATCH) {
        const batch = [];
        for (let j = i; j < Math.min(TRIALS, i + LOST_BATCH); j++) batch.push(await newApiKey(g0, account.managementKey));
        for (const key of batch) if ((await status(g2, key.secret)) !== 'ok') throw new Error('key not live');
        lost.push(...(await Promise.all(batch.map(async (key) => {
          await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 1000)));
          const at = await change.apply(key.id);
          return Math.max(0, await delayUntil(g2, key.secret, change.expect, at, 20));
        }))));
      }
      results[name] = { handler: `${handlerImmediate}/${TRIALS}`, pubsub: summarize(pubsub), lost: summarize(lost) };
    }
    if (PROVIDER_KEY_TRIALS > 0) Object.assign(results, await providerKeyTrials(stack, g0, g1, g2));
    const result = {
      measured_at: new Date().toISOString(),
      trials_per_change_and_path: TRIALS,
      provider_key_trials_per_change_and_path: PROVIDER_KEY_TRIALS,
      key_cache_ttl_ms: Number(process.env.KEY_CACHE_TTL_MS ?? 5000),
      changes: results,
    };
    const dir = join(repoRoot(), 'bench/results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'propagation.json'), JSON.stringify(result, null, 2) + '\n');
    console.log(`key change propagation, ${TRIALS} trials per change and path (ms from the change, or from the new expires_at)`);
    console.log('| change | handling gateway rejects on its next request | pub/sub p50 | p99 | max | pub/sub lost p50 | p99 | max |');
    console.log('|---|---|---|---|---|---|---|---|');
    for (const [name, r] of Object.entries(results)) {
      console.log(`| ${name} | ${r.handler} | ${r.pubsub.p50} | ${r.pubsub.p99} | ${r.pubsub.max} | ${r.lost.p50} | ${r.lost.p99} | ${r.lost.max} |`);
    }
  } finally {
    await stack.stop();
  }
}

/** An account with credits, an API key and a management key, for the provider-key probes. */
async function fundedAccount(stack: Awaited<ReturnType<typeof startStack>>, gateway: string): Promise<{ apiKey: string; mgmt: Record<string, string> }> {
  const account = await newAccount(gateway, 'benchbyok');
  const grant = await call('POST', `${stack.billing.operatorUrl}/operator/accounts/${account.accountId}/grants`, {
    body: { amount_usd: 10_000, reason: 'propagation bench' },
    headers: bearer(stack.operatorToken),
  });
  if (grant.status !== 201) throw new Error(`grant failed: ${grant.status}`);
  const key = await newApiKey(gateway, account.managementKey);
  // The grant reaches the spendable balance through billing's outbox.
  for (let i = 0; i < 200 && (await source(gateway, key.secret)) !== 'platform'; i++) await new Promise((resolve) => setTimeout(resolve, 50));
  return { apiKey: key.secret, mgmt: bearer(account.managementKey) };
}

/** The `source` of a search's answer on `url` (or the error code). */
async function source(url: string, secret: string): Promise<string> {
  const response = await call('POST', `${url}/v1/search`, { body: { query: 'propagation probe', model: 'exa/fast', max_results: 1 }, headers: bearer(secret) });
  return response.status === 200 ? String(response.body.source) : String(response.body?.error?.code);
}

async function sourceAfter(url: string, secret: string, expected: string, since: number, intervalMs: number): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if ((await source(url, secret)) === expected) return Date.now() - since;
    if (Date.now() > deadline) throw new Error(`no source ${expected} after 30 s on ${url}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Provider-key store and delete: the handling gateway, the pub/sub peer and the lost-message peer. */
async function providerKeyTrials(stack: Awaited<ReturnType<typeof startStack>>, g0: string, g1: string, g2: string): Promise<Record<string, { handler: string; pubsub: ReturnType<typeof summarize>; lost: ReturnType<typeof summarize> }>> {
  const accounts = [];
  for (let i = 0; i < LOST_BATCH; i++) accounts.push(await fundedAccount(stack, g0));
  const first = accounts[0];
  if (first === undefined) throw new Error('no account');
  const change = async (account: { mgmt: Record<string, string> }, store: boolean): Promise<number> => {
    const at = Date.now();
    const response = store
      ? await call('PUT', `${g0}/v1/provider-keys/exa`, { body: { key: OWN_EXA_KEY }, headers: account.mgmt })
      : await call('DELETE', `${g0}/v1/provider-keys/exa`, { headers: account.mgmt });
    if (response.status !== 200) throw new Error(`provider key change failed: ${response.status}`);
    return at;
  };
  const out: Record<string, { handler: string; pubsub: ReturnType<typeof summarize>; lost: ReturnType<typeof summarize> }> = {};
  const handler = { store: 0, delete: 0 };
  const pubsub = { store: [] as number[], delete: [] as number[] };
  const lost = { store: [] as number[], delete: [] as number[] };
  for (let i = 0; i < PROVIDER_KEY_TRIALS; i++) {
    for (const store of [true, false]) {
      const name = store ? 'store' : 'delete';
      const expected = store ? 'byok' : 'platform';
      // Both peers hold the account's current set before the change.
      await source(g1, first.apiKey);
      const at = await change(first, store);
      if ((await source(g0, first.apiKey)) === expected) handler[name] += 1;
      pubsub[name].push(await sourceAfter(g1, first.apiKey, expected, at, 1));
    }
  }
  for (let i = 0; i < PROVIDER_KEY_TRIALS; i += LOST_BATCH) {
    for (const store of [true, false]) {
      const name = store ? 'store' : 'delete';
      const expected = store ? 'byok' : 'platform';
      const batch = accounts.slice(0, Math.min(LOST_BATCH, PROVIDER_KEY_TRIALS - i));
      for (const account of batch) await source(g2, account.apiKey);
      lost[name].push(...(await Promise.all(batch.map(async (account) => {
        await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 1000)));
        const at = await change(account, store);
        return sourceAfter(g2, account.apiKey, expected, at, 20);
      }))));
    }
  }
  for (const name of ['store', 'delete'] as const) {
    out[`provider key ${name}`] = { handler: `${handler[name]}/${PROVIDER_KEY_TRIALS}`, pubsub: summarize(pubsub[name]), lost: summarize(lost[name]) };
  }
  return out;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
