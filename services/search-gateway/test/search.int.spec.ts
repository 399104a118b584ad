import type { FastifyInstance } from 'fastify';
import Redis from 'ioredis';
import { redisKeys, SETTLEMENT_DIRTY_SET, SETTLEMENT_FIELD, isSettlementRecord, periodOf } from '@svc/contracts';
import type { KeyRecord, LimitReset, SettlementRecord } from '@svc/contracts';
import { newId } from '@svc/ids';
import { generateSecret, hashSecret } from '@svc/keys';
import { freePort, redisUrl } from '@svc/test-kit';
import { buildSimulator } from '../../../tools/provider-sim/src/server';
import { SearchMetrics } from '../src/search';
import { FakeAccountAdminGrpc, startGateway } from './harness';
import type { RunningGateway } from './harness';

/**
 * POST /v1/search end to end in one process: the gateway on a free port, the real Redis
 * (database 7), the real provider simulator over loopback HTTP, and a real grpc-js server
 * standing in for account-admin. Balances are seeded by writing the spendable balance in
 * Redis directly; in production billing's grant path writes it.
 */
const DB = 7;
const PRICE = { exaFast: 9_000, exaAuto: 9_000, braveWeb: 6_000, tavilyBasic: 10_000 } as const;

interface Reply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

interface Account {
  accountId: string;
  secrets: string[];
  keyIds: string[];
}

