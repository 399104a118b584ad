import { admittedOk, harness, messages, searchCall, searchContext, SETTINGS } from '../../../test/search-steps.fakes';
import type { Harness } from '../../../test/search-steps.fakes';
import type { MoneyOp } from '../../money/money.ops';
import type { AttemptResult } from '../search.outcome';
import type { Answering, SearchContext } from './search-steps';
import { admitFirst, admitNext, providerCalled, releaseAccountLease, reservationOf } from './admit';
import { nextAttempt } from './plan';
import type { ProviderCall } from './attempt';

function setup(settings = SETTINGS, idempotent = false): Harness & { ctx: SearchContext; request: ProviderCall; ops: MoneyOp[] } {
  const h = harness(settings);
  const ctx = searchContext(h.steps, searchCall({ models: ['exa/fast', 'brave/web'], idempotency: idempotent ? { keyDigest: 'kd', bodyDigest: 'bd' } : null }));
  const request = nextAttempt(h.steps, ctx, [], 0, ctx.claim);
  if (request === null) throw new Error('no attempt');
  return { ...h, ctx, request, ops: [] };
}

const unlease = (leaseId = 'req_unit:0', provider = 'exa'): MoneyOp => ({ kind: 'unlease', provider: provider as 'exa', leaseId });
const called: AttemptResult = { status: 'error', model: { id: 'exa/fast' } as AttemptResult['model'], source: 'platform', kind: 'server_error', error: 'x', reservedMicros: 9_000, chargedMicros: 0 };

