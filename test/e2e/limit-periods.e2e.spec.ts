import { bearer, call, newAccount, newApiKey, grantCredits, useStack } from '@svc/test-kit';
import type { JsonResponse } from '@svc/test-kit';

/**
 * A key's spend inside its current period survives any change of its limit or reset period,
 * and no interleaving of PATCHes and searches lets a key spend more in a period than the
 * largest limit in force during it. exa/fast at max_results 10 costs 0.009 USD.
 */
const RESETS = [null, 'daily', 'weekly', 'monthly'] as const;

describe('key limits across changes of the reset period', () => {
  const suite = useStack({
    name: 'limitperiods',
    redisDb: 13,
    simulator: true,
    logLevel: 'warn',
    gatewayEnv: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000', ACCOUNT_MAX_IN_FLIGHT: '1000', PROVIDER_MAX_IN_FLIGHT_EXA: '1000' },
  });

  async function fundedAccount(usd: number): Promise<Awaited<ReturnType<typeof newAccount>>> {
    const account = await newAccount(suite.gw, 'limits');
    await grantCredits(suite.stack, account.accountId, usd * 1_000_000, { redis: suite.redis });
    return account;
  }

  const search = (secret: string, query: string): Promise<JsonResponse> =>
    call('POST', `${suite.gw}/v1/search`, { body: { query, model: 'exa/fast', max_results: 10 }, headers: bearer(secret) });

  it('every switch between null, daily, weekly and monthly keeps the period\'s spend', async () => {
    const account = await fundedAccount(5);
    for (const from of RESETS) {
      for (const to of RESETS) {
        if (from === to) continue;
        const key = await newApiKey(suite.gw, account.managementKey, { limit_usd: 0.018, limit_reset: from });
        expect((await search(key.secret, `spend ${from} ${to} 1`)).status).toBe(200);
        expect((await search(key.secret, `spend ${from} ${to} 2`)).status).toBe(200);
        const refused = await search(key.secret, `spend ${from} ${to} 3`);
        expect([refused.status, refused.body.error.code]).toEqual([402, 'key_limit_exceeded']);
        const patched = await call('PATCH', `${suite.gw}/v1/keys/${key.id}`, { body: { limit_reset: to }, headers: bearer(account.managementKey) });
        expect(patched.status).toBe(200);
        expect([from, to, patched.body.usage_usd, patched.body.limit_remaining_usd]).toEqual([from, to, 0.018, 0]);
        const after = await search(key.secret, `spend ${from} ${to} 4`);
        expect([from, to, after.status]).toEqual([from, to, 402]);
        // Raising the limit keeps the spend too: exactly one more search fits.
        const raised = await call('PATCH', `${suite.gw}/v1/keys/${key.id}`, { body: { limit_usd: 0.027 }, headers: bearer(account.managementKey) });
        expect([raised.body.usage_usd, raised.body.limit_remaining_usd]).toEqual([0.018, 0.009]);
        expect((await search(key.secret, `spend ${from} ${to} 5`)).status).toBe(200);
        expect((await search(key.secret, `spend ${from} ${to} 6`)).status).toBe(402);
      }
    }
  }, 120_000);

  it('concurrent PATCHes of the period during searches never let the key spend more than the largest limit', async () => {
    const account = await fundedAccount(5);
    for (let round = 0; round < 3; round++) {
      const key = await newApiKey(suite.gw, account.managementKey, { limit_usd: 0.03, limit_reset: 'daily' });
      const searches: Promise<JsonResponse>[] = [];
      const patches: Promise<JsonResponse>[] = [];
      for (let i = 0; i < 40; i++) {
        searches.push(search(key.secret, `race ${round} ${i} sim:exa=slow40`));
        if (i % 4 === 0) {
          const reset = RESETS[(i / 4) % RESETS.length] ?? null;
          patches.push(call('PATCH', `${suite.gw}/v1/keys/${key.id}`, { body: { limit_reset: reset }, headers: bearer(account.managementKey) }));
        }
        if (i % 8 === 7) await new Promise((resolve) => setTimeout(resolve, 15));
      }
      const replies = await Promise.all(searches);
      await Promise.all(patches);
      const spent = replies.filter((r) => r.status === 200).reduce((sum, r) => sum + Math.round(Number(r.body.cost_usd) * 1_000_000), 0);
      expect([round, spent <= 30_000]).toEqual([round, true]);
      expect(replies.every((r) => r.status === 200 || r.status === 402)).toBe(true);
    }
  }, 120_000);
});
