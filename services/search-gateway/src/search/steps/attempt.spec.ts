import { failure, FakeProviders, harness, messages, model, searchCall, searchContext, SETTINGS, success } from '../../../test/search-steps.fakes';
import type { MoneyOp } from '../../money/money.ops';
import { attempt } from './attempt';
import { nextAttempt } from './plan';
import type { ProviderCall } from './attempt';

function setup(modelId = 'exa/auto', own: Record<string, string> = {}, providers = new FakeProviders()) {
  const h = harness(SETTINGS, providers);
  const ctx = searchContext(h.steps, searchCall({ models: [modelId], maxResults: 20 }), own);
  const request = nextAttempt(h.steps, ctx, [], 0, undefined) as ProviderCall;
  return { ...h, ctx, request, ops: [] as MoneyOp[] };
}

describe('attempt', () => {
  describe('success', () => {
    it('is charged for the results it returned, and queues its provider lease back', async () => {
      const { steps, ctx, request, ops, providers, failures } = setup();
      providers.answer('exa', success(12));
      const result = await attempt(steps, ctx, ops, request);
      expect(result).toMatchObject({ status: 'success', model: model('exa/auto'), source: 'platform', reservedMicros: 21_500, chargedMicros: 9_000 + 2 * 1_250 });
      expect(result.status === 'success' && result.results).toHaveLength(12);
      expect(ops).toEqual([{ kind: 'unlease', provider: 'exa', leaseId: 'req_unit:0' }]);
      expect(failures).toEqual([]);
    });

    it('calls the provider with the query, max_results, the attempt\'s key, its timeout and the contents asked for', async () => {
      const { steps, ctx, request, ops, providers } = setup('exa/auto', { exa: 'own-key' });
      await attempt(steps, ctx, ops, request);
      expect(providers.requests).toEqual([{ provider: 'exa', query: 'unit', model: model('exa/auto'), maxResults: 20, apiKey: 'own-key', timeoutMs: 1_000, contents: 'none', maxCharsPerResult: 5_000 }]);
    });
  });

  describe('error: timeout', () => {
    it('keeps the model\'s base price, gives the rest of the reservation and the lease back, counts the failure', async () => {
      const { steps, ctx, request, ops, providers, failures } = setup();
      providers.answer('exa', failure('timeout', null));
      expect(await attempt(steps, ctx, ops, request)).toEqual({ status: 'error', model: model('exa/auto'), source: 'platform', kind: 'timeout', error: 'provider timeout', reservedMicros: 21_500, chargedMicros: 9_000 });
      expect(ops).toEqual([{ kind: 'release', index: 0, keepMicros: 9_000 }, { kind: 'unlease', provider: 'exa', leaseId: 'req_unit:0' }]);
      expect(failures).toEqual(['exa:timeout']);
    });

    it('a BYOK attempt keeps the BYOK fee of the base price', async () => {
      const { steps, ctx, request, ops, providers } = setup('exa/auto', { exa: 'own' });
      providers.answer('exa', failure('timeout', null));
      expect(await attempt(steps, ctx, ops, request)).toMatchObject({ source: 'byok', reservedMicros: 1_075, chargedMicros: 450 });
    });
  });

  describe('error: cut short by the search\'s own time limit (deadline)', () => {
    function cutShort(leftMs: number) {
      const recorded: string[] = [];
      const h = harness({ ...SETTINGS, maxDurationMs: 10_000 }, new FakeProviders().answer('exa', failure('timeout', null)));
      const steps = { ...h.steps, health: { blockedMs: () => -1, skipped: () => undefined, record: (_p: string, _s: string, _m: string, outcome: string) => recorded.push(outcome) } };
      const ctx = searchContext(steps, searchCall({ models: ['exa/auto'], maxResults: 20, elapsedMs: 10_000 - leftMs }));
      const request = nextAttempt(steps, ctx, [], 0, undefined) as ProviderCall;
      return { ...h, steps, ctx, request, recorded, ops: [] as MoneyOp[] };
    }

    it('a call given less than PROVIDER_TIMEOUT_MS that runs out of it is no provider timeout: refunded, no base price, not recorded for the breaker, not counted as a provider failure', async () => {
      const { steps, ctx, request, ops, failures, recorded } = cutShort(300);
      expect(request.timeoutMs).toBe(300);
      expect(await attempt(steps, ctx, ops, request)).toEqual({ status: 'error', model: model('exa/auto'), source: 'platform', kind: 'deadline', error: 'provider timeout', reservedMicros: 21_500, chargedMicros: 0 });
      expect(ops).toEqual([{ kind: 'release', index: 0, keepMicros: 0 }, { kind: 'unlease', provider: 'exa', leaseId: 'req_unit:0' }]);
      expect([failures, recorded]).toEqual([[], []]);
    });

    it('a call given its whole PROVIDER_TIMEOUT_MS is a provider timeout, recorded and kept at the base price', async () => {
      const { steps, ctx, request, ops, failures, recorded } = cutShort(5_000);
      expect(request.timeoutMs).toBe(SETTINGS.providerTimeoutMs);
      expect(await attempt(steps, ctx, ops, request)).toMatchObject({ kind: 'timeout', chargedMicros: 9_000 });
      expect([failures, recorded]).toEqual([['exa:timeout'], ['timeout']]);
    });
  });

  describe('error: failed outright', () => {
    it('keeps nothing', async () => {
      const { steps, ctx, request, ops, providers, lines } = setup();
      providers.answer('exa', failure('server_error'));
      expect(await attempt(steps, ctx, ops, request)).toMatchObject({ status: 'error', kind: 'server_error', chargedMicros: 0 });
      expect(ops[0]).toEqual({ kind: 'release', index: 0, keepMicros: 0 });
      expect(lines).toEqual([]);
    });

    it('a platform key the provider rejects is logged for the operator; an account\'s own is not', async () => {
      const platform = setup();
      platform.providers.answer('exa', failure('bad_key', 401));
      await attempt(platform.steps, platform.ctx, platform.ops, platform.request);
      expect(platform.lines).toEqual([expect.objectContaining({ level: 40, msg: 'the platform key was rejected by the provider: replace it', provider: 'exa', status: 401 })]);
      const own = setup('exa/auto', { exa: 'own' });
      own.providers.answer('exa', failure('bad_key', 401));
      await attempt(own.steps, own.ctx, own.ops, own.request);
      expect(own.lines).toEqual([]);
    });

    it('an adapter that throws is a connection failure, logged', async () => {
      const { steps, ctx, request, ops, providers, lines, failures } = setup();
      providers.answer('exa', new Error('boom'));
      expect(await attempt(steps, ctx, ops, request)).toMatchObject({ status: 'error', kind: 'connection', error: 'provider call failed', chargedMicros: 0 });
      expect(messages(lines)).toEqual(['provider adapter threw']);
      expect(failures).toEqual(['exa:connection']);
    });
  });
});
