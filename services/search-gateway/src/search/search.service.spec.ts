import { admittedOk, capturingLogger, failure, FakeMoney, FakeProviders, messages, model, RECORD, SETTINGS, success } from '../../test/search-steps.fakes';
import type { CallOptions } from '../../test/search-steps.fakes';
import { RELEASE_CLAIM, UNLEASE_ACCOUNT } from '../money/money.ops';
import type { ProviderOutcome } from '../providers';
import { outcomeValue } from './idempotency';
import { SearchService } from './search.service';
import type { SearchCall, SearchReply, SearchResult } from './search.result';
import type { SearchSettings } from './steps/search-steps';

function service(settings: SearchSettings = SETTINGS, providers = new FakeProviders(), ownKeys: Record<string, string> | null = null) {
  const money = new FakeMoney();
  const { log, lines } = capturingLogger();
  const failures: string[] = [];
  const keys = ownKeys === null ? null : { keysFor: () => ownKeys };
  const search = new SearchService(providers, money, settings, { countFailure: (provider, kind) => failures.push(`${provider}:${kind}`) }, log, keys);
  return { search, money, providers, lines, failures };
}

function call(options: CallOptions = {}): SearchCall {
  return {
    record: options.record ?? RECORD,
    requestId: options.requestId ?? 'req_s',
    request: { query: 'q', models: (options.models ?? ['exa/fast']).map(model), maxResults: options.maxResults ?? 10, cache: 'default', cacheMaxAgeS: null, contents: 'none', maxCharsPerResult: 5_000, maxTotalChars: null },
    idempotency: options.idempotency ?? null,
    elapsedMs: () => options.elapsedMs ?? 3,
  };
}

function reply(result: SearchResult): SearchReply {
  if (result.kind !== 'reply') throw new Error(`refused: ${result.reason}`);
  return result;
}

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const unlease = (provider: string, leaseId: string) => ({ kind: 'unlease', provider, leaseId });
const idempotency = { keyDigest: 'kd', bodyDigest: 'bd' };