describe('POST /v1/search (real Redis, provider simulator, in-process gateway)', () => {
  let redis: Redis;
  let sim: FastifyInstance;
  let simBase = '';
  let grpc: FakeAccountAdminGrpc;
  const started: RunningGateway[] = [];
  let main: RunningGateway;

  async function gateway(env: Record<string, string>, omit: string[] = []): Promise<RunningGateway> {
    const full: Record<string, string> = {
      REDIS_URL: redisUrl(DB),
      ACCOUNT_ADMIN_GRPC_URL: `127.0.0.1:${grpc.port}`,
      ACCOUNT_ADMIN_HTTP_URL: `http://127.0.0.1:${await freePort()}`,
      BILLING_HTTP_URL: `http://127.0.0.1:${await freePort()}`,
      KEY_CHANGES_SUBSCRIBE: 'false',
      BRAVE_BASE_URL: `${simBase}/brave/res/v1`, BRAVE_API_KEY: 'sim-brave-key',
      EXA_BASE_URL: `${simBase}/exa`, EXA_API_KEY: 'sim-exa-key',
      TAVILY_BASE_URL: `${simBase}/tavily`, TAVILY_API_KEY: 'tvly-sim-key',
      PROVIDER_TIMEOUT_MS: '400',
      // This suite makes exa fail and time out on purpose, many times within a breaker window; on a
      // loaded machine the health flush lands mid-suite and the breaker (rightly) opens, turning later
      // exa searches into 503s. The breaker has its own suites; here it only counts.
      PROVIDER_BREAKER_ENABLED: 'false',
      PROVIDER_MAX_IN_FLIGHT_BRAVE: '1000', PROVIDER_MAX_IN_FLIGHT_EXA: '1000', PROVIDER_MAX_IN_FLIGHT_TAVILY: '1000',
      ...env,
    };
    for (const name of omit) delete full[name];
    const running = await startGateway(full);
    started.push(running);
    return running;
  }

  beforeAll(async () => {
    redis = new Redis(redisUrl(DB));
    await redis.flushdb();
    sim = buildSimulator();
    const port = await freePort();
    await sim.listen({ port, host: '127.0.0.1' });
    simBase = `http://127.0.0.1:${port}`;
    grpc = new FakeAccountAdminGrpc();
    await grpc.start();
    main = await gateway({});
  });

  afterAll(async () => {
    for (const running of started) await running.close();
    await grpc.stop();
    await sim.close();
    redis.disconnect();
  });

  /** An account with `keys` API keys (optionally limited) and a spendable balance. */
  async function account(balanceMicros: number, keys = 1, limit?: { micros: number; reset: LimitReset | null }): Promise<Account> {
    const accountId = newId('account');
    const secrets: string[] = [];
    const keyIds: string[] = [];
    for (let i = 0; i < keys; i++) {
      const secret = generateSecret('api');
      const record: KeyRecord = {
        id: newId('apiKey'), accountId, kind: 'api', disabled: false, expiresAtMs: null,
        limitMicros: limit?.micros ?? null, limitReset: limit?.reset ?? null, version: 1, deleted: false,
      };
      grpc.records.set(hashSecret(secret), record);
      secrets.push(secret);
      keyIds.push(record.id);
    }
    await redis.set(redisKeys.accountBalance(accountId), String(balanceMicros));
    return { accountId, secrets, keyIds };
  }

  async function search(target: RunningGateway, secret: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
    const response = await fetch(`${target.url}/v1/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: JSON.parse(text) as Record<string, unknown>, text };
  }

  const balance = async (a: Account): Promise<number> => Number(await redis.get(redisKeys.accountBalance(a.accountId)));
  const reserved = async (a: Account): Promise<number> => Number((await redis.get(redisKeys.accountReserved(a.accountId))) ?? '0');
  async function records(a: Account): Promise<SettlementRecord[]> {
    const entries = await redis.xrange(redisKeys.settlementStream(a.accountId), '-', '+');
    return entries.map(([, fields]) => {
      expect(fields[0]).toBe(SETTLEMENT_FIELD);
      const parsed = JSON.parse(fields[1] ?? 'null') as unknown;
      if (!isSettlementRecord(parsed)) throw new Error('not a settlement record');
      return parsed;
    });
  }
  const errorOf = (reply: Reply): Record<string, unknown> => reply.body.error as Record<string, unknown>;

  describe('fallback and skipped attempts', () => {
    it('falls back in the given order and charges only the model that answered, with one settlement record', async () => {
      const a = await account(1_000_000);
      const reply = await search(main, a.secrets[0] ?? '', { query: 'rust async sim:tavily=error500', models: ['tavily/basic', 'exa/fast', 'brave/web'], max_results: 5 });
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({
        request_id: reply.headers.get('x-svc-request-id'), model: 'exa/fast', provider: 'exa', source: 'platform', cost_usd: 0.009,
        attempts: [{ model: 'tavily/basic', source: 'platform', status: 'error', error: 'provider returned 500' }],
      });
      expect(reply.body.results).toHaveLength(5);
      expect(typeof reply.body.latency_ms).toBe('number');
      expect(reply.headers.get('x-ratelimit-limit')).toBe('20');
      // A fresh key's first search leaves the burst less this one.
      expect(reply.headers.get('x-ratelimit-remaining')).toBe('39');
      expect(await balance(a)).toBe(1_000_000 - PRICE.exaFast);
      expect(await reserved(a)).toBe(0);
      const [record, ...more] = await records(a);
      expect(more).toHaveLength(0);
      expect(record).toMatchObject({ requestId: reply.body.request_id, accountId: a.accountId, keyId: a.keyIds[0], chargedMicros: PRICE.exaFast });
      expect(record?.attempts.map((x) => [x.model, x.status, x.reservedMicros, x.chargedMicros])).toEqual([
        ['tavily/basic', 'error', PRICE.tavilyBasic, 0], ['exa/fast', 'success', PRICE.exaFast, PRICE.exaFast],
      ]);
      expect(await redis.sismember(SETTLEMENT_DIRTY_SET, a.accountId)).toBe(1);
      expect(Number(await redis.get(redisKeys.keyTotalUsage(a.accountId, a.keyIds[0] ?? '')))).toBe(PRICE.exaFast);
    });

    it('skips a provider without a platform key ("provider not configured")', async () => {
      const noBrave = await gateway({}, ['BRAVE_API_KEY']);
      const a = await account(1_000_000);
      const reply = await search(noBrave, a.secrets[0] ?? '', { query: 'q', models: ['brave/web', 'exa/fast'], max_results: 3 });
      expect(reply.status).toBe(200);
      expect(reply.body.model).toBe('exa/fast');
      expect(reply.body.attempts).toEqual([{ model: 'brave/web', status: 'skipped', error: 'provider not configured' }]);
    });

    it('skips a model the balance cannot cover and answers with the next one', async () => {
      const a = await account(9_500);
      const reply = await search(main, a.secrets[0] ?? '', { query: 'q', models: ['tavily/basic', 'exa/fast'], max_results: 3 });
      expect(reply.status).toBe(200);
      expect(reply.body.attempts).toEqual([{ model: 'tavily/basic', source: 'platform', status: 'skipped', error: 'insufficient credits' }]);
      expect(await balance(a)).toBe(9_500 - PRICE.exaFast);
    });

    it('a failed attempt is refunded before the next is reserved, so a tight balance still falls back', async () => {
      const a = await account(PRICE.tavilyBasic);
      const reply = await search(main, a.secrets[0] ?? '', { query: 'q sim:tavily=error500', models: ['tavily/basic', 'brave/web'], max_results: 3 });
      expect(reply.status).toBe(200);
      expect(await balance(a)).toBe(PRICE.tavilyBasic - PRICE.braveWeb);
    });

    it('skips a provider whose cluster-wide leases are all taken, and frees its own lease afterwards', async () => {
      const leases = redisKeys.providerLeases('brave');
      const farFuture = Date.now() + 60_000;
      await redis.zadd(leases, ...Array.from({ length: 1000 }, (_, i) => [farFuture, `other-${i}`]).flat());
      try {
        const a = await account(1_000_000);
        const reply = await search(main, a.secrets[0] ?? '', { query: 'q', models: ['brave/web', 'exa/fast'], max_results: 3 });
        expect(reply.status).toBe(200);
        expect(reply.body.attempts).toEqual([{ model: 'brave/web', source: 'platform', status: 'skipped', error: 'provider at capacity' }]);
        expect(await balance(a)).toBe(1_000_000 - PRICE.exaFast);
        expect(await redis.zcard(leases)).toBe(1000);
        expect(await redis.zcard(redisKeys.providerLeases('exa'))).toBe(0);
      } finally {
        await redis.del(leases);
      }
    });
  });

  describe('402, 502 and 503', () => {
    it('402 insufficient_credits when no model can be afforded; needed_usd is the cheapest blocked price; nothing charged', async () => {
      const a = await account(4_000);
      const reply = await search(main, a.secrets[0] ?? '', { query: 'q', models: ['tavily/basic', 'exa/fast'], max_results: 3 });
      expect(reply.status).toBe(402);
      expect(errorOf(reply)).toMatchObject({ code: 'insufficient_credits', needed_usd: 0.009, request_id: reply.headers.get('x-svc-request-id') });
      expect(await balance(a)).toBe(4_000);
      expect(await records(a)).toEqual([]);
    });

    it('402 key_limit_exceeded when the key limit blocks every model, nothing charged', async () => {
      const a = await account(1_000_000, 1, { micros: 4_000, reset: null });
      const reply = await search(main, a.secrets[0] ?? '', { query: 'q', models: ['tavily/basic', 'exa/fast'], max_results: 3 });
      expect(reply.status).toBe(402);
      expect(errorOf(reply)).toMatchObject({ code: 'key_limit_exceeded', needed_usd: 0.009 });
      expect(await balance(a)).toBe(1_000_000);
    });

    it('402 key_limit_exceeded when one model hit the key limit and another the balance', async () => {
      const a = await account(5_500, 1, { micros: 8_000, reset: null });
      const reply = await search(main, a.secrets[0] ?? '', { query: 'q', models: ['tavily/basic', 'brave/web'], max_results: 3 });
      expect(reply.status).toBe(402);
      expect(errorOf(reply)).toMatchObject({ code: 'key_limit_exceeded', needed_usd: 0.006 });
    });

    it('a daily key limit counts in the current UTC period and in all-time usage', async () => {
      const a = await account(1_000_000, 1, { micros: 10_000, reset: 'daily' });
      const keyId = a.keyIds[0] ?? '';
      expect((await search(main, a.secrets[0] ?? '', { query: 'q', model: 'exa/fast', max_results: 3 })).status).toBe(200);
      const second = await search(main, a.secrets[0] ?? '', { query: 'q', model: 'exa/fast', max_results: 3 });
      expect(second.status).toBe(402);
      expect(errorOf(second).code).toBe('key_limit_exceeded');
      const periodKey = redisKeys.keyPeriodUsage(a.accountId, keyId, 'daily', periodOf('daily', Date.now()).startMs);
      expect(Number(await redis.get(periodKey))).toBe(PRICE.exaFast);
      expect(Number(await redis.get(redisKeys.keyTotalUsage(a.accountId, keyId)))).toBe(PRICE.exaFast);
    });

    it('502 all_providers_failed lists every attempt in order and charges nothing', async () => {
      const a = await account(1_000_000);
      const reply = await search(main, a.secrets[0] ?? '', { query: 'q sim:*=error500', models: ['tavily/basic', 'exa/fast', 'brave/web'], max_results: 3 });
      expect(reply.status).toBe(502);
      expect(errorOf(reply)).toMatchObject({
        code: 'all_providers_failed',
        attempts: [
          { model: 'tavily/basic', source: 'platform', status: 'error', error: 'provider returned 500' },
          { model: 'exa/fast', source: 'platform', status: 'error', error: 'provider returned 500' },
          { model: 'brave/web', source: 'platform', status: 'error', error: 'provider returned 500' },
        ],
      });
      expect(await balance(a)).toBe(1_000_000);
      expect(await reserved(a)).toBe(0);
      const [record] = await records(a);
      expect(record?.chargedMicros).toBe(0);
      expect(record?.attempts).toHaveLength(3);
    });

    it('a timed-out attempt keeps exactly the base price and carries cost_usd', async () => {
      const a = await account(1_000_000);
      const reply = await search(main, a.secrets[0] ?? '', { query: 'q sim:exa=timeout', models: ['exa/auto', 'tavily/basic'], max_results: 20 });
      expect(reply.status).toBe(200);
      expect(reply.body.attempts).toEqual([{ model: 'exa/auto', source: 'platform', status: 'error', error: 'provider did not answer within 400 ms', cost_usd: 0.009 }]);
      expect(reply.body.cost_usd).toBe(0.019);
      expect(await balance(a)).toBe(1_000_000 - PRICE.exaAuto - PRICE.tavilyBasic);

      const only = await search(main, a.secrets[0] ?? '', { query: 'q sim:exa=timeout', model: 'exa/auto', max_results: 20 });
      expect(only.status).toBe(502);
      expect(errorOf(only).attempts).toEqual([{ model: 'exa/auto', source: 'platform', status: 'error', error: 'provider did not answer within 400 ms', cost_usd: 0.009 }]);
      expect(await balance(a)).toBe(1_000_000 - 2 * PRICE.exaAuto - PRICE.tavilyBasic);
      expect(await reserved(a)).toBe(0);
      expect((await records(a)).map((r) => r.chargedMicros)).toEqual([PRICE.exaAuto + PRICE.tavilyBasic, PRICE.exaAuto]);
    });

    it('SEARCH_MAX_DURATION_MS bounds the whole search: the last attempt gets what is left, later ones are skipped', async () => {
      // The search's bound holds the longest arrival and one provider call (decision 0044): 200 + 400 ms.
      const bounded = await gateway({ SEARCH_MAX_DURATION_MS: '600', HTTP_REQUEST_TIMEOUT_MS: '200' });
      const a = await account(1_000_000);
      const reply = await search(bounded, a.secrets[0] ?? '', { query: 'q sim:exa=timeout', models: ['exa/auto', 'exa/fast', 'tavily/basic'], max_results: 20 });
      expect(reply.status).toBe(502);
      const attempts = errorOf(reply).attempts as { model: string; status: string; error: string }[];
      expect(attempts.map((x) => [x.model, x.status])).toEqual([['exa/auto', 'error'], ['exa/fast', 'error'], ['tavily/basic', 'skipped']]);
      expect(attempts[0]?.error).toBe('provider did not answer within 400 ms');
      const cut = Number(/within (\d+) ms/.exec(attempts[1]?.error ?? '')?.[1]);
      expect(cut).toBeGreaterThan(0);
      expect(cut).toBeLessThan(400);
      expect(attempts[2]).toEqual({ model: 'tavily/basic', status: 'skipped', error: 'search time limit reached' });
      expect(await reserved(a)).toBe(0);
    });

    it('503 overloaded with Retry-After when every allowed model is at capacity, nothing charged', async () => {
      const full = await gateway({ PROVIDER_MAX_IN_FLIGHT_EXA: '0', PROVIDER_MAX_IN_FLIGHT_TAVILY: '0' });
      const a = await account(20_000);
      const reply = await search(full, a.secrets[0] ?? '', { query: 'q', models: ['exa/fast', 'tavily/basic'], max_results: 3 });
      expect(reply.status).toBe(503);
      expect(reply.headers.get('retry-after')).toBe('1');
      expect(errorOf(reply).code).toBe('overloaded');
      expect(await balance(a)).toBe(20_000);
      expect(await reserved(a)).toBe(0);
      expect(await records(a)).toEqual([]);
    });
  });

  describe('every simulator behaviour ends in a defined outcome', () => {
    it.each([
      ['error500', 502, 'provider returned 500'],
      ['error429', 502, 'provider rate limited the request (429)'],
      ['quota', 502, 'provider credits exhausted (402)'],
      ['badkey', 502, 'provider rejected the key (401)'],
      ['timeout', 502, 'provider did not answer within 400 ms'],
      ['malformed', 502, 'provider returned an unparsable body'],
      ['slow50', 200, null],
      ['empty', 200, null],
    ] as const)('sim:exa=%s -> %i', async (behaviour, status, error) => {
      const a = await account(1_000_000);
      const reply = await search(main, a.secrets[0] ?? '', { query: `q sim:exa=${behaviour}`, model: 'exa/auto', max_results: 5 });
      expect(reply.status).toBe(status);
      if (error !== null) expect(errorOf(reply).attempts).toMatchObject([{ model: 'exa/auto', status: 'error', error }]);
      if (behaviour === 'empty') expect(reply.body).toMatchObject({ results: [], cost_usd: 0.009 });
      const expected = status === 200 || behaviour === 'timeout' ? PRICE.exaAuto : 0;
      expect(await balance(a)).toBe(1_000_000 - expected);
    });

    it.each(['brave/web', 'tavily/basic'])('%s: every failing behaviour is a 502, never a 500', async (model) => {
      const a = await account(1_000_000);
      for (const behaviour of ['error500', 'error429', 'quota', 'badkey', 'malformed']) {
        const reply = await search(main, a.secrets[0] ?? '', { query: `q sim:*=${behaviour}`, model, max_results: 5 });
        expect([behaviour, reply.status]).toEqual([behaviour, 502]);
      }
      expect(await balance(a)).toBe(1_000_000);
    });

    it('a rejected platform key is counted for operators', async () => {
      const metrics = main.app.get(SearchMetrics);
      const before = metrics.failuresOf('tavily', 'bad_key');
      const a = await account(1_000_000);
      await search(main, a.secrets[0] ?? '', { query: 'q sim:tavily=badkey', model: 'tavily/basic' });
      expect(metrics.failuresOf('tavily', 'bad_key')).toBe(before + 1);
    });
  });

  describe('validation happens before any charge', () => {
    it.each([
      ['an unknown field', { query: 'q', model: 'exa/fast', colour: 'red' }, /unknown field "colour"/],
      ['an empty query', { query: '   ', model: 'exa/fast' }, /query/],
      ['a query over 2000 characters', { query: 'x'.repeat(2001), model: 'exa/fast' }, /query/],
      ['max_results 0', { query: 'q', model: 'exa/fast', max_results: 0 }, /max_results/],
      ['max_results 101', { query: 'q', model: 'exa/fast', max_results: 101 }, /max_results/],
      ['max_results as a string', { query: 'q', model: 'exa/fast', max_results: '5' }, /max_results/],
      ['11 models', { query: 'q', models: Array.from({ length: 11 }, () => 'exa/fast') }, /models/],
      ['no model', { query: 'q' }, /model/],
      ['a missing query', { model: 'exa/fast' }, /query/],
    ])('%s is 400 invalid_request naming the problem', async (_what, body, message) => {
      const a = await account(1_000_000);
      const reply = await search(main, a.secrets[0] ?? '', body);
      expect(reply.status).toBe(400);
      expect(errorOf(reply).code).toBe('invalid_request');
      expect(String(errorOf(reply).message)).toMatch(message);
      expect(await balance(a)).toBe(1_000_000);
    });

    it('a body that is not JSON is 400 invalid_request', async () => {
      const a = await account(1_000_000);
      const reply = await search(main, a.secrets[0] ?? '', '{"query": ');
      expect(reply.status).toBe(400);
      expect(errorOf(reply).code).toBe('invalid_request');
    });

    it('an unknown model anywhere in the list is 400 unknown_model before any attempt or charge', async () => {
      const a = await account(1_000_000);
      const reply = await search(main, a.secrets[0] ?? '', { query: 'q', model: 'exa/fast', models: ['tavily/basic', 'exa/neural'] });
      expect(reply.status).toBe(400);
      expect(errorOf(reply)).toMatchObject({ code: 'unknown_model' });
      expect(await balance(a)).toBe(1_000_000);
      expect(await records(a)).toEqual([]);
    });

    it('a management key gets 403 wrong_key_type, a missing key 401', async () => {
      const secret = generateSecret('management');
      grpc.records.set(hashSecret(secret), {
        id: newId('managementKey'), accountId: newId('account'), kind: 'management', disabled: false, expiresAtMs: null,
        limitMicros: null, limitReset: null, version: 1, deleted: false,
      });
      expect(errorOf(await search(main, secret, { query: 'q', model: 'exa/fast' })).code).toBe('wrong_key_type');
      const anonymous = await fetch(`${main.url}/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(anonymous.status).toBe(401);
    });

    it('model then models, duplicates removed', async () => {
      const a = await account(1_000_000);
      const reply = await search(main, a.secrets[0] ?? '', { query: 'q sim:*=error500', model: 'exa/fast', models: ['brave/web', 'exa/fast', 'brave/web'] });
      expect(errorOf(reply).attempts).toMatchObject([{ model: 'exa/fast' }, { model: 'brave/web' }]);
    });
  });

  describe('Idempotency-Key', () => {
    it('a repeat returns the first outcome (status, body, request id) and charges once', async () => {
      const a = await account(1_000_000);
      const body = { query: 'q', model: 'exa/fast', max_results: 3 };
      const first = await search(main, a.secrets[0] ?? '', body, { 'idempotency-key': 'order-1' });
      const again = await search(main, a.secrets[0] ?? '', { max_results: 3, model: 'exa/fast', query: 'q' }, { 'idempotency-key': 'order-1' });
      expect(first.status).toBe(200);
      expect(again.status).toBe(200);
      expect(again.text).toBe(first.text);
      expect(again.headers.get('x-svc-request-id')).toBe(first.body.request_id);
      expect(await balance(a)).toBe(1_000_000 - PRICE.exaFast);
      expect(await records(a)).toHaveLength(1);
    });

    it('a repeat of a 402 returns the same 402', async () => {
      const a = await account(1_000);
      const body = { query: 'q', model: 'exa/fast' };
      const first = await search(main, a.secrets[0] ?? '', body, { 'idempotency-key': 'k402' });
      await redis.set(redisKeys.accountBalance(a.accountId), '1000000');
      const again = await search(main, a.secrets[0] ?? '', body, { 'idempotency-key': 'k402' });
      expect([first.status, again.status]).toEqual([402, 402]);
      expect(again.text).toBe(first.text);
    });

    it('concurrent repeats wait for the first outcome and charge once', async () => {
      const a = await account(1_000_000);
      const body = { query: 'q sim:exa=slow150', model: 'exa/fast', max_results: 3 };
      const replies = await Promise.all(Array.from({ length: 6 }, () => search(main, a.secrets[0] ?? '', body, { 'idempotency-key': 'same' })));
      expect(new Set(replies.map((r) => r.text)).size).toBe(1);
      expect(replies.every((r) => r.status === 200)).toBe(true);
      expect(await balance(a)).toBe(1_000_000 - PRICE.exaFast);
      expect(await records(a)).toHaveLength(1);
    });

    it('the same key with a different body is 400; a key of another API key is independent', async () => {
      const a = await account(1_000_000, 2);
      await search(main, a.secrets[0] ?? '', { query: 'q', model: 'exa/fast' }, { 'idempotency-key': 'dup' });
      const other = await search(main, a.secrets[0] ?? '', { query: 'other', model: 'exa/fast' }, { 'idempotency-key': 'dup' });
      expect(other.status).toBe(400);
      expect(errorOf(other).code).toBe('invalid_request');
      const secondKey = await search(main, a.secrets[1] ?? '', { query: 'other', model: 'exa/fast' }, { 'idempotency-key': 'dup' });
      expect(secondKey.status).toBe(200);
      expect(await balance(a)).toBe(1_000_000 - 2 * PRICE.exaFast);
    });

    it('a 503 is not kept: the same key runs again once capacity is back, and charges once', async () => {
      const full = await gateway({ PROVIDER_MAX_IN_FLIGHT_EXA: '0' });
      const a = await account(1_000_000);
      const body = { query: 'q', model: 'exa/fast', max_results: 3 };
      const first = await search(full, a.secrets[0] ?? '', body, { 'idempotency-key': 'k503' });
      expect(first.status).toBe(503);
      const again = await search(main, a.secrets[0] ?? '', body, { 'idempotency-key': 'k503' });
      expect(again.status).toBe(200);
      const third = await search(main, a.secrets[0] ?? '', body, { 'idempotency-key': 'k503' });
      expect(third.text).toBe(again.text);
      expect(await balance(a)).toBe(1_000_000 - PRICE.exaFast);
    });

    it('a repeat gets the first outcome even when the key has no rate left, and takes no token', async () => {
      const limited = await gateway({ RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '1' });
      const a = await account(1_000_000);
      const body = { query: 'q', model: 'exa/fast', max_results: 3 };
      const first = await search(limited, a.secrets[0] ?? '', body, { 'idempotency-key': 'k-rate' });
      expect(first.status).toBe(200);
      const fresh = await search(limited, a.secrets[0] ?? '', { ...body, query: 'another' });
      expect(fresh.status).toBe(429);
      const repeat = await search(limited, a.secrets[0] ?? '', body, { 'idempotency-key': 'k-rate' });
      expect(repeat.status).toBe(200);
      expect(repeat.text).toBe(first.text);
      expect(await balance(a)).toBe(1_000_000 - PRICE.exaFast);
    });

    it('a key longer than 255 characters is 400', async () => {
      const a = await account(1_000_000);
      const reply = await search(main, a.secrets[0] ?? '', { query: 'q', model: 'exa/fast' }, { 'idempotency-key': 'k'.repeat(256) });
      expect(reply.status).toBe(400);
      expect(await balance(a)).toBe(1_000_000);
    });
  });
});
