import { harness, model, searchCall, searchContext, SETTINGS, FakeProviders } from '../../../test/search-steps.fakes';
import type { AttemptResult } from '../search.outcome';
import { chargeOf, filterGate, gateAttempt, keptOnTimeout, nextAttempt, planAttempts, runningBoundMs } from './plan';
import type { PlannedAttempt } from './search-steps';

const exaFast = model('exa/fast');
const braveWeb = model('brave/web');

const planned = (source: 'byok' | 'platform', apiKey: string | null = 'k', m = exaFast, index = 0): PlannedAttempt =>
  ({ index, model: m, source, apiKey, priceMicros: 9_000 });

describe('plan', () => {
  describe('planAttempts', () => {
    it('platform key only: one platform attempt per model, at the model\'s price for max_results', () => {
      const { steps } = harness();
      const plan = planAttempts(steps, searchCall({ models: ['exa/auto', 'brave/web'], maxResults: 20 }).request, {});
      expect(plan.map((p) => [p.index, p.model.id, p.source, p.apiKey, p.priceMicros])).toEqual([
        [0, 'exa/auto', 'platform', 'pk-exa', 9_000 + 10 * 1_250],
        [1, 'brave/web', 'platform', 'pk-brave', 6_000],
      ]);
    });

    it('the account\'s own key first (its BYOK fee as the price), then the platform\'s', () => {
      const { steps } = harness();
      const plan = planAttempts(steps, searchCall({ models: ['exa/fast'] }).request, { exa: 'own-exa' });
      expect(plan.map((p) => [p.index, p.source, p.apiKey, p.priceMicros])).toEqual([[0, 'byok', 'own-exa', 450], [1, 'platform', 'pk-exa', 9_000]]);
    });

    it('an own key without a platform key: the BYOK attempt alone', () => {
      const { steps } = harness(SETTINGS, new FakeProviders({}));
      expect(planAttempts(steps, searchCall().request, { exa: 'own' }).map((p) => p.source)).toEqual(['byok']);
    });

    it('neither key: one platform attempt without a key (shown as not configured)', () => {
      const { steps } = harness(SETTINGS, new FakeProviders({}));
      expect(planAttempts(steps, searchCall().request, {})).toEqual([{ index: 0, model: exaFast, source: 'platform', apiKey: null, priceMicros: 9_000 }]);
    });
  });

  describe('prices', () => {
    it('charges an answer its results (the BYOK fee of it for byok), keeps the base price on a timeout', () => {
      const auto = { ...planned('platform', 'k', model('exa/auto')), priceMicros: 21_500 };
      expect(chargeOf(auto, 12, SETTINGS)).toBe(9_000 + 2 * 1_250);
      expect(chargeOf({ ...auto, source: 'byok' }, 12, SETTINGS)).toBe(Math.floor((11_500 * 5 + 50) / 100));
      expect(keptOnTimeout(auto, SETTINGS)).toBe(9_000);
      expect(keptOnTimeout({ ...auto, source: 'byok', priceMicros: 1_075 }, SETTINGS)).toBe(450);
    });

    it('never keeps more than the attempt reserved', () => {
      expect(keptOnTimeout({ ...planned('platform'), priceMicros: 100 }, SETTINGS)).toBe(100);
    });

    it('a repeat waits longer than every attempt can run', () => {
      expect(runningBoundMs(SETTINGS, 3)).toBe(3 * 1_500 + 30_000);
    });
  });

  describe('gateAttempt', () => {
    const byokBlocked: AttemptResult = { status: 'skipped', model: exaFast, source: 'byok', reason: 'limit', priceMicros: 450 };
    const byokTimedOut: AttemptResult = { status: 'error', model: exaFast, source: 'byok', kind: 'timeout', error: 'x', reservedMicros: 450, chargedMicros: 450 };
    const byokFailed: AttemptResult = { status: 'error', model: exaFast, source: 'byok', kind: 'server_error', error: 'x', reservedMicros: 450, chargedMicros: 0 };

    describe('run', () => {
      it('a configured attempt with time left', () => {
        expect(gateAttempt(planned('platform'), undefined, 1)).toBe('run');
      });

      it('the platform attempt after a BYOK attempt that failed outright, or after another model\'s', () => {
        expect(gateAttempt(planned('platform'), byokFailed, 100)).toBe('run');
        expect(gateAttempt(planned('platform', 'k', braveWeb), byokBlocked, 100)).toBe('run');
      });
    });

    describe('after_byok', () => {
      it('the platform attempt after its model\'s BYOK attempt was blocked or timed out', () => {
        expect(gateAttempt(planned('platform'), byokBlocked, 100)).toBe('after_byok');
        expect(gateAttempt(planned('platform'), byokTimedOut, 100)).toBe('after_byok');
      });

      it('comes before the deadline (it is not shown)', () => {
        expect(gateAttempt(planned('platform'), byokBlocked, 0)).toBe('after_byok');
      });

      it('never for a BYOK attempt, nor after a BYOK attempt skipped for the deadline (no source)', () => {
        expect(gateAttempt(planned('byok'), byokBlocked, 100)).toBe('run');
        expect(gateAttempt(planned('platform'), { status: 'skipped', model: exaFast, source: null, reason: 'deadline', priceMicros: 450 }, 100)).toBe('run');
      });
    });

    describe('deadline', () => {
      it('less than a millisecond left', () => {
        expect(gateAttempt(planned('platform'), undefined, 0.9)).toBe('deadline');
        expect(gateAttempt(planned('platform', null), undefined, -5)).toBe('deadline');
      });
    });

    describe('not_configured', () => {
      it('no key for the provider', () => {
        expect(gateAttempt(planned('platform', null), undefined, 100)).toBe('not_configured');
      });
    });
  });

  describe('nextAttempt', () => {
    it('the first attempt: its lease and reservation, the claim, and the provider timeout', () => {
      const { steps } = harness();
      const ctx = searchContext(steps, searchCall({ idempotency: { keyDigest: 'kd', bodyDigest: 'bd' } }));
      const attempts: AttemptResult[] = [];
      const request = nextAttempt(steps, ctx, attempts, 0, ctx.claim);
      expect(request).toEqual({
        planned: ctx.plan[0], provider: 'exa', leaseId: 'req_unit:0', cap: 20, lifetimeMs: 1_500, index: 0, amountMicros: 9_000,
        claim: ctx.claim, apiKey: 'pk-exa', timeoutMs: 1_000,
      });
      expect(attempts).toEqual([]);
    });

    it('cuts the timeout to what is left of SEARCH_MAX_DURATION_MS', () => {
      const { steps } = harness({ ...SETTINGS, maxDurationMs: 400 });
      const ctx = searchContext(steps, searchCall({ elapsedMs: 150.7 }));
      expect(nextAttempt(steps, ctx, [], 0, undefined)?.timeoutMs).toBe(249);
    });

    it('records the attempts passed over (not configured) and returns the next one that runs', () => {
      const { steps } = harness(SETTINGS, new FakeProviders({ exa: 'pk-exa' }));
      const ctx = searchContext(steps, searchCall({ models: ['brave/web', 'exa/fast'] }));
      const attempts: AttemptResult[] = [];
      const request = nextAttempt(steps, ctx, attempts, 0, undefined);
      expect(request?.index).toBe(1);
      expect(request?.leaseId).toBe('req_unit:1');
      expect(attempts).toEqual([{ status: 'skipped', model: braveWeb, source: null, reason: 'not_configured', priceMicros: 6_000 }]);
    });

    it('null when none is left: every attempt past the deadline is recorded', () => {
      const { steps } = harness({ ...SETTINGS, maxDurationMs: 100 });
      const ctx = searchContext(steps, searchCall({ models: ['brave/web', 'exa/fast'], elapsedMs: 100 }));
      const attempts: AttemptResult[] = [];
      expect(nextAttempt(steps, ctx, attempts, 0, undefined)).toBeNull();
      expect(attempts.map((a) => a.status === 'skipped' && a.reason)).toEqual(['deadline', 'deadline']);
    });

    it('passes over the platform attempt after a blocked BYOK attempt without recording it', () => {
      const { steps } = harness();
      const ctx = searchContext(steps, searchCall({ models: ['exa/fast', 'brave/web'] }), { exa: 'own' });
      const attempts: AttemptResult[] = [{ status: 'skipped', model: exaFast, source: 'byok', reason: 'balance', priceMicros: 250 }];
      const request = nextAttempt(steps, ctx, attempts, 1, undefined);
      expect(request?.planned.model.id).toBe('brave/web');
      expect(request?.index).toBe(2);
      expect(attempts).toHaveLength(1);
    });
  });

  describe('filterGate', () => {
    it('null without filters, and for a model that honours every filter sent', () => {
      expect(filterGate(planned('platform'), undefined)).toBeNull();
      expect(filterGate(planned('platform'), { include_domains: ['a.example'], country: 'US' })).toBeNull();
    });

    it('the filters the model cannot honour, in canonical order', () => {
      expect(filterGate(planned('platform', 'k', braveWeb), { safesearch: 'strict', exclude_domains: ['a.example'], include_domains: ['b.example'] }))
        .toEqual(['include_domains', 'exclude_domains']);
      expect(filterGate(planned('platform'), { language: 'de', safesearch: 'off' })).toEqual(['language', 'safesearch']);
    });

    it('skips a model that cannot honour a filter (one skip for its BYOK and platform attempts) and admits the next', () => {
      const { steps } = harness();
      const base = searchCall({ models: ['brave/web', 'exa/fast'] });
      const call = { ...base, request: { ...base.request, filters: { include_domains: ['a.example'] } } };
      const ctx = searchContext(steps, call, { brave: 'own-brave' });
      expect(ctx.plan.map((p) => [p.model.id, p.source])).toEqual([['brave/web', 'byok'], ['brave/web', 'platform'], ['exa/fast', 'platform']]);
      const attempts: AttemptResult[] = [];
      const request = nextAttempt(steps, ctx, attempts, 0, undefined);
      expect(request?.planned.model.id).toBe('exa/fast');
      expect(attempts).toEqual([{ status: 'skipped', model: braveWeb, source: null, reason: 'unsupported_filter', priceMicros: 300, filters: ['include_domains'] }]);
    });
  });
});
