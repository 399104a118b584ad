import fc from 'fast-check';
import { costMicros, findModel, maxCostMicros } from '@svc/contracts';
import { capturingLogger, failure, FakeMoney, FakeProviders, model, RECORD, SETTINGS } from '../../test/search-steps.fakes';
import type { ProviderOutcome, ProviderSearchRequest } from '../providers';
import { outcomeValue } from './idempotency';
import { SearchService } from './search.service';
import type { SearchCall, SearchReply, SearchResult } from './search.result';
import type { SearchRequest } from './search.schema';
import type { SearchSettings } from './steps/search-steps';

/**
 * Fan-out (docs/api.md, "Fan-out") and the cost cap (max_cost_usd) on SearchService, on fakes of
 * the money port and the providers: one admission round trip for every model, the answers
 * merged, each model's money on its own, and never a charge above the cap.
 */
function service(settings: SearchSettings = SETTINGS, providers = new FakeProviders()) {
  const money = new FakeMoney();
  const { log } = capturingLogger();
  const search = new SearchService(providers, money, settings, { countFailure: () => undefined }, log);
  return { search, money, providers };
}

interface Asked {
  readonly models: readonly string[];
  readonly strategy?: 'fallback' | 'fanout';
  readonly maxResults?: number;
  readonly maxCostMicros?: number | null;
  readonly fanoutWaitMs?: number | null;
  readonly filters?: SearchRequest['filters'];
  readonly idempotency?: { keyDigest: string; bodyDigest: string };
}

function call(asked: Asked): SearchCall {
  return {
    record: RECORD,
    requestId: 'req_f',
    request: {
      query: 'q', models: asked.models.map(model), maxResults: asked.maxResults ?? 10, cache: 'default', cacheMaxAgeS: null, contents: 'none', maxCharsPerResult: 5_000,
      maxTotalChars: null, strategy: asked.strategy ?? 'fanout', fanoutWaitMs: asked.fanoutWaitMs ?? null, maxCostMicros: asked.maxCostMicros ?? null, filters: asked.filters,
    },
    idempotency: asked.idempotency ?? null,
    elapsedMs: () => 2,
  };
}

function reply(result: SearchResult): SearchReply {
  if (result.kind !== 'reply') throw new Error(`refused: ${result.reason}`);
  return result;
}

/** An answer of `urls` in this order. */
function answer(...urls: string[]): ProviderOutcome {
  return { ok: true, results: urls.map((url, i) => ({ position: i + 1, title: `title of ${url}`, url, snippet: `about ${url}`, published_at: '2024-05-01T00:00:00.000Z', score: null })) };
}

const price = (id: string, results = 10): number => {
  const found = findModel(id);
  if (found === undefined) throw new Error(id);
  return maxCostMicros(found, results);
};
const charge = (id: string, results: number): number => {
  const found = findModel(id);
  if (found === undefined) throw new Error(id);
  return costMicros(found, results);
};

