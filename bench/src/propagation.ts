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
  const response = await call('GET', `${url}/v1/key`, { headers: bearer(secret) });
  return response.status === 200 ? 'ok' : String(response.body?.error?.code);
}

async function delayUntil(url: string, secret: string, expected: string, since: number, intervalMs: number): Promise<number> {
  const deadline = since + 30_000;
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
    const keys = [];
    for (let i = 0; i < TRIALS; i++) keys.push(await newApiKey(g0, account.managementKey));
    const disable = async (id: string): Promise<number> => {
      const at = Date.now();
      const response = await call('PATCH', `${g0}/v1/keys/${id}`, { body: { disabled: true }, headers: bearer(account.managementKey) });
      if (response.status !== 200) throw new Error(`disable failed: ${response.status}`);
      return at;
    };

    let handlerImmediate = 0;
    const pubsub: number[] = [];
    const lost: number[] = [];
    // Pub/sub path and the handling gateway: one trial at a time, polled every millisecond.
    for (const key of keys) {
      for (const url of [g1, g2]) if ((await status(url, key.secret)) !== 'ok') throw new Error('key not live');
      const at = await disable(key.id);
      if ((await status(g0, key.secret)) === 'key_disabled') handlerImmediate += 1;
      pubsub.push(await delayUntil(g1, key.secret, 'key_disabled', at, 1));
    }
    // Lost-message path: fresh keys, ten trials at a time, polled every 20 ms.
    const fresh = [];
    for (let i = 0; i < TRIALS; i++) fresh.push(await newApiKey(g0, account.managementKey));
    for (let i = 0; i < fresh.length; i += LOST_BATCH) {
      const batch = fresh.slice(i, i + LOST_BATCH);
      for (const key of batch) if ((await status(g2, key.secret)) !== 'ok') throw new Error('key not live');
      lost.push(...(await Promise.all(batch.map(async (key) => {
        // Spread the changes over the cache lifetime so they do not all land at one age.
        await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 1000)));
        const at = await disable(key.id);
        return delayUntil(g2, key.secret, 'key_disabled', at, 20);
      }))));
    }
    const result = {
      measured_at: new Date().toISOString(),
      trials: TRIALS,
      key_cache_ttl_ms: Number(process.env.KEY_CACHE_TTL_MS ?? 5000),
      handling_gateway_rejected_on_next_request: `${handlerImmediate}/${TRIALS}`,
      pubsub_ms: summarize(pubsub),
      pubsub_lost_ms: summarize(lost),
    };
    const dir = join(repoRoot(), 'bench/results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'propagation.json'), JSON.stringify(result, null, 2) + '\n');
    console.log(`key change propagation over ${TRIALS} trials each (ms)`);
    console.log('| path | n | p50 | p99 | max |');
    console.log('|---|---|---|---|---|');
    console.log(`| handling gateway: rejected on the very next request | ${TRIALS} | ${handlerImmediate}/${TRIALS} trials | | |`);
    for (const [name, s] of [['other gateway, pub/sub', result.pubsub_ms], ['other gateway, pub/sub lost', result.pubsub_lost_ms]] as const) {
      console.log(`| ${name} | ${s.n} | ${s.p50} | ${s.p99} | ${s.max} |`);
    }
  } finally {
    await stack.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
