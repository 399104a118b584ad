import { SearchGateway, SearchGatewayConnectionError, SearchGatewayError, SearchGatewayTimeoutError } from '@svc/sdk';
import type { SearchGatewayOptions } from '@svc/sdk';
import { ScriptedServer, apiError, hang, json, reset, stall, text } from './scripted-server';

/**
 * The retry and error rules (spec section 7 rule 4) against a scripted HTTP server on
 * loopback: which statuses are retried, how long the client waits (its sleep is injected and
 * recorded, so no test waits for real unless it says so), Retry-After, connection resets,
 * timeouts, aborts, and the error every non-2xx becomes.
 */
const SEARCH = { query: 'rust', model: 'exa/fast' };
const OK_SEARCH = { request_id: 'req_ok', model: 'exa/fast', provider: 'exa', source: 'platform', results: [], cost_usd: 0.009, attempts: [], latency_ms: 3 };

describe('SearchGateway retries and errors against a scripted server', () => {
  const server = ScriptedServer.forSuite();
  let sleeps: number[];

  beforeEach(() => {
    sleeps = [];
  });

  /** A client whose waits are recorded and return at once; jitter draws `random`. */
  const client = (options: SearchGatewayOptions = {}, random = 0): SearchGateway =>
    new SearchGateway({
      baseUrl: server.url,
      apiKey: 'svc-api-test',
      managementKey: 'svc-mgmt-test',
      random: () => random,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      ...options,
    });

  const failure = async (promise: Promise<unknown>): Promise<unknown> => {
    try {
      await promise;
    } catch (error) {
      return error;
    }
    throw new Error('expected a rejection');
  };

  const gatewayError = async (promise: Promise<unknown>): Promise<SearchGatewayError> => {
    const error = await failure(promise);
    expect(error).toBeInstanceOf(SearchGatewayError);
    return error as SearchGatewayError;
  };

  describe('which statuses are retried', () => {
    it.each([429, 500, 503, 504, 501, 507, 599])('%i is retried twice by default (3 attempts), then thrown', async (status) => {
      server.script(apiError(status, status === 429 ? 'rate_limited' : 'internal'));
      const error = await gatewayError(client().search(SEARCH));
      expect(server.seen).toHaveLength(3);
      expect(error.status).toBe(status);
      expect(sleeps).toEqual([300, 600]);
    });

    it.each([400, 401, 402, 403, 404, 405, 409, 422, 502])('%i is never retried', async (status) => {
      server.script(apiError(status, status === 502 ? 'all_providers_failed' : 'invalid_request', status === 502 ? { attempts: [] } : {}));
      const error = await gatewayError(client().search(SEARCH));
      expect(server.seen).toHaveLength(1);
      expect(error.status).toBe(status);
      expect(sleeps).toEqual([]);
    });

    it('a retried search that then succeeds resolves to the parsed body', async () => {
      server.script(apiError(500, 'internal'), apiError(503, 'overloaded', {}, { 'retry-after': '1' }), json(200, OK_SEARCH));
      await expect(client().search(SEARCH)).resolves.toEqual(OK_SEARCH);
      expect(server.seen).toHaveLength(3);
    });

    it('maxRetries 0 disables retrying', async () => {
      server.script(apiError(500, 'internal'));
      await gatewayError(client({ maxRetries: 0 }).search(SEARCH));
      expect(server.seen).toHaveLength(1);
      expect(sleeps).toEqual([]);
    });

    it('maxRetries is configurable, per client and per call; the backoff keeps doubling', async () => {
      server.script(apiError(503, 'overloaded'));
      await gatewayError(client({ maxRetries: 4 }).models());
      expect(server.seen).toHaveLength(5);
      expect(sleeps).toEqual([300, 600, 1200, 2400]);
      server.script(apiError(503, 'overloaded'));
      await gatewayError(client({ maxRetries: 4 }).models({ maxRetries: 1 }));
      expect(server.seen).toHaveLength(2);
    });

    it('every endpoint follows the same rules (a 500 on a GET, a PATCH and a DELETE is retried)', async () => {
      for (const call of [(c: SearchGateway) => c.credits(), (c: SearchGateway) => c.keys.disable('key_x'), (c: SearchGateway) => c.keys.delete('key_x')]) {
        server.script(apiError(500, 'internal'), json(200, { ok: true }));
        await expect(call(client())).resolves.toEqual({ ok: true });
        expect(server.seen).toHaveLength(2);
      }
    });
  });

  describe('how long it waits', () => {
    it('backoff is 300 ms then 600 ms, plus up to 20 % jitter', async () => {
      server.script(apiError(500, 'internal'));
      await gatewayError(client({}, 0.5).search(SEARCH));
      expect(sleeps).toEqual([330, 660]);
      sleeps = [];
      await gatewayError(client({}, 0.999999).search(SEARCH));
      expect(sleeps).toEqual([360, 720]);
    });

    it('with the default random source each wait is within [base, base × 1.2]', async () => {
      server.script(apiError(500, 'internal'));
      const recorded: number[] = [];
      for (let i = 0; i < 20; i += 1) {
        sleeps = [];
        await gatewayError(new SearchGateway({ baseUrl: server.url, apiKey: 'svc-x', sleep: async (ms) => { sleeps.push(ms); } }).models());
        recorded.push(...sleeps);
        expect(sleeps[0]).toBeGreaterThanOrEqual(300);
        expect(sleeps[0]).toBeLessThanOrEqual(360);
        expect(sleeps[1]).toBeGreaterThanOrEqual(600);
        expect(sleeps[1]).toBeLessThanOrEqual(720);
      }
      expect(new Set(recorded).size).toBeGreaterThan(2);
    });

    it('Retry-After is waited at least, when it is longer than the backoff', async () => {
      server.script(apiError(429, 'rate_limited', {}, { 'retry-after': '2' }), apiError(429, 'rate_limited', {}, { 'retry-after': '0' }), json(200, OK_SEARCH));
      await client({}, 0.5).search(SEARCH);
      expect(sleeps).toEqual([2000, 660]);
    });

    it('Retry-After of 10 s is waited', async () => {
      server.script(apiError(503, 'overloaded', {}, { 'retry-after': '10' }), json(200, { ok: true }));
      await client().models();
      expect(sleeps).toEqual([10_000]);
    });

    it('Retry-After above 10 s is waited for 10 s, then the request is retried (not thrown at once)', async () => {
      server.script(apiError(429, 'rate_limited', {}, { 'retry-after': '11' }), json(200, OK_SEARCH));
      await expect(client().search(SEARCH)).resolves.toBeDefined();
      expect(server.seen).toHaveLength(2);
      expect(sleeps).toEqual([10_000]);
    });

    it('Retry-After above 10 s on every answer: each wait is 10 s, and the last answer is thrown after the retry count, carrying retryAfter', async () => {
      server.script(apiError(429, 'rate_limited', {}, { 'retry-after': '3600' }));
      const error = await gatewayError(client().search(SEARCH));
      expect(server.seen).toHaveLength(3);
      expect(sleeps).toEqual([10_000, 10_000]);
      expect(error.retryAfter).toBe(3600);
      expect(error.status).toBe(429);
    });

    it('Retry-After above 10 s with retries off: thrown after the one attempt, carrying retryAfter', async () => {
      server.script(apiError(503, 'overloaded', {}, { 'retry-after': '60' }));
      const error = await gatewayError(client({ maxRetries: 0 }).models());
      expect(server.seen).toHaveLength(1);
      expect(sleeps).toEqual([]);
      expect(error.retryAfter).toBe(60);
    });

    it('Retry-After as an HTTP date counts from now', async () => {
      const inThree = new Date(Date.now() + 3_000).toUTCString();
      server.script(apiError(503, 'overloaded', {}, { 'retry-after': inThree }), json(200, { ok: true }));
      await client().models();
      expect(sleeps).toHaveLength(1);
      expect(sleeps[0]).toBeGreaterThanOrEqual(2_000);
      expect(sleeps[0]).toBeLessThanOrEqual(3_000);
    });

    it('with the real clock, the second request comes at least Retry-After (1 s) after the first answer', async () => {
      server.script(apiError(429, 'rate_limited', {}, { 'retry-after': '1' }), json(200, OK_SEARCH));
      await new SearchGateway({ baseUrl: server.url, apiKey: 'svc-x' }).search(SEARCH);
      expect(server.seen).toHaveLength(2);
      const [first, second] = server.seen;
      expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(1_000);
    });
  });

  describe('Idempotency-Key', () => {
    it('every attempt of one search carries the same generated key, a UUID', async () => {
      server.script(apiError(500, 'internal'), reset, json(200, OK_SEARCH));
      await client().search(SEARCH);
      const keys = server.seen.map((r) => r.headers['idempotency-key']);
      expect(keys).toHaveLength(3);
      expect(new Set(keys).size).toBe(1);
      expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    });

    it('the caller\'s key is sent on every attempt; two searches get two different generated keys', async () => {
      server.script(apiError(503, 'overloaded'), json(200, OK_SEARCH));
      await client().search(SEARCH, { idempotencyKey: 'my-key-1' });
      expect(server.seen.map((r) => r.headers['idempotency-key'])).toEqual(['my-key-1', 'my-key-1']);
      server.script(json(200, OK_SEARCH));
      await client().search(SEARCH);
      await client().search(SEARCH);
      const [a, b] = server.seen.map((r) => r.headers['idempotency-key']);
      expect(a).not.toBe(b);
    });

    it('only searches carry one', async () => {
      server.script(json(200, { ok: true }));
      await client().credits();
      await client().keys.create({ name: 'x' });
      expect(server.seen.map((r) => r.headers['idempotency-key'])).toEqual([undefined, undefined]);
    });
  });

  describe('connection failures before any response', () => {
    it('a reset is retried (search and GET), with the backoff', async () => {
      server.script(reset, reset, json(200, OK_SEARCH));
      await expect(client().search(SEARCH)).resolves.toEqual(OK_SEARCH);
      expect(server.seen).toHaveLength(3);
      expect(sleeps).toEqual([300, 600]);
      server.script(reset, json(200, { data: [] }));
      await expect(client().models()).resolves.toEqual({ data: [] });
      expect(server.seen).toHaveLength(2);
    });

    it('resets on every attempt end in SearchGatewayConnectionError after 3 attempts', async () => {
      server.script(reset);
      const error = await failure(client().credits());
      expect(error).toBeInstanceOf(SearchGatewayConnectionError);
      expect(error).not.toBeInstanceOf(SearchGatewayError);
      expect(server.seen).toHaveLength(3);
    });

    it('a POST without Idempotency-Key (create key, checkout) is not repeated after a reset: the server may have acted', async () => {
      server.script(reset, json(201, { id: 'key_x' }));
      expect(await failure(client().keys.create({ name: 'x' }))).toBeInstanceOf(SearchGatewayConnectionError);
      expect(server.seen).toHaveLength(1);
      server.script(reset, json(201, { id: 'chk_x' }));
      expect(await failure(client().checkout({ amount_usd: 25 }))).toBeInstanceOf(SearchGatewayConnectionError);
      expect(server.seen).toHaveLength(1);
    });

    it('but a status answer on such a POST follows the status rules (503 retried)', async () => {
      server.script(apiError(503, 'overloaded'), json(201, { id: 'key_x' }));
      await expect(client().keys.create({})).resolves.toEqual({ id: 'key_x' });
      expect(server.seen).toHaveLength(2);
    });

    it('a refused connection (nothing listening) is a SearchGatewayConnectionError', async () => {
      const gone = await ScriptedServer.start();
      const url = gone.url;
      await gone.close();
      const error = await failure(new SearchGateway({ baseUrl: url, sleep: async (ms) => { sleeps.push(ms); } }).models());
      expect(error).toBeInstanceOf(SearchGatewayConnectionError);
      expect((error as Error).message).toContain(url);
      expect(sleeps).toHaveLength(2);
    });
  });

  describe('timeouts and aborts', () => {
    it('no answer within timeoutMs: each attempt times out, retried, then SearchGatewayTimeoutError', async () => {
      server.script(hang);
      const error = await failure(client({ timeoutMs: 100 }).search(SEARCH));
      expect(error).toBeInstanceOf(SearchGatewayTimeoutError);
      expect(error).toBeInstanceOf(SearchGatewayConnectionError);
      expect((error as SearchGatewayTimeoutError).timeoutMs).toBe(100);
      expect(server.seen).toHaveLength(3);
      expect(new Set(server.seen.map((r) => r.headers['idempotency-key'])).size).toBe(1);
    });

    it('a body that stops half way times out too; then the next attempt is answered', async () => {
      server.script(stall, json(200, OK_SEARCH));
      await expect(client({ timeoutMs: 100 }).search(SEARCH)).resolves.toEqual(OK_SEARCH);
      expect(server.seen).toHaveLength(2);
    });

    it('a per-call timeout overrides the client\'s', async () => {
      server.script(hang);
      const error = await failure(client({ timeoutMs: 60_000 }).models({ timeoutMs: 50, maxRetries: 0 }));
      expect((error as SearchGatewayTimeoutError).timeoutMs).toBe(50);
    });

    it('the caller\'s abort during a request rejects with the abort reason and is not retried', async () => {
      server.script(hang);
      const controller = new AbortController();
      const pending = failure(client().search(SEARCH, { signal: controller.signal }));
      await waitUntil(() => server.seen.length === 1);
      const reason = new Error('the caller gave up');
      controller.abort(reason);
      expect(await pending).toBe(reason);
      expect(server.seen).toHaveLength(1);
    });

    it('the caller\'s abort during the wait before a retry stops at once', async () => {
      server.script(apiError(503, 'overloaded'));
      const controller = new AbortController();
      let waiting: (() => void) | undefined;
      const gateway = new SearchGateway({
        baseUrl: server.url,
        sleep: (_ms, signal) => new Promise<void>((_resolve, reject) => {
          signal?.addEventListener('abort', () => reject(signal.reason));
          waiting?.();
        }),
      });
      const started = new Promise<void>((resolve) => { waiting = resolve; });
      const pending = failure(gateway.models({ signal: controller.signal }));
      await started;
      controller.abort();
      const error = await pending;
      expect((error as Error).name).toBe('AbortError');
      expect(server.seen).toHaveLength(1);
    });

    it('an already aborted signal sends nothing', async () => {
      server.script(json(200, {}));
      const error = await failure(client().models({ signal: AbortSignal.abort() }));
      expect((error as Error).name).toBe('AbortError');
      expect(server.seen).toHaveLength(0);
    });

    it('with the real clock, an abort after a retryable answer ends the call without a second request', async () => {
      server.script(apiError(503, 'overloaded'));
      const controller = new AbortController();
      const pending = failure(new SearchGateway({ baseUrl: server.url }).models({ signal: controller.signal }));
      await waitUntil(() => server.seen.length === 1);
      controller.abort();
      expect((await pending as Error).name).toBe('AbortError');
      expect(server.seen).toHaveLength(1);
    });
  });

  describe('the error every non-2xx becomes', () => {
    it('a JSON error body: status, code, message, requestId, retryAfter and the parsed body', async () => {
      server.script(apiError(429, 'rate_limited', {}, { 'retry-after': '1' }));
      const error = await gatewayError(client({ maxRetries: 0 }).search(SEARCH));
      expect(error.status).toBe(429);
      expect(error.code).toBe('rate_limited');
      expect(error.message).toBe('the server says rate_limited');
      expect(error.requestId).toMatch(/^req_/);
      expect(error.retryAfter).toBe(1);
      expect(error.body).toEqual({ error: { code: 'rate_limited', message: 'the server says rate_limited', request_id: error.requestId } });
      expect(error.error?.code).toBe('rate_limited');
      expect(error.neededUsd).toBeNull();
      expect(error.attempts).toBeNull();
      expect(SearchGatewayError.is(error)).toBe(true);
    });

    it('402 carries needed_usd, typed', async () => {
      server.script(apiError(402, 'key_limit_exceeded', { needed_usd: 0.009 }));
      const error = await gatewayError(client().search(SEARCH));
      expect(error.neededUsd).toBe(0.009);
      const detail = error.error;
      if (detail?.code !== 'key_limit_exceeded' && detail?.code !== 'insufficient_credits') throw new Error('not a 402 error');
      expect(detail.needed_usd).toBe(0.009);
    });

    it('502 all_providers_failed carries attempts, typed, and is not retried', async () => {
      const attempts = [
        { model: 'exa/fast', source: 'platform', status: 'error', error: 'provider returned 500' },
        { model: 'brave/web', status: 'skipped', error: 'provider not configured' },
      ];
      server.script(apiError(502, 'all_providers_failed', { attempts }));
      const error = await gatewayError(client().search(SEARCH));
      expect(server.seen).toHaveLength(1);
      expect(error.attempts).toEqual(attempts);
      const detail = error.error;
      if (detail?.code !== 'all_providers_failed') throw new Error('not all_providers_failed');
      expect(detail.attempts[0]?.model).toBe('exa/fast');
    });

    it.each([
      [404, 'Not Found'],
      [405, 'Method Not Allowed'],
      [400, 'Bad Request: malformed query string'],
    ])('a non-JSON %i (from outside the handlers): code null, body the text, not retried', async (status, body) => {
      server.script(text(status, body, { 'x-svc-request-id': 'req_fromtheedge000000000000' }));
      const error = await gatewayError(client().keys.list());
      expect(server.seen).toHaveLength(1);
      expect(error.status).toBe(status);
      expect(error.code).toBeNull();
      expect(error.error).toBeNull();
      expect(error.body).toBe(body);
      expect(error.message).toBe(`HTTP ${status}: ${body}`);
      expect(error.requestId).toBe('req_fromtheedge000000000000');
      expect(error.retryAfter).toBeNull();
    });

    it('an HTML 502 from a proxy is not retried; an HTML 503 is, then thrown with the text', async () => {
      server.script(text(502, '<html>Bad Gateway</html>', { 'content-type': 'text/html' }));
      expect((await gatewayError(client().models())).code).toBeNull();
      expect(server.seen).toHaveLength(1);
      server.script(text(503, '<html>Service Unavailable</html>', { 'content-type': 'text/html' }));
      const error = await gatewayError(client().models());
      expect(server.seen).toHaveLength(3);
      expect(error.body).toBe('<html>Service Unavailable</html>');
      expect(error.requestId).toBeNull();
    });

    it('an empty error body: code null, body ""', async () => {
      server.script((_req, res) => { res.writeHead(404); res.end(); });
      const error = await gatewayError(client().models());
      expect(error.code).toBeNull();
      expect(error.body).toBe('');
      expect(error.message).toBe('HTTP 404');
    });

    it('JSON that is not an error body, or a code this SDK does not know, is kept', async () => {
      server.script(json(400, { detail: 'nope' }));
      const plain = await gatewayError(client().models());
      expect(plain.code).toBeNull();
      expect(plain.body).toEqual({ detail: 'nope' });
      server.script(apiError(409, 'a_future_code'));
      const future = await gatewayError(client().models());
      expect(future.code).toBe('a_future_code');
      expect(future.error).toBeNull();
    });

    it('a 2xx whose body is not JSON is a SearchGatewayError too', async () => {
      server.script(text(200, 'hello'));
      const error = await gatewayError(client().models());
      expect(error.status).toBe(200);
      expect(error.body).toBe('hello');
    });
  });
});

/** Polls a condition of the scripted server (no fixed sleep). */
async function waitUntil(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1000; i += 1) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('condition not met');
}