describe('fan-out on SearchService', () => {
  it('admits every model in one round trip (the claim on the first reservation), calls them at once, merges their answers and settles every attempt in one record', async () => {
    const providers = new FakeProviders()
      .answer('exa', answer('https://a.example/1', 'https://shared.example/x', 'https://b.example/2'))
      .answer('brave', answer('https://shared.example/x?utm_source=brave', 'https://c.example/3'))
      .answer('tavily', answer('https://SHARED.example/x/', 'https://a.example/1#top'));
    const { search, money } = service(SETTINGS, providers);
    const result = reply(await search.search(call({ models: ['exa/fast', 'brave/web', 'tavily/basic'], idempotency: { keyDigest: 'kd', bodyDigest: 'bd' } })));
    expect(result.status).toBe(200);
    expect(money.methods).toEqual(['admitFanout', 'settle']);
    const admission = money.calls[0];
    if (admission?.method !== 'admitFanout') throw new Error('no fan-out admission');
    expect(admission.leases.map((lease) => lease?.leaseId)).toEqual(['req_f:0', 'req_f:1', 'req_f:2']);
    expect(admission.reserves.map((r) => [r.index, r.amountMicros, r.claim === undefined ? 'no claim' : 'claim'])).toEqual([
      [0, price('exa/fast'), 'claim'], [1, price('brave/web'), 'no claim'], [2, price('tavily/basic'), 'no claim'],
    ]);
    // The calls were all made (at once: none waited for another).
    expect(providers.requests.map((r) => r.provider)).toEqual(['exa', 'brave', 'tavily']);
    const body = JSON.parse(result.body);
    expect(body.strategy).toBe('fanout');
    expect(body.models).toEqual(['exa/fast', 'brave/web', 'tavily/basic']);
    expect(body.results.map((r: { url: string; sources: unknown }) => [r.url, r.sources])).toEqual([
      ['https://shared.example/x?utm_source=brave', [{ model: 'brave/web', position: 1 }, { model: 'tavily/basic', position: 1 }, { model: 'exa/fast', position: 2 }]],
      ['https://a.example/1', [{ model: 'exa/fast', position: 1 }, { model: 'tavily/basic', position: 2 }]],
      ['https://c.example/3', [{ model: 'brave/web', position: 2 }]],
      ['https://b.example/2', [{ model: 'exa/fast', position: 3 }]],
    ]);
    expect(body.duplicates_removed).toBe(3);
    const charges = [charge('exa/fast', 3), charge('brave/web', 2), charge('tavily/basic', 2)];
    expect(body.attempts.map((a: { model: string; status: string; results: number; cost_usd: number }) => [a.model, a.status, a.results, a.cost_usd])).toEqual([
      ['exa/fast', 'success', 3, charges[0] / 1e6], ['brave/web', 'success', 2, charges[1] / 1e6], ['tavily/basic', 'success', 2, charges[2] / 1e6],
    ]);
    const total = charges.reduce((a, b) => a + b, 0);
    expect(body.cost_usd).toBe(total / 1e6);
    const settlement = money.calls[1];
    if (settlement?.method !== 'settle') throw new Error('no settlement');
    expect(settlement.settlement.record.chargedMicros).toBe(total);
    expect(settlement.settlement.record.attempts.map((a) => [a.model, a.status, a.chargedMicros, a.results])).toEqual([
      ['exa/fast', 'success', charges[0], 3], ['brave/web', 'success', charges[1], 2], ['tavily/basic', 'success', charges[2], 2],
    ]);
    // Every provider lease goes back with the settlement; the account lease inside it.
    expect(settlement.ops).toEqual([
      { kind: 'unlease', provider: 'exa', leaseId: 'req_f:0' }, { kind: 'unlease', provider: 'brave', leaseId: 'req_f:1' }, { kind: 'unlease', provider: 'tavily', leaseId: 'req_f:2' },
    ]);
    expect(settlement.settlement.releaseAccountLease).toBe(true);
    expect(result.fanout).toEqual({ width: 3, merged: 4, duplicates: 3 });
  });

  it('a failing model is refunded and the others merged; a timed-out one keeps its base price', async () => {
    const providers = new FakeProviders().answer('exa', failure('server_error')).answer('brave', answer('https://a.example/')).answer('tavily', failure('timeout', null));
    const { search, money } = service(SETTINGS, providers);
    const body = JSON.parse(reply(await search.search(call({ models: ['exa/fast', 'brave/web', 'tavily/basic'] }))).body);
    expect(body.models).toEqual(['brave/web']);
    const tavilyBase = findModel('tavily/basic')?.baseMicros ?? 0;
    expect(body.attempts).toEqual([
      { model: 'exa/fast', source: 'platform', status: 'error', cost_usd: 0, error: 'provider server_error' },
      { model: 'brave/web', source: 'platform', status: 'success', results: 1, cost_usd: charge('brave/web', 1) / 1e6, cache: { status: 'off', age_s: 0 } },
      { model: 'tavily/basic', source: 'platform', status: 'error', cost_usd: tavilyBase / 1e6, error: 'provider timeout' },
    ]);
    expect(body.cost_usd).toBe((charge('brave/web', 1) + tavilyBase) / 1e6);
    const settlement = money.calls[1];
    if (settlement?.method !== 'settle') throw new Error('no settlement');
    expect(settlement.ops).toEqual(expect.arrayContaining([{ kind: 'release', index: 0, keepMicros: 0 }, { kind: 'release', index: 2, keepMicros: tavilyBase }]));
    expect(settlement.settlement.record.chargedMicros).toBe(charge('brave/web', 1) + tavilyBase);
  });

  it('every model failing is 502 with nothing charged; money blocking a model skips it with its reason', async () => {
    const { search, money } = service(SETTINGS, new FakeProviders().answer('exa', failure('server_error')).answer('brave', failure('server_error')));
    money.admitFanoutAnswers.push({ leased: [true, true, true], admission: { kind: 'admitted', remaining: 3, verdicts: [{ kind: 'ok' }, { kind: 'ok' }, { kind: 'balance' }] } });
    const result = reply(await search.search(call({ models: ['exa/fast', 'brave/web', 'tavily/basic'] })));
    expect(result.status).toBe(502);
    expect(JSON.parse(result.body).error.attempts.map((a: { model: string; error: string }) => [a.model, a.error])).toEqual([
      ['exa/fast', 'provider server_error'], ['brave/web', 'provider server_error'], ['tavily/basic', 'insufficient credits'],
    ]);
    const settlement = money.calls[1];
    if (settlement?.method !== 'settle') throw new Error('no settlement');
    expect(settlement.settlement.record.chargedMicros).toBe(0);
    // The blocked model's lease goes back; nothing was reserved for it.
    expect(settlement.ops).toEqual(expect.arrayContaining([{ kind: 'unlease', provider: 'tavily', leaseId: 'req_f:2' }]));
    expect(settlement.ops).not.toEqual(expect.arrayContaining([{ kind: 'release', index: 2, keepMicros: 0 }]));
  });

  it('a model still running when fanout_wait_ms ends is cancelled: a timeout that keeps its base price, not a provider timeout', async () => {
    const providers = new FakeProviders();
    const slow = (request: ProviderSearchRequest): Promise<ProviderOutcome> => new Promise((resolve) => setTimeout(() => resolve(failure('timeout', null)), request.timeoutMs));
    const adapter = providers.adapter.bind(providers);
    providers.adapter = (provider) => (provider === 'tavily' ? { search: (request: ProviderSearchRequest) => { providers.requests.push({ ...request, provider }); return slow(request); } } : adapter(provider));
    providers.answer('exa', answer('https://a.example/'));
    const { search, money } = service(SETTINGS, providers);
    const body = JSON.parse(reply(await search.search(call({ models: ['exa/fast', 'tavily/basic'], fanoutWaitMs: 150 }))).body);
    const tavilyCall = providers.requests.find((r) => r.provider === 'tavily');
    expect(tavilyCall?.timeoutMs).toBeLessThanOrEqual(150);
    const base = findModel('tavily/basic')?.baseMicros ?? 0;
    expect(body.attempts[1]).toEqual({ model: 'tavily/basic', source: 'platform', status: 'error', cost_usd: base / 1e6, error: expect.stringMatching(/^no answer within fanout_wait_ms \(\d+ ms\): cancelled$/) });
    const settlement = money.calls[1];
    if (settlement?.method !== 'settle') throw new Error('no settlement');
    expect(settlement.settlement.record.attempts[1]).toMatchObject({ status: 'error', timedOut: true, chargedMicros: base });
  });

  it('the cost cap admits the models in the order asked while their reservations fit, and skips the rest with the reason', async () => {
    const { search, money, providers } = service();
    const cap = price('exa/fast') + price('brave/web') - 1;
    const body = JSON.parse(reply(await search.search(call({ models: ['exa/fast', 'brave/web', 'tavily/basic'], maxCostMicros: cap }))).body);
    expect(providers.requests.map((r) => r.provider)).toEqual(['exa']);
    const admission = money.calls[0];
    if (admission?.method !== 'admitFanout') throw new Error('no fan-out admission');
    expect(admission.reserves).toHaveLength(1);
    expect(body.attempts.map((a: { model: string; status: string; error?: string }) => [a.model, a.status, a.error])).toEqual([
      ['exa/fast', 'success', undefined],
      ['brave/web', 'skipped', `over max_cost_usd: needs up to ${price('brave/web') / 1e6} USD, ${(cap - price('exa/fast')) / 1e6} USD of max_cost_usd left`],
      ['tavily/basic', 'skipped', `over max_cost_usd: needs up to ${price('tavily/basic') / 1e6} USD, ${(cap - price('exa/fast')) / 1e6} USD of max_cost_usd left`],
    ]);
  });

  it('a cap below every model\'s price is 402 max_cost_exceeded, with nothing admitted, reserved or charged', async () => {
    const { search, money, providers } = service();
    const result = reply(await search.search(call({ models: ['exa/fast', 'brave/web'], maxCostMicros: price('brave/web') - 1 })));
    expect(result.status).toBe(402);
    const error = JSON.parse(result.body).error;
    expect(error).toMatchObject({ code: 'max_cost_exceeded', needed_usd: price('brave/web') / 1e6 });
    expect(error.attempts.map((a: { model: string; status: string }) => [a.model, a.status])).toEqual([['exa/fast', 'skipped'], ['brave/web', 'skipped']]);
    expect(providers.requests).toEqual([]);
    // No admission: the last step has nothing to send (an empty finish makes no round trip).
    expect(money.calls).toEqual([{ method: 'finish', ops: [], outcome: null }]);
  });

  it('a refused fan-out (rate) gives back every provider lease it took and holds nothing', async () => {
    const { search, money } = service();
    money.admitFanoutAnswers.push({ leased: [true, false], admission: { kind: 'rate_limited', retryAfterMs: 300 } });
    const result = await search.search(call({ models: ['exa/fast', 'brave/web'] }));
    expect(result).toMatchObject({ kind: 'refused', reason: 'rate_limited' });
    expect(money.calls[1]).toEqual({ method: 'finish', ops: [{ kind: 'unlease', provider: 'exa', leaseId: 'req_f:0' }], outcome: null });
  });

  it('a repeat of an Idempotency-Key replays the first outcome and gives back the leases it took', async () => {
    const { search, money } = service();
    const stored = outcomeValue('req_first', 'bd', 200, '{"strategy":"fanout"}');
    money.admitFanoutAnswers.push({ leased: [true, true], admission: { kind: 'admitted', remaining: 4, verdicts: [{ kind: 'dup', stored }] } });
    const result = await search.search(call({ models: ['exa/fast', 'brave/web'], idempotency: { keyDigest: 'kd', bodyDigest: 'bd' } }));
    expect(money.calls[1]).toEqual({ method: 'finish', ops: [{ kind: 'unlease', provider: 'exa', leaseId: 'req_f:0' }, { kind: 'unlease', provider: 'brave', leaseId: 'req_f:1' }], outcome: null });
    expect(result).toMatchObject({ kind: 'reply', status: 200, requestId: 'req_first', body: '{"strategy":"fanout"}' });
  });
});