describe('SearchService (the steps chained, on fakes of the money port and the providers)', () => {
  describe('answered', () => {
    it('the common path: one awaited admission, one provider call, one settlement carrying the provider lease and the account lease', async () => {
      const { search, money } = service();
      const result = reply(await search.search(call()));
      expect(result).toMatchObject({ kind: 'reply', status: 200, requestId: 'req_s', rateLimit: { limit: 5, remaining: 9 } });
      expect(money.calls).toEqual([
        { method: 'admitFirst', ops: [], lease: expect.objectContaining({ provider: 'exa', leaseId: 'req_s:0', cap: 20, lifetimeMs: 1_500 }), reserve: expect.objectContaining({ index: 0, amountMicros: 9_000, claim: undefined }) },
        { method: 'settle', ops: [unlease('exa', 'req_s:0')], settlement: { record: expect.objectContaining({ chargedMicros: 9_000 }), outcome: null, releaseAccountLease: true } },
      ]);
    });

    it('after a failed attempt: its reservation and lease go back with the next admission, which extends the account lease', async () => {
      const { search, money, failures } = service(SETTINGS, new FakeProviders().answer('exa', failure('server_error')));
      const result = reply(await search.search(call({ models: ['exa/auto', 'brave/web'] })));
      expect(JSON.parse(result.body)).toMatchObject({ model: 'brave/web', attempts: [{ model: 'exa/auto', status: 'error' }] });
      expect(money.methods).toEqual(['admitFirst', 'admit', 'settle']);
      expect(money.calls[1]).toMatchObject({ ops: [{ kind: 'release', index: 0, keepMicros: 0 }, unlease('exa', 'req_s:0')], extendLeaseMs: 60_000, lease: { leaseId: 'req_s:1' } });
      expect(money.calls[2]).toMatchObject({ ops: [unlease('brave', 'req_s:1')], settlement: { releaseAccountLease: true } });
      expect(failures).toEqual(['exa:server_error']);
    });

    it('a BYOK attempt that timed out passes over its model\'s platform attempt', async () => {
      const { search, money } = service(SETTINGS, new FakeProviders().answer('exa', failure('timeout', null)), { exa: 'own' });
      const result = reply(await search.search(call({ models: ['exa/fast', 'brave/web'] })));
      expect(JSON.parse(result.body).attempts).toEqual([{ model: 'exa/fast', source: 'byok', status: 'error', error: 'provider timeout', cost_usd: 0.00045 }]);
      // Plan: byok exa (0), platform exa (1, passed over), platform brave (2).
      expect(money.calls[1]).toMatchObject({ method: 'admit', lease: { leaseId: 'req_s:2', provider: 'brave' } });
    });

    it('a BYOK attempt that failed outright is followed by the platform\'s', async () => {
      const { search, money, providers } = service(SETTINGS, new FakeProviders().answer('exa', failure('bad_key', 401)), { exa: 'own' });
      expect(reply(await search.search(call())).status).toBe(200);
      expect(providers.requests.map((r) => r.apiKey)).toEqual(['own', 'pk-exa']);
      expect(money.calls[1]).toMatchObject({ method: 'admit', lease: { leaseId: 'req_s:1' } });
    });
  });

  describe('answered without a provider call', () => {
    it('402 when money blocked every model: the leases and the account lease go back in the last round trip', async () => {
      const { search, money } = service();
      money.admitFirstAnswers.push({ leased: true, admission: { kind: 'admitted', remaining: 1, verdict: { kind: 'balance' } } });
      money.admitAnswers.push({ leased: true, verdict: { kind: 'limit' } });
      const result = reply(await search.search(call({ models: ['exa/fast', 'brave/web'] })));
      expect(result).toMatchObject({ status: 402, rateLimit: { remaining: 1 } });
      expect(JSON.parse(result.body).error.code).toBe('key_limit_exceeded');
      expect(money.calls.map((c) => [c.method, 'ops' in c ? c.ops : null])).toEqual([
        ['admitFirst', []],
        ['admit', [unlease('exa', 'req_s:0')]],
        ['finish', [unlease('brave', 'req_s:1'), UNLEASE_ACCOUNT]],
      ]);
    });

    it('503 at capacity under an Idempotency-Key: the claim goes back, nothing is kept', async () => {
      const { search, money } = service();
      money.admitFirstAnswers.push(admittedOk(4, false));
      const result = reply(await search.search(call({ idempotency })));
      expect(result.status).toBe(503);
      expect(money.calls[1]).toEqual({ method: 'finish', ops: [{ kind: 'release', index: 0, keepMicros: 0 }, UNLEASE_ACCOUNT, RELEASE_CLAIM], outcome: null });
    });

    it('no attempt admitted (no provider configured): no lease to give back, the 502 is kept', async () => {
      const { search, money } = service(SETTINGS, new FakeProviders({}));
      const result = reply(await search.search(call({ idempotency })));
      expect(result).toMatchObject({ status: 502, rateLimit: undefined });
      expect(money.calls).toEqual([{ method: 'finish', ops: [], outcome: outcomeValue('req_s', 'bd', 502, result.body) }]);
    });
  });

  describe('refused', () => {
    it('saturated: nothing is sent to Redis', async () => {
      const { search, money } = service();
      money.saturated = true;
      expect(await search.search(call())).toMatchObject({ kind: 'refused', reason: 'saturated', code: 'overloaded', retryAfterSeconds: 1, requestId: 'req_s' });
      expect(money.calls).toEqual([]);
    });

    it('rate limited: nothing to give back', async () => {
      const { search, money } = service();
      money.admitFirstAnswers.push({ leased: false, admission: { kind: 'rate_limited', retryAfterMs: 2_500 } });
      expect(await search.search(call())).toMatchObject({ kind: 'refused', code: 'rate_limited', retryAfterSeconds: 3 });
      expect(money.methods).toEqual(['admitFirst']);
    });

    it('unavailable at the first admission: the account lease (which may be held) is given back', async () => {
      const { search, money, lines } = service();
      money.admitFirstAnswers.push(new Error('down'));
      money.releaseAnswers.push(new Error('still down'));
      expect(await search.search(call())).toMatchObject({ kind: 'refused', reason: 'unavailable', code: 'overloaded' });
      expect(money.methods).toEqual(['admitFirst', 'releaseAccount']);
      expect(messages(lines)).toEqual(['redis admission failed', 'account lease release failed; it expires on its own']);
    });

    it('unavailable at a later admission before any call: the account lease is given back', async () => {
      const { search, money } = service();
      money.admitFirstAnswers.push(admittedOk(4, false));
      money.admitAnswers.push(new Error('down'));
      expect(await search.search(call({ models: ['exa/fast', 'brave/web'] }))).toMatchObject({ kind: 'refused', reason: 'unavailable' });
      expect(money.methods).toEqual(['admitFirst', 'admit', 'releaseAccount']);
    });

    it('settlement failed: answered 500 (data), then the account lease is given back alone', async () => {
      const { search, money, lines } = service();
      money.settleAnswers.push(new Error('not connected'));
      expect(await search.search(call())).toMatchObject({ kind: 'refused', reason: 'settlement_failed', code: 'internal', message: 'internal error', retryAfterSeconds: undefined });
      expect(money.methods).toEqual(['admitFirst', 'settle', 'releaseAccount']);
      expect(messages(lines)).toEqual(['settlement failed; the reservation is released by reconciliation']);
    });
  });

  describe('duplicate', () => {
    it('the Idempotency-Key is another request\'s: its provider lease back, then its outcome with this search\'s rate state', async () => {
      const { search, money } = service();
      money.admitFirstAnswers.push({ leased: true, admission: { kind: 'admitted', remaining: 6, verdict: { kind: 'dup', stored: outcomeValue('req_first', 'bd', 200, '{"ok":1}') } } });
      expect(await search.search(call({ idempotency }))).toEqual({ kind: 'reply', status: 200, body: '{"ok":1}', requestId: 'req_first', rateLimit: { limit: 5, remaining: 6 }, attempts: undefined });
      expect(money.calls[1]).toEqual({ method: 'finish', ops: [unlease('exa', 'req_s:0')], outcome: null });
    });

    it('another request stored its outcome first (found at the last round trip): answered as its repeat', async () => {
      const { search, money } = service();
      money.admitFirstAnswers.push(admittedOk(4, false));
      money.finishAnswers.push({ foreignOutcome: outcomeValue('req_other', 'bd', 402, '{}') });
      expect(await search.search(call({ idempotency }))).toMatchObject({ kind: 'reply', status: 402, requestId: 'req_other', rateLimit: { remaining: 4 }, attempts: undefined });
    });
  });

  describe('fault', () => {
    it('Redis failing after a provider call: the account lease is given back and the error thrown on', async () => {
      const { search, money } = service(SETTINGS, new FakeProviders().answer('exa', failure('server_error')));
      const error = new Error('connection reset');
      money.admitAnswers.push(error);
      await expect(search.search(call({ models: ['exa/fast', 'brave/web'] }))).rejects.toBe(error);
      expect(money.methods).toEqual(['admitFirst', 'admit', 'releaseAccount']);
    });

    it('the last round trip failing before any admission gives nothing back', async () => {
      const { search, money } = service(SETTINGS, new FakeProviders({}));
      money.finishAnswers.push(new Error('gone'));
      await expect(search.search(call({ idempotency }))).rejects.toThrow('gone');
      expect(money.methods).toEqual(['finish']);
    });
  });

  describe('idempotent copies in this process', () => {
    it('a copy waits for the first and gets its very answer, without a round trip of its own', async () => {
      const held = deferred<ProviderOutcome>();
      const { search, money } = service(SETTINGS, new FakeProviders().answer('exa', held.promise));
      const first = search.search(call({ idempotency }));
      await new Promise((resolve) => setImmediate(resolve));
      const copy = search.search(call({ idempotency, requestId: 'req_copy' }));
      held.resolve(success(3));
      const [a, b] = await Promise.all([first, copy]);
      expect(b).toBe(a);
      expect(reply(b).requestId).toBe('req_s');
      expect(money.methods).toEqual(['admitFirst', 'settle']);
      // Once the first answered, the same key runs again.
      await search.search(call({ idempotency, requestId: 'req_later' }));
      expect(money.methods).toEqual(['admitFirst', 'settle', 'admitFirst', 'settle']);
    });

    it('a copy of a refused first gets the same refusal, under the first\'s request id', async () => {
      const held = deferred<{ leased: boolean; admission: never }>();
      const { search, money } = service();
      money.admitFirstAnswers.push(held.promise as never);
      const first = search.search(call({ idempotency }));
      const copy = search.search(call({ idempotency, requestId: 'req_copy' }));
      held.resolve({ leased: false, admission: { kind: 'too_many' } as never });
      expect(await copy).toMatchObject({ kind: 'refused', code: 'too_many_concurrent_requests', requestId: 'req_s' });
      expect(await copy).toBe(await first);
    });

    it('a copy with another body is refused at once, under its own request id', async () => {
      const held = deferred<ProviderOutcome>();
      const { search, money } = service(SETTINGS, new FakeProviders().answer('exa', held.promise));
      const first = search.search(call({ idempotency }));
      expect(await search.search(call({ idempotency: { keyDigest: 'kd', bodyDigest: 'other' }, requestId: 'req_copy' }))).toMatchObject({
        kind: 'refused', reason: 'body_mismatch', code: 'invalid_request', requestId: 'req_copy',
      });
      held.resolve(success(1));
      await first;
      expect(money.methods).toEqual(['admitFirst', 'settle']);
    });
  });
});
