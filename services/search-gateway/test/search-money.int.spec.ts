import type { FastifyInstance } from 'fastify';
import Redis from 'ioredis';
import { isSettlementRecord, redisKeys } from '@svc/contracts';
import type { KeyRecord } from '@svc/contracts';
import { newId } from '@svc/ids';
import { generateSecret, hashSecret } from '@svc/keys';
import { freePort, redisUrl, seededRandom } from '@svc/test-kit';
import { buildSimulator } from '../../../tools/provider-sim/src/server';
import { FakeAccountAdminGrpc, startGateway } from './harness';
import type { RunningGateway } from './harness';

/**
 * Money exactness under concurrency: two gateways in this process share the real Redis
 * (database 7). Balances are seeded in Redis directly (billing's grant path does it in
 * production). Which key and gateway each request uses is drawn from a seeded PRNG.
 */
const DB = 7;
const PRICE = 9_000; // exa/fast, max_results 3
const N = 12;
const SEED = 20260101;

describe('search money under concurrency (real Redis, two gateways, provider simulator)', () => {
  let redis: Redis;
  let sim: FastifyInstance;
  let grpc: FakeAccountAdminGrpc;
  const gateways: RunningGateway[] = [];

  beforeAll(async () => {
    redis = new Redis(redisUrl(DB));
    sim = buildSimulator();
    const port = await freePort();
    await sim.listen({ port, host: '127.0.0.1' });
    grpc = new FakeAccountAdminGrpc();
    await grpc.start();
    for (let i = 0; i < 2; i++) {
      gateways.push(await startGateway({
        REDIS_URL: redisUrl(DB),
        ACCOUNT_ADMIN_GRPC_URL: `127.0.0.1:${grpc.port}`,
        ACCOUNT_ADMIN_HTTP_URL: `http://127.0.0.1:${await freePort()}`,
        BILLING_HTTP_URL: `http://127.0.0.1:${await freePort()}`,
        KEY_CHANGES_SUBSCRIBE: 'false',
        EXA_BASE_URL: `http://127.0.0.1:${port}/exa`, EXA_API_KEY: 'sim-exa-key',
        PROVIDER_MAX_IN_FLIGHT_EXA: '10000',
        // Money exactness only: the rate and in-flight limits are tested in admission.int.spec.ts.
        RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_BURST: '100000', ACCOUNT_MAX_IN_FLIGHT: '100000',
      }));
    }
  });

  afterAll(async () => {
    for (const gateway of gateways) await gateway.close();
    await grpc.stop();
    await sim.close();
    redis.disconnect();
  });

  function keys(accountId: string, count: number, limitMicros: number | null): string[] {
    return Array.from({ length: count }, () => {
      const secret = generateSecret('api');
      const record: KeyRecord = {
        id: newId('apiKey'), accountId, kind: 'api', disabled: false, expiresAtMs: null,
        limitMicros, limitReset: limitMicros === null ? null : 'monthly', version: 1, deleted: false,
      };
      grpc.records.set(hashSecret(secret), record);
      return secret;
    });
  }

  /** Fires `count` searches at once; samples the balance while they run and returns the lowest seen. */
  async function storm(accountId: string, secrets: string[], count: number): Promise<{ statuses: number[]; codes: string[]; lowest: number }> {
    const random = seededRandom(SEED);
    let running = true;
    let lowest = Number.MAX_SAFE_INTEGER;
    const sampler = (async () => {
      while (running) {
        lowest = Math.min(lowest, Number(await redis.get(redisKeys.accountBalance(accountId))));
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const replies = await Promise.all(Array.from({ length: count }, async () => {
      const gateway = gateways[Math.floor(random() * gateways.length)] ?? gateways[0];
      const secret = secrets[Math.floor(random() * secrets.length)] ?? '';
      if (gateway === undefined) throw new Error('no gateway');
      const response = await fetch(`${gateway.url}/v1/search`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: `q${Math.floor(random() * 1000)} sim:exa=slow${Math.floor(random() * 20)}`, model: 'exa/fast', max_results: 3 }),
      });
      const body = (await response.json()) as { error?: { code: string } };
      return { status: response.status, code: body.error?.code ?? 'ok' };
    }));
    running = false;
    await sampler;
    return { statuses: replies.map((r) => r.status), codes: replies.map((r) => r.code), lowest };
  }

  async function chargedInStream(accountId: string): Promise<number> {
    const entries = await redis.xrange(redisKeys.settlementStream(accountId), '-', '+');
    let sum = 0;
    for (const [, fields] of entries) {
      const record = JSON.parse(fields[1] ?? 'null') as unknown;
      if (!isSettlementRecord(record)) throw new Error('not a settlement record');
      sum += record.chargedMicros;
    }
    return sum;
  }

  it(`an account funded for exactly ${N} searches gets ${4 * N} concurrent ones: exactly ${N} succeed, the balance ends at 0 and never goes below`, async () => {
    const accountId = newId('account');
    await redis.set(redisKeys.accountBalance(accountId), String(N * PRICE));
    const { statuses, codes, lowest } = await storm(accountId, keys(accountId, 4, null), 4 * N);
    expect(statuses.filter((s) => s === 200)).toHaveLength(N);
    expect(statuses.filter((s) => s === 402)).toHaveLength(3 * N);
    expect(new Set(codes.filter((c) => c !== 'ok'))).toEqual(new Set(['insufficient_credits']));
    expect(await redis.get(redisKeys.accountBalance(accountId))).toBe('0');
    expect(Number((await redis.get(redisKeys.accountReserved(accountId))) ?? '0')).toBe(0);
    expect(lowest).toBeGreaterThanOrEqual(0);
    expect(await chargedInStream(accountId)).toBe(N * PRICE);
  });

  it(`a key limit smaller than the balance holds exactly under ${4 * N} concurrent searches`, async () => {
    const accountId = newId('account');
    const funded = 3 * N * PRICE;
    await redis.set(redisKeys.accountBalance(accountId), String(funded));
    const { statuses, codes, lowest } = await storm(accountId, keys(accountId, 1, N * PRICE), 4 * N);
    expect(statuses.filter((s) => s === 200)).toHaveLength(N);
    expect(new Set(codes.filter((c) => c !== 'ok'))).toEqual(new Set(['key_limit_exceeded']));
    expect(Number(await redis.get(redisKeys.accountBalance(accountId)))).toBe(funded - N * PRICE);
    expect(lowest).toBeGreaterThanOrEqual(funded - N * PRICE);
    expect(await chargedInStream(accountId)).toBe(N * PRICE);
  });

  it('a search waits for one Redis round trip: it answers while Redis has not yet run its settlement, which then lands once', async () => {
    const accountId = newId('account');
    await redis.set(redisKeys.accountBalance(accountId), String(10 * PRICE));
    const [secret] = keys(accountId, 1, null);
    const gateway = gateways[0];
    if (gateway === undefined || secret === undefined) throw new Error('no gateway');
    const pauser = new Redis(redisUrl(DB));
    try {
      // The provider call takes 1.5 s; while it runs (after the admission) Redis stops running
      // writes, so the settlement sent after the call stays queued in Redis until UNPAUSE.
      const reply = fetch(`${gateway.url}/v1/search`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'one round trip sim:exa=slow1500', model: 'exa/fast', max_results: 3 }),
      });
      for (;;) {
        const stats = (await (await fetch(`http://127.0.0.1:${(sim.server.address() as { port: number }).port}/_sim/stats`)).json()) as { exa: { in_flight: number } };
        if (stats.exa.in_flight > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await pauser.call('CLIENT', 'PAUSE', '60000', 'WRITE');
      const response = await reply;
      expect(response.status).toBe(200);
      const body = (await response.json()) as { request_id: string; cost_usd: number };
      // Answered, and Redis has not run the settlement: the reservation is still held.
      expect(await redis.xlen(redisKeys.settlementStream(accountId))).toBe(0);
      expect(Number(await redis.get(redisKeys.accountReserved(accountId)))).toBe(PRICE);
      await pauser.call('CLIENT', 'UNPAUSE');
      for (let i = 0; i < 200 && Number(await redis.get(redisKeys.accountReserved(accountId))) !== 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(Number(await redis.get(redisKeys.accountReserved(accountId)))).toBe(0);
      expect(Number(await redis.get(redisKeys.accountBalance(accountId)))).toBe(10 * PRICE - body.cost_usd * 1_000_000);
      expect(await chargedInStream(accountId)).toBe(body.cost_usd * 1_000_000);
    } finally {
      await pauser.call('CLIENT', 'UNPAUSE').catch(() => undefined);
      pauser.disconnect();
    }
  });
});
