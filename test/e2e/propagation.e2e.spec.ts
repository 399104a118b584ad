import { REDIS_TOPOLOGIES, bearer, call, newAccount, newApiKey, startStack, waitFor } from '@svc/test-kit';
import type { Stack } from '@svc/test-kit';

/**
 * Spec section 3: a change applies at once on the server that handles it and reaches every
 * server within about 15 s (KEY_PROPAGATION_MAX_MS). Gateway 0 handles the changes; gateway 1
 * hears them on pub/sub; gateway 2 is cut off from pub/sub (KEY_CHANGES_SUBSCRIBE=false), so
 * only its cache lifetime bounds how stale it can be: a lost message.
 */
const BOUND_MS = 15_000;
const CACHE_TTL_MS = 3_000;

describe.each(REDIS_TOPOLOGIES)('key change propagation across gateway processes (%s Redis)', (topology) => {
  let stack: Stack;
  let handler: string;
  let peers: { name: string; url: string }[];
  let account: Awaited<ReturnType<typeof newAccount>>;

  beforeAll(async () => {
    stack = await startStack({
      name: `propagation_${topology}`,
      cluster: topology === 'cluster',
      redisDb: 5,
      gatewayEnv: { KEY_CACHE_TTL_MS: String(CACHE_TTL_MS) },
      gateways: [{}, {}, { env: { KEY_CHANGES_SUBSCRIBE: 'false' } }],
    });
    const [g0, g1, g2] = stack.gateways;
    if (g0 === undefined || g1 === undefined || g2 === undefined) throw new Error('three gateways expected');
    handler = g0.url;
    peers = [{ name: 'with pub/sub', url: g1.url }, { name: 'pub/sub lost', url: g2.url }];
    account = await newAccount(handler, 'propagation');
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
  });

  const status = async (url: string, secret: string): Promise<string> => {
    // GET /v1/credits: billing trusts the gateway's verdict, so the answer is the gateway's own (account-admin would re-check a deleted key itself).
    const response = await call('GET', `${url}/v1/credits`, { headers: bearer(secret) });
    return response.status === 200 ? 'ok' : String(response.body?.error?.code);
  };

  /** Warms every gateway's cache, applies the change through the handler, then waits for every peer. */
  async function propagate(secret: string, change: () => Promise<void>, expected: string): Promise<void> {
    for (const peer of peers) expect(await status(peer.url, secret)).not.toBe(expected);
    const changedAt = Date.now();
    await change();
    expect(await status(handler, secret)).toBe(expected);
    await Promise.all(peers.map(async (peer) => {
      const seenAt = await waitFor(`${expected} on the gateway ${peer.name}`, async () =>
        (await status(peer.url, secret)) === expected ? Date.now() : undefined, { timeoutMs: BOUND_MS + 5_000, intervalMs: 25 });
      expect(seenAt - changedAt).toBeLessThanOrEqual(BOUND_MS);
    }));
  }

  it('a disable, a re-enable and a delete reach every gateway within the bound, pub/sub or not', async () => {
    const key = await newApiKey(handler, account.managementKey);
    const patch = (body: unknown) => async () => {
      expect((await call('PATCH', `${handler}/v1/keys/${key.id}`, { body, headers: bearer(account.managementKey) })).status).toBe(200);
    };
    await propagate(key.secret, patch({ disabled: true }), 'key_disabled');
    await propagate(key.secret, patch({ disabled: false }), 'ok');
    await propagate(key.secret, async () => {
      expect((await call('DELETE', `${handler}/v1/keys/${key.id}`, { headers: bearer(account.managementKey) })).status).toBe(200);
    }, 'invalid_api_key');
  });

  it('an expiry edit reaches every gateway: each rejects the key once the new expiry passes', async () => {
    const key = await newApiKey(handler, account.managementKey);
    const expiresAt = Date.now() + 2_000;
    await propagate(key.secret, async () => {
      const response = await call('PATCH', `${handler}/v1/keys/${key.id}`, {
        body: { expires_at: new Date(expiresAt).toISOString() },
        headers: bearer(account.managementKey),
      });
      expect(response.status).toBe(200);
      await waitFor('the new expiry to pass', () => (Date.now() >= expiresAt ? true : undefined));
    }, 'key_expired');
  });
});
