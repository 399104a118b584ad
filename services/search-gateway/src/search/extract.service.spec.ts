import { byokFeeMicros, extractCostMicros, findExtractModel } from '@svc/contracts';
import type { ExtractModelSpec } from '@svc/contracts';
import pino from 'pino';
import { FakeMoney, FakeProviders, RECORD, SETTINGS, pagesOf } from '../../test/search-steps.fakes';
import type { MoneyCall } from '../../test/search-steps.fakes';
import type { ExtractRequest } from './extract.schema';
import type { SearchCall } from './search.result';
import { SearchService } from './search.service';

/**
 * An extract on the attempt seam, against fakes of the money port and the providers
 * (test/search-steps.fakes.ts): fallback per URL, what each attempt reserves and is charged,
 * and the settlement record (kind extract). The end-to-end suite (test/e2e/extract.e2e.spec.ts)
 * runs the same through the real Redis, the ledger worker and the simulator.
 */
function model(id: string): ExtractModelSpec {
  const found = findExtractModel(id);
  if (found === undefined) throw new Error(`no extract model ${id}`);
  return found;
}

const EXA = model('exa/contents');
const TAVILY = model('tavily/extract');
const URLS = ['https://a.test/1', 'https://a.test/2', 'https://a.test/3'];

function extractCall(request: Partial<ExtractRequest> = {}): SearchCall<ExtractRequest> {
  return {
    record: RECORD,
    requestId: 'req_extract',
    request: {
      kind: 'extract', urls: URLS, models: [EXA, TAVILY], format: 'text', maxCharsPerUrl: 20_000, query: null, maxAgeS: null,
      maxTotalChars: null, cache: 'default', cacheMaxAgeS: null, ...request,
    },
    idempotency: null,
    elapsedMs: () => 5,
  };
}

function service(providers: FakeProviders, money = new FakeMoney()): { search: SearchService; money: FakeMoney } {
  return { search: new SearchService(providers, money, SETTINGS, { countFailure: () => undefined }, pino({ level: 'silent' })), money };
}

/** The reservation of each admission, in order. */
const reserved = (calls: readonly MoneyCall[]): number[] =>
  calls.flatMap((call) => (call.method === 'admitFirst' || call.method === 'admit' ? [call.reserve.amountMicros] : []));

function settleCall(money: FakeMoney): Extract<MoneyCall, { method: 'settle' }> {
  const found = money.calls.find((call): call is Extract<MoneyCall, { method: 'settle' }> => call.method === 'settle');
  if (found === undefined) throw new Error('no settlement');
  return found;
}

const settlement = (money: FakeMoney): Extract<MoneyCall, { method: 'settle' }>['settlement'] => settleCall(money).settlement;

