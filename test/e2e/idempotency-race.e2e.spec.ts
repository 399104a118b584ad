import { redisKeys } from '@svc/contracts';
import { bearer, call, newAccount, newApiKey, grantCredits, useStack } from '@svc/test-kit';
import type { JsonResponse } from '@svc/test-kit';

/**
 * Concurrent copies of one search sharing an Idempotency-Key: a repeat while the first is
 * still running waits for its outcome and gets the same status, body and request_id, and
 * takes no provider lease, in-flight slot or rate token of its own. With the default limits
 * (Exa: 10 calls at a time; 50 searches in flight per account; 40 burst per key), five keys
 * sending ten copies each must make exactly five provider calls and all answer 200.
 */
describe('concurrent copies of one Idempotency-Key', () => {
  const suite = useStack({ name: 'idemrace', redisDb: 14, simulator: true, logLevel: 'warn' });

  async function exaCalls(): Promise<number> {
    const stats = await call('GET', `${suite.stack.simulator?.url ?? ''}/_sim/stats`);
    return Number(stats.body.exa.total);
  }

  it('five keys x ten copies: one provider call per key, every copy answered with the first outcome', async () => {
    const account = await newAccount(suite.gw, 'idem');
    await grantCredits(suite.stack, account.accountId, 10000000, { redis: suite.redis });
    for (let round = 0; round < 4; round++) {
      const keys = await Promise.all([0, 1, 2, 3, 4].map(() => newApiKey(suite.gw, account.managementKey)));
      const before = await exaCalls();
      const copies: Promise<JsonResponse>[][] = keys.map((key, k) => Array.from({ length: 10 }, () =>
        call('POST', `${suite.gw}/v1/search`, {
          body: { query: 'idem race sim:exa=slow300', model: 'exa/fast', max_results: 1 },
          headers: { ...bearer(key.secret), 'idempotency-key': `race-${round}-${k}` },
        })));
      const replies = await Promise.all(copies.map((group) => Promise.all(group)));
      for (const group of replies) {
        expect(group.map((r) => r.status)).toEqual(Array.from({ length: 10 }, () => 200));
        const first = group[0];
        if (first === undefined) throw new Error('no reply');
        expect(new Set(group.map((r) => r.body.request_id)).size).toBe(1);
        expect(new Set(group.map((r) => r.text)).size).toBe(1);
        expect(group.every((r) => r.headers.get('x-svc-request-id') === first.body.request_id)).toBe(true);
      }
      expect([round, (await exaCalls()) - before]).toEqual([round, 5]);
    }
    // Nothing left held: no in-flight slot, and each key charged once per round.
    expect(await suite.redis.zcard(redisKeys.accountInFlight(account.accountId))).toBe(0);
  }, 120_000);
});