describe('admit', () => {
  describe('admitFirst', () => {
    describe('reserved', () => {
      it('one round trip with no leftover ops: the attempt is both lease and reserve request, the claim rides along', async () => {
        const { steps, money, ctx, request, ops } = setup(SETTINGS, true);
        money.admitFirstAnswers.push(admittedOk(7));
        expect(await admitFirst(steps, ctx, ops, request)).toEqual({ kind: 'reserved', rateLimit: { limit: 5, remaining: 7 }, leased: true, reservedMicros: 9_000 });
        expect(money.calls).toEqual([{ method: 'admitFirst', ops: [], lease: request, reserve: request }]);
        expect(request.claim).toEqual(ctx.claim);
        expect(ops).toEqual([]);
      });
    });

    describe('blocked: limit or balance', () => {
      it('gives the provider lease back with the next round trip', async () => {
        const { steps, money, ctx, request, ops } = setup();
        money.admitFirstAnswers.push({ leased: true, admission: { kind: 'admitted', remaining: 3, verdict: { kind: 'limit' } } });
        expect(await admitFirst(steps, ctx, ops, request)).toEqual({ kind: 'blocked', reason: 'limit', rateLimit: { limit: 5, remaining: 3 } });
        expect(ops).toEqual([unlease()]);
      });

      it('queues nothing when the provider lease was not taken', async () => {
        const { steps, money, ctx, request, ops } = setup();
        money.admitFirstAnswers.push({ leased: false, admission: { kind: 'admitted', remaining: 3, verdict: { kind: 'balance' } } });
        expect(await admitFirst(steps, ctx, ops, request)).toMatchObject({ kind: 'blocked', reason: 'balance' });
        expect(ops).toEqual([]);
      });
    });

    describe('blocked: capacity', () => {
      it('reserved without a provider lease: the reservation goes back with the next round trip', async () => {
        const { steps, money, ctx, request, ops } = setup();
        money.admitFirstAnswers.push(admittedOk(2, false));
        expect(await admitFirst(steps, ctx, ops, request)).toEqual({ kind: 'blocked', reason: 'capacity', rateLimit: { limit: 5, remaining: 2 } });
        expect(ops).toEqual([{ kind: 'release', index: 0, keepMicros: 0 }]);
      });
    });

    describe('duplicate', () => {
      it('another request owns the Idempotency-Key: its stored value, the provider lease queued back', async () => {
        const { steps, money, ctx, request, ops } = setup(SETTINGS, true);
        money.admitFirstAnswers.push({ leased: true, admission: { kind: 'admitted', remaining: 4, verdict: { kind: 'dup', stored: 'FIRST' } } });
        expect(await admitFirst(steps, ctx, ops, request)).toEqual({ kind: 'duplicate', stored: 'FIRST', rateLimit: { limit: 5, remaining: 4 } });
        expect(ops).toEqual([unlease()]);
      });
    });

    describe('refused: rate limited', () => {
      it('429 with the wait in whole seconds (at least 1), the provider lease given back at once', async () => {
        const { steps, money, ctx, request, ops } = setup();
        money.admitFirstAnswers.push({ leased: true, admission: { kind: 'rate_limited', retryAfterMs: 1_200 } });
        expect(await admitFirst(steps, ctx, ops, request)).toEqual({
          kind: 'refused',
          refusal: {
            kind: 'refused', reason: 'rate_limited', code: 'rate_limited', retryAfterSeconds: 2, requestId: 'req_unit',
            message: 'this API key is limited to 5 requests per second (bursts up to 10); retry after the Retry-After delay',
          },
        });
        expect(money.calls.slice(1)).toEqual([{ method: 'finish', ops: [unlease()], outcome: null }]);
        expect(ops).toEqual([]);
      });

      it('a wait under a second is 1 s; no lease to give back, no round trip', async () => {
        const { steps, money, ctx, request, ops } = setup();
        money.admitFirstAnswers.push({ leased: false, admission: { kind: 'rate_limited', retryAfterMs: 3 } });
        const admission = await admitFirst(steps, ctx, ops, request);
        expect(admission.kind === 'refused' && admission.refusal.retryAfterSeconds).toBe(1);
        expect(money.methods).toEqual(['admitFirst']);
      });

      it('a provider lease that cannot be given back is logged, and the refusal stands', async () => {
        const { steps, money, lines, ctx, request, ops } = setup();
        money.admitFirstAnswers.push({ leased: true, admission: { kind: 'rate_limited', retryAfterMs: 10 } });
        money.finishAnswers.push(new Error('redis down'));
        expect(await admitFirst(steps, ctx, ops, request)).toMatchObject({ kind: 'refused', refusal: { code: 'rate_limited' } });
        expect(lines).toEqual([expect.objectContaining({ level: 40, msg: 'provider lease release failed; it expires on its own', provider: 'exa', err: 'Error: redis down' })]);
      });
    });

    describe('refused: too many concurrent requests', () => {
      it('429 too_many_concurrent_requests with the account cap, Retry-After 1', async () => {
        const { steps, money, ctx, request, ops } = setup();
        money.admitFirstAnswers.push({ leased: false, admission: { kind: 'too_many' } });
        expect(await admitFirst(steps, ctx, ops, request)).toMatchObject({
          kind: 'refused',
          refusal: { reason: 'too_many', code: 'too_many_concurrent_requests', message: 'the account already has 3 searches in flight; retry shortly', retryAfterSeconds: 1 },
        });
      });
    });

    describe('refused: cold', () => {
      it('asks for hydration, and is refused (503, 1 s) when the balance is not back within the wait', async () => {
        const { steps, money, lines, ctx, request, ops } = setup({ ...SETTINGS, hydrationWaitMs: 250 });
        money.admitFirstAnswers.push({ leased: false, admission: { kind: 'cold' } });
        expect(await admitFirst(steps, ctx, ops, request)).toMatchObject({
          kind: 'refused', refusal: { reason: 'cold', code: 'overloaded', message: 'this account\'s balance is being restored; retry shortly', retryAfterSeconds: 1 },
        });
        expect(money.methods.filter((m) => m === 'isWarm').length).toBeGreaterThanOrEqual(1);
        expect(money.methods.filter((m) => m !== 'isWarm')).toEqual(['admitFirst', 'requestHydration']);
        expect(lines).toEqual([]);
      });

      it('admitted once more when the balance is back', async () => {
        const { steps, money, ctx, request, ops } = setup();
        money.admitFirstAnswers.push({ leased: true, admission: { kind: 'cold' } }, admittedOk(6));
        money.warmAnswers.push(true);
        expect(await admitFirst(steps, ctx, ops, request)).toEqual({ kind: 'reserved', rateLimit: { limit: 5, remaining: 6 }, leased: true, reservedMicros: 9_000 });
        expect(money.methods).toEqual(['admitFirst', 'finish', 'requestHydration', 'isWarm', 'admitFirst']);
      });

      it('once only: still cold after the wait is refused, having asked for hydration twice', async () => {
        const { steps, money, lines, ctx, request, ops } = setup();
        money.admitFirstAnswers.push({ leased: false, admission: { kind: 'cold' } }, { leased: false, admission: { kind: 'cold' } });
        money.warmAnswers.push(true);
        money.hydrationAnswers.push(new Error('nope'));
        expect(await admitFirst(steps, ctx, ops, request)).toMatchObject({ kind: 'refused', refusal: { reason: 'cold' } });
        expect(money.methods).toEqual(['admitFirst', 'requestHydration', 'isWarm', 'admitFirst', 'requestHydration']);
        expect(messages(lines)).toEqual(['hydration request failed']);
      });

      it('the second admission failing is unavailable', async () => {
        const { steps, money, lines, ctx, request, ops } = setup();
        money.admitFirstAnswers.push({ leased: false, admission: { kind: 'cold' } }, new Error('gone'));
        money.warmAnswers.push(true);
        expect(await admitFirst(steps, ctx, ops, request)).toEqual({ kind: 'unavailable' });
        expect(messages(lines)).toEqual(['redis admission failed']);
      });
    });

    describe('unavailable', () => {
      it('Redis failing is logged and answered as data (the caller gives the account lease back)', async () => {
        const { steps, money, lines, ctx, request, ops } = setup();
        money.admitFirstAnswers.push(new Error('connection refused'));
        expect(await admitFirst(steps, ctx, ops, request)).toEqual({ kind: 'unavailable' });
        expect(lines).toEqual([expect.objectContaining({ level: 50, msg: 'redis admission failed', request_id: 'req_unit', err: 'Error: connection refused' })]);
      });
    });
  });

  describe('an attempt answered without its provider (a stored answer found by the lookup sent beside the admission)', () => {
    /** The cache's Answering for a stored answer found in Redis: admitted as a miss (the model's price, a provider lease), then ready as `answers` with the cache price as the cheaper reservation. */
    const storedAnswer = (request: ProviderCall): Answering => ({
      request, reserve: request, lease: request, cheaper: { index: request.index, amountMicros: 900 },
      ready: () => Promise.resolve('answers'), answer: () => Promise.reject(new Error('not answered here')), close: () => undefined,
    });

    it('reserved: keeps the larger reservation (the settlement gives back the rest); the provider lease it does not need is queued back', async () => {
      const { steps, money, ctx, request, ops } = setup();
      money.admitFirstAnswers.push(admittedOk(4));
      expect(await admitFirst(steps, ctx, ops, storedAnswer(request))).toEqual({ kind: 'reserved', rateLimit: { limit: 5, remaining: 4 }, leased: false, reservedMicros: 9_000 });
      expect(ops).toEqual([unlease()]);
      expect(money.methods).toEqual(['admitFirst']);
    });

    it('the provider at capacity does not block it: reserved as it is, nothing queued, no second round trip', async () => {
      const { steps, money, ctx, request, ops } = setup();
      money.admitFirstAnswers.push(admittedOk(4, false));
      expect(await admitFirst(steps, ctx, ops, storedAnswer(request))).toEqual({ kind: 'reserved', rateLimit: { limit: 5, remaining: 4 }, leased: false, reservedMicros: 9_000 });
      expect(ops).toEqual([]);
      expect(money.methods).toEqual(['admitFirst']);
    });

    it('blocked at the model\'s price (limit or balance): admitted once more at the cache price, without a provider lease or the claim', async () => {
      const { steps, money, ctx, request, ops } = setup(SETTINGS, true);
      money.admitFirstAnswers.push({ leased: true, admission: { kind: 'admitted', remaining: 4, verdict: { kind: 'balance' } } });
      const answering = storedAnswer(request);
      expect(await admitFirst(steps, ctx, ops, answering)).toEqual({ kind: 'reserved', rateLimit: { limit: 5, remaining: 4 }, leased: false, reservedMicros: 900 });
      expect(money.calls[1]).toEqual({ method: 'admit', ops: [unlease()], lease: null, reserve: { index: 0, amountMicros: 900 }, extendLeaseMs: SETTINGS.admission.leaseTtlMs });
      expect(ops).toEqual([]);
    });

    it('blocked again at the cache price: the attempt is skipped like any blocked attempt', async () => {
      const { steps, money, ctx, request, ops } = setup();
      money.admitFirstAnswers.push({ leased: false, admission: { kind: 'admitted', remaining: 1, verdict: { kind: 'limit' } } });
      money.admitAnswers.push({ leased: true, verdict: { kind: 'balance' } });
      expect(await admitFirst(steps, ctx, ops, storedAnswer(request))).toEqual({ kind: 'blocked', reason: 'balance', rateLimit: { limit: 5, remaining: 1 } });
    });

    it('refused or duplicate: stands as it is, nothing more sent', async () => {
      const { steps, money, ctx, request, ops } = setup(SETTINGS, true);
      money.admitFirstAnswers.push({ leased: false, admission: { kind: 'admitted', remaining: 6, verdict: { kind: 'dup', stored: 'x' } } });
      expect(await admitFirst(steps, ctx, ops, storedAnswer(request))).toEqual({ kind: 'duplicate', stored: 'x', rateLimit: { limit: 5, remaining: 6 } });
      money.admitFirstAnswers.push({ leased: false, admission: { kind: 'too_many' } });
      expect(await admitFirst(steps, ctx, ops, storedAnswer(request))).toMatchObject({ kind: 'refused', refusal: { code: 'too_many_concurrent_requests' } });
      expect(money.methods).toEqual(['admitFirst', 'admitFirst']);
    });

    it('a later attempt too: a follower reserved at the model\'s price gives back its lease, a provider call asked for none takes its own before calling', async () => {
      const { steps, ctx, request, ops } = setup();
      const follower: Answering = { ...storedAnswer(request), cheaper: null, ready: () => 'answers' };
      expect(await admitNext(steps, ctx, ops, [], follower)).toEqual({ kind: 'reserved', rateLimit: undefined, leased: false, reservedMicros: 9_000 });
      expect(ops).toEqual([unlease()]);
      const unleased: Answering = { ...follower, lease: null, ready: () => 'calls' };
      expect(await admitNext(steps, ctx, [], [], unleased)).toEqual({ kind: 'reserved', rateLimit: undefined, leased: false, reservedMicros: 9_000 });
    });
  });

  describe('admitNext', () => {
    function later(): ReturnType<typeof setup> {
      const s = setup();
      const request = nextAttempt(s.steps, s.ctx, [], 1, undefined);
      if (request === null) throw new Error('no second attempt');
      return { ...s, request };
    }

    describe('reserved', () => {
      it('sends the leftover ops (the list is emptied), extends the account lease, takes lease and reservation without a claim', async () => {
        const { steps, money, ctx, request } = later();
        const ops: MoneyOp[] = [{ kind: 'release', index: 0, keepMicros: 0 }, unlease()];
        expect(await admitNext(steps, ctx, ops, [called], request)).toEqual({ kind: 'reserved', rateLimit: undefined, leased: true, reservedMicros: 6_000 });
        expect(money.calls).toEqual([{ method: 'admit', ops: [{ kind: 'release', index: 0, keepMicros: 0 }, unlease()], lease: request, reserve: request, extendLeaseMs: 60_000 }]);
        expect(request.claim).toBeUndefined();
        expect(ops).toEqual([]);
      });
    });

    describe('blocked', () => {
      it.each([
        ['limit', { leased: true, verdict: { kind: 'limit' } }, [unlease('req_unit:1', 'brave')]],
        ['balance', { leased: false, verdict: { kind: 'balance' } }, []],
        ['capacity', { leased: true, verdict: { kind: 'cold' } }, [unlease('req_unit:1', 'brave')]],
        ['capacity', { leased: false, verdict: { kind: 'ok' } }, [{ kind: 'release', index: 1, keepMicros: 0 }]],
      ] as const)('%s (%j) queues %j', async (reason, answer, queued) => {
        const { steps, money, ctx, request } = later();
        money.admitAnswers.push(answer);
        const ops: MoneyOp[] = [];
        expect(await admitNext(steps, ctx, ops, [], request)).toEqual({ kind: 'blocked', reason, rateLimit: undefined });
        expect(ops).toEqual(queued);
      });
    });

    describe('unavailable', () => {
      it('before any provider call: logged, answered as data', async () => {
        const { steps, money, lines, ctx, request } = later();
        money.admitAnswers.push(new Error('timeout'));
        expect(await admitNext(steps, ctx, [], [{ status: 'skipped', model: request.planned.model, source: 'platform', reason: 'capacity', priceMicros: 1 }], request)).toEqual({ kind: 'unavailable' });
        expect(messages(lines)).toEqual(['redis admission failed']);
      });
    });

    describe('fault', () => {
      it('Redis failing after a provider call is thrown as is', async () => {
        const { steps, money, lines, ctx, request } = later();
        const error = new Error('connection reset');
        money.admitAnswers.push(error);
        await expect(admitNext(steps, ctx, [], [called], request)).rejects.toBe(error);
        expect(lines).toEqual([]);
      });

      it('a dup without a claim is a bug', async () => {
        const { steps, money, ctx, request } = later();
        money.admitAnswers.push({ leased: false, verdict: { kind: 'dup', stored: 'x' } });
        await expect(admitNext(steps, ctx, [], [], request)).rejects.toThrow('a reservation without a claim answered dup');
      });
    });
  });

  describe('reservationOf', () => {
    it('reserved only with the reservation and the provider lease; nothing queued', () => {
      const { request } = setup();
      const ops: MoneyOp[] = [];
      expect(reservationOf(ops, { kind: 'ok' }, true, request)).toBe('reserved');
      expect(ops).toEqual([]);
    });

    it('a duplicate or a cold account took nothing but perhaps the provider lease', () => {
      const { request } = setup();
      const ops: MoneyOp[] = [];
      expect(reservationOf(ops, { kind: 'dup', stored: 's' }, false, request)).toBe('duplicate');
      expect(reservationOf(ops, { kind: 'cold' }, true, request)).toBe('capacity');
      expect(ops).toEqual([unlease()]);
    });
  });

  describe('releaseAccountLease', () => {
    it('gives the lease back alone; a failure is logged (it expires on its own)', async () => {
      const { steps, money, lines, ctx } = setup();
      await releaseAccountLease(steps, ctx);
      money.releaseAnswers.push(new Error('down'));
      await releaseAccountLease(steps, ctx);
      expect(money.methods).toEqual(['releaseAccount', 'releaseAccount']);
      expect(lines).toEqual([expect.objectContaining({ level: 50, msg: 'account lease release failed; it expires on its own', account_id: 'acc_unit', err: 'Error: down' })]);
    });
  });

  describe('providerCalled', () => {
    it('true once an attempt answered or failed; skipped ones call nothing', () => {
      expect(providerCalled([])).toBe(false);
      expect(providerCalled([{ status: 'skipped', model: called.model, source: null, reason: 'deadline', priceMicros: 1 }])).toBe(false);
      expect(providerCalled([called])).toBe(true);
    });
  });
});
