import { redisKeys } from '@svc/contracts';
import { bearer, call, newAccount, newApiKey, waitFor, grantCredits, useStack, SETTLING_STACK } from '@svc/test-kit';

/**
 * `last_used_at` is set on use, off the hot path: the ledger worker reports the settled
 * searches' keys to account-admin, at most once a minute per key.
 */
describe('last_used_at', () => {
  const suite = useStack({ ...SETTLING_STACK, name: 'lastused', redisDb: 15, workerEnv: { LEDGER_DRAIN_INTERVAL_MS: '100', KEY_USE_FLUSH_INTERVAL_MS: '100' } });

  it('is null before any use, set after a search, and not moved by another use within the minute', async () => {
    const account = await newAccount(suite.gw, 'lastused');
    await grantCredits(suite.stack, account.accountId, 1000000, { redis: suite.redis });
    const used = await newApiKey(suite.gw, account.managementKey);
    const idle = await newApiKey(suite.gw, account.managementKey);
    const read = async (id: string): Promise<string | null> =>
      (await call('GET', `${suite.gw}/v1/keys/${id}`, { headers: bearer(account.managementKey) })).body.last_used_at as string | null;
    expect(await read(used.id)).toBeNull();

    const before = Date.now();
    const first = await call('POST', `${suite.gw}/v1/search`, { body: { query: 'use 1', model: 'exa/fast' }, headers: bearer(used.secret) });
    expect(first.status).toBe(200);
    const stamped = await waitFor('last_used_at to be written', async () => (await read(used.id)) ?? undefined, { timeoutMs: 20_000, intervalMs: 100 });
    expect(Date.parse(stamped)).toBeGreaterThanOrEqual(before - 1_000);
    expect(Date.parse(stamped)).toBeLessThanOrEqual(Date.now());

    // A second use a moment later: the worker has sent it or not, account-admin keeps the first stamp within the minute.
    expect((await call('POST', `${suite.gw}/v1/search`, { body: { query: 'use 2', model: 'exa/fast' }, headers: bearer(used.secret) })).status).toBe(200);
    await waitFor('the second search to be drained', async () => ((await suite.redis.xlen(redisKeys.settlementStream(account.accountId))) === 0 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await read(used.id)).toBe(stamped);
    expect(await read(idle.id)).toBeNull();
  }, 60_000);
});