describe('SearchService.extract', () => {
  describe('fallback per URL', () => {
    it('sends the next model only the URLs the first could not fetch, each reserving for its own URLs, charged the pages that came back', async () => {
      const providers = new FakeProviders().answerExtract('exa', pagesOf(URLS[1] ?? '', URLS[2] ?? '')).answerExtract('tavily', pagesOf(URLS[2] ?? ''));
      const { search, money } = service(providers);
      const result = await search.extract(extractCall());
      expect(result.kind === 'reply' && result.status).toBe(200);
      expect(providers.extractRequests.map((r) => [r.provider, r.urls])).toEqual([['exa', URLS], ['tavily', [URLS[1], URLS[2]]]]);
      expect(reserved(money.calls)).toEqual([extractCostMicros(EXA, 3), extractCostMicros(TAVILY, 2)]);
      const record = settlement(money).record;
      expect(record.kind).toBe('extract');
      expect(record.attempts.map((a) => [a.model, a.status, a.results, a.reservedMicros, a.chargedMicros])).toEqual([
        ['exa/contents', 'success', 1, 3_750, 1_250],
        ['tavily/extract', 'success', 1, 10_000, 10_000],
      ]);
      expect(record.chargedMicros).toBe(11_250);
      if (result.kind !== 'reply') throw new Error('refused');
      const body = JSON.parse(result.body) as { results: { url: string; model: string }[]; failed: { url: string; error: string }[]; cost_usd: number };
      expect(body.results.map((r) => [r.url, r.model])).toEqual([[URLS[0], 'exa/contents'], [URLS[1], 'tavily/extract']]);
      expect(body.failed).toEqual([{ url: URLS[2], error: 'page not found (404)' }]);
      expect(body.cost_usd).toBe(0.01125);
    });

    it('stops at the first model that fetched every URL: the next is never admitted', async () => {
      const providers = new FakeProviders();
      const { search, money } = service(providers);
      await search.extract(extractCall());
      expect(providers.extractRequests.map((r) => r.provider)).toEqual(['exa']);
      expect(money.methods.filter((m) => m === 'admitFirst' || m === 'admit')).toEqual(['admitFirst']);
      expect(settlement(money).record.chargedMicros).toBe(extractCostMicros(EXA, 3));
    });

    it('a call that fails outright (a 5xx) is refunded in full and the next model gets every URL', async () => {
      const providers = new FakeProviders().answerExtract('exa', () => ({ ok: false, kind: 'server_error', error: 'provider returned 500', status: 500 }));
      const { search, money } = service(providers);
      await search.extract(extractCall());
      expect(providers.extractRequests.map((r) => [r.provider, r.urls.length])).toEqual([['exa', 3], ['tavily', 3]]);
      const admit = money.calls.find((call) => call.method === 'admit');
      expect(admit?.ops).toEqual(expect.arrayContaining([{ kind: 'release', index: 0, keepMicros: 0 }]));
      expect(settlement(money).record.attempts.map((a) => [a.status, a.chargedMicros])).toEqual([['error', 0], ['success', extractCostMicros(TAVILY, 3)]]);
    });

    it('a provider timeout keeps nothing (a failed URL is never charged)', async () => {
      const providers = new FakeProviders().answerExtract('exa', () => ({ ok: false, kind: 'timeout', error: 'provider did not answer within 1000 ms', status: null }));
      const { search, money } = service(providers);
      await search.extract(extractCall({ models: [EXA] }));
      expect(settleCall(money).ops).toEqual(expect.arrayContaining([{ kind: 'release', index: 0, keepMicros: 0 }]));
      expect(settlement(money).record.chargedMicros).toBe(0);
    });

    it('no URL fetched by any model: 502 all_providers_failed, every reservation released, nothing charged', async () => {
      const providers = new FakeProviders().answerExtract('exa', pagesOf(...URLS)).answerExtract('tavily', pagesOf(...URLS));
      const { search, money } = service(providers);
      const result = await search.extract(extractCall());
      if (result.kind !== 'reply') throw new Error('refused');
      expect(result.status).toBe(502);
      expect(JSON.parse(result.body).error).toEqual(expect.objectContaining({
        code: 'all_providers_failed',
        attempts: [
          { model: 'exa/contents', source: 'platform', status: 'error', error: '3 of 3 URLs could not be fetched' },
          { model: 'tavily/extract', source: 'platform', status: 'error', error: '3 of 3 URLs could not be fetched' },
        ],
      }));
      expect(settlement(money).record.chargedMicros).toBe(0);
    });
  });

  describe('money', () => {
    it('charges whole blocks of the model\'s url_block: 6 URLs at Tavily are two blocks', async () => {
      const urls = Array.from({ length: 6 }, (_, i) => `https://b.test/${i}`);
      const { search, money } = service(new FakeProviders());
      await search.extract(extractCall({ urls, models: [TAVILY] }));
      expect(settlement(money).record.chargedMicros).toBe(2 * 5 * 2_000);
    });

    it('the account\'s own key: the BYOK fee of the block price; its platform attempt is not run after it answered in part', async () => {
      const providers = new FakeProviders().answerExtract('exa', pagesOf(URLS[2] ?? ''));
      const money = new FakeMoney();
      const search = new SearchService(providers, money, SETTINGS, { countFailure: () => undefined }, pino({ level: 'silent' }), { keysFor: () => ({ exa: 'own-exa' }) });
      await search.extract(extractCall());
      expect(providers.extractRequests.map((r) => [r.provider, r.apiKey, r.urls.length])).toEqual([['exa', 'own-exa', 3], ['tavily', 'pk-tavily', 1]]);
      const record = settlement(money).record;
      expect(record.attempts.map((a) => [a.model, a.source, a.chargedMicros])).toEqual([
        ['exa/contents', 'byok', byokFeeMicros(extractCostMicros(EXA, 2), 5)],
        ['tavily/extract', 'platform', extractCostMicros(TAVILY, 1)],
      ]);
    });

    it('402 when money blocks every model: needed_usd is the smallest reservation of the URLs still missing', async () => {
      const money = new FakeMoney();
      money.admitFirstAnswers.push({ leased: true, admission: { kind: 'admitted', remaining: 9, verdict: { kind: 'balance' } } });
      money.admitAnswers.push({ leased: true, verdict: { kind: 'balance' } });
      const { search } = service(new FakeProviders(), money);
      const result = await search.extract(extractCall());
      if (result.kind !== 'reply') throw new Error('refused');
      expect(result.status).toBe(402);
      expect(JSON.parse(result.body).error).toEqual(expect.objectContaining({ code: 'insufficient_credits', needed_usd: extractCostMicros(EXA, 3) / 1e6 }));
    });
  });

  describe('options a model cannot honour', () => {
    it('skips the model (never called with the option dropped) and goes on; all skipped is 400 unsupported_option with nothing admitted', async () => {
      const providers = new FakeProviders();
      const { search, money } = service(providers);
      const skipped = await search.extract(extractCall({ models: [TAVILY, EXA], maxAgeS: 0 }));
      if (skipped.kind !== 'reply') throw new Error('refused');
      expect(JSON.parse(skipped.body).attempts[0]).toEqual({ model: 'tavily/extract', status: 'skipped', urls: 0, succeeded: 0, failed: 0, cost_usd: 0, error: 'unsupported option: max_age_s' });
      expect(providers.extractRequests.map((r) => [r.provider, r.maxAgeS])).toEqual([['exa', 0]]);
      const { search: again, money: none } = service(new FakeProviders());
      const refused = await again.extract(extractCall({ models: [EXA], format: 'markdown' }));
      if (refused.kind !== 'reply') throw new Error('refused');
      expect(refused.status).toBe(400);
      expect(JSON.parse(refused.body).error.code).toBe('unsupported_option');
      expect(none.methods.filter((m) => m === 'admitFirst' || m === 'admit' || m === 'settle')).toEqual([]);
      expect(money.methods).toContain('settle');
    });
  });

  describe('max_total_chars', () => {
    it('keeps the first pages whole, cuts the one that crosses the budget, drops the rest, and says truncated', async () => {
      const { search } = service(new FakeProviders());
      const result = await search.extract(extractCall({ models: [EXA], maxTotalChars: 200 }));
      if (result.kind !== 'reply') throw new Error('refused');
      const body = JSON.parse(result.body) as { results: { url: string; title: string; chars: number; truncated: boolean }[]; truncated: boolean; cost_usd: number };
      const title = `title of ${URLS[0]}`.length;
      expect(body.results.map((r) => [r.url, r.chars, r.truncated])).toEqual([[URLS[0], 100, false], [URLS[1], 200 - 2 * title - 100, true]]);
      expect(body.truncated).toBe(true);
      expect(body.cost_usd).toBe(extractCostMicros(EXA, 3) / 1e6);
    });
  });
});
