/**
 * How long a key change takes to reach another gateway process (spec section 3: "up to
 * about 15 seconds"). Starts account-admin, billing and three gateways with the production
 * cache lifetime (KEY_CACHE_TTL_MS default); gateway 0 handles every change, gateway 1 hears
 * pub/sub, gateway 2 has pub/sub off (KEY_CHANGES_SUBSCRIBE=false: every message lost).
 * A trial: warm the key on the peers, disable it through gateway 0, poll each peer until it
 * answers key_disabled. Prints p50/p99/max per path and writes bench/results/propagation.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bearer, call, newAccount, newApiKey, repoRoot, startStack } from '@svc/test-kit';
import { summarize } from './stats';

const TRIALS = Number(process.env.TRIALS ?? 60);
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
    const result = {
      measured_at: new Date().toISOString(),
      trials_per_change_and_path: TRIALS,
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

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