describe('the cost cap: never a charge above max_cost_usd, whatever fails or times out', () => {
  const MODELS = ['exa/fast', 'exa/deep', 'brave/web', 'brave/news', 'tavily/basic', 'tavily/advanced'];
  const outcome = fc.oneof(
    fc.integer({ min: 0, max: 30 }).map((n): ProviderOutcome => answer(...Array.from({ length: n }, (_, i) => `https://r.example/${i}`))),
    fc.constantFrom(failure('server_error'), failure('timeout', null), failure('rate_limited', 429)),
  );

  it('fallback and fan-out, any models, prices, caps and outcomes: the settlement and the answer stay within the cap', async () => {
    await fc.assert(fc.asyncProperty(
      fc.uniqueArray(fc.constantFrom(...MODELS), { minLength: 2, maxLength: 5 }).filter((ids) => new Set(ids.map((id) => id.split('/')[0])).size === ids.length),
      fc.constantFrom<'fallback' | 'fanout'>('fallback', 'fanout'),
      fc.integer({ min: 1, max: 60 }),
      fc.integer({ min: 1, max: 120_000 }),
      fc.array(outcome, { minLength: 5, maxLength: 5 }),
      async (ids, strategy, maxResults, cap, outcomes) => {
        const providers = new FakeProviders();
        // As the adapters do, a provider's answer holds at most the results asked of it (its reservation's count).
        const asked = (o: ProviderOutcome): ProviderOutcome => (o.ok ? { ok: true, results: o.results.slice(0, maxResults) } : o);
        ids.forEach((id, i) => providers.answer(model(id).provider, asked(outcomes[i] as ProviderOutcome), asked(outcomes[(i + 1) % 5] as ProviderOutcome)));
        const { search, money } = service(SETTINGS, providers);
        const result = reply(await search.search(call({ models: ids, strategy, maxResults, maxCostMicros: cap })));
        const settlement = money.calls.find((c) => c.method === 'settle');
        const charged = settlement?.method === 'settle' ? settlement.settlement.record.chargedMicros : 0;
        expect(charged).toBeLessThanOrEqual(cap);
        // What the request could be charged is within the cap at every admission: the reservations admitted together, or one after another.
        const reserved = money.calls.flatMap((c) => (c.method === 'admitFanout' ? c.reserves.map((r) => r.amountMicros) : c.method === 'admitFirst' || c.method === 'admit' ? [c.reserve.amountMicros] : []));
        if (strategy === 'fanout') expect(reserved.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(cap);
        else for (const amount of reserved) expect(amount).toBeLessThanOrEqual(cap);
        if (result.status === 200) expect(Math.round(JSON.parse(result.body).cost_usd * 1e6)).toBe(charged);
        // Nothing could run under the cap: the cap's own error, and no provider called.
        const cheapest = Math.min(...ids.map((id) => price(id, maxResults)));
        if (cheapest > cap) {
          expect(result.status).toBe(402);
          expect(JSON.parse(result.body).error.code).toBe('max_cost_exceeded');
          expect(providers.requests).toEqual([]);
        }
      },
    ), { numRuns: 150 });
  });
});
