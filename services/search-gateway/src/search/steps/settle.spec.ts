import { canonicalFilters } from '@svc/contracts';
import { harness, messages, model, searchCall, searchContext, success } from '../../../test/search-steps.fakes';
import { outcomeValue } from '../idempotency';
import { RELEASE_CLAIM, UNLEASE_ACCOUNT } from '../../money/money.ops';
import type { MoneyOp } from '../../money/money.ops';
import type { ProviderSuccess } from '../../providers';
import type { AttemptResult } from '../search.outcome';
import { buildReply } from './reply';
import { keptOutcome, settle, settlementRecord } from './settle';

const exaFast = model('exa/fast');
const answered: AttemptResult = { status: 'success', model: exaFast, source: 'platform', results: (success(2) as ProviderSuccess).results, reservedMicros: 9_000, chargedMicros: 9_000 };
const timedOut: AttemptResult = { status: 'error', model: model('exa/auto'), source: 'byok', kind: 'timeout', error: 'timed out', reservedMicros: 450, chargedMicros: 450 };
const capacity: AttemptResult = { status: 'skipped', model: model('brave/web'), source: 'platform', reason: 'capacity', priceMicros: 6_000 };
const notConfigured: AttemptResult = { status: 'skipped', model: model('tavily/basic'), source: null, reason: 'not_configured', priceMicros: 10_000 };
const idempotency = { keyDigest: 'kd', bodyDigest: 'bd' };

function setup(idempotent: boolean) {
  const h = harness();
  const ctx = searchContext(h.steps, searchCall({ idempotency: idempotent ? idempotency : null }));
  return { ...h, ctx };
}

describe('settle', () => {
  describe('settled: a provider was called', () => {
    it('sends the leftover ops and the settlement (record, kept outcome, the account lease back in the script)', async () => {
      const { steps, money, ctx } = setup(true);
      const attempts = [timedOut, answered];
      const reply = buildReply('req_unit', attempts, 12, undefined);
      const ops: MoneyOp[] = [{ kind: 'release', index: 0, keepMicros: 450 }, { kind: 'unlease', provider: 'exa', leaseId: 'req_unit:1' }];
      expect(await settle(steps, ctx, ops, attempts, reply, true)).toEqual({ kind: 'settled' });
      expect(money.calls).toEqual([{
        method: 'settle',
        ops: [{ kind: 'release', index: 0, keepMicros: 450 }, { kind: 'unlease', provider: 'exa', leaseId: 'req_unit:1' }],
        settlement: { record: expect.objectContaining({ requestId: 'req_unit', chargedMicros: 9_450 }), outcome: outcomeValue('req_unit', 'bd', 200, reply.body), releaseAccountLease: true },
      }]);
    });

    it("carries the search's canonical filters in the record, and no filters field without any", async () => {
      const filters = canonicalFilters({ include_domains: ['Docs.Example.com', 'example.org'], country: 'DE', published_after: '2025-01-31T12:00:00+01:00' });
      const base = searchCall();
      const h = harness();
      const ctx = searchContext(h.steps, { ...base, request: { ...base.request, filters } });
      await settle(h.steps, ctx, [], [answered], buildReply('req_unit', [answered], 1, undefined), true);
      const sent = h.money.calls[0];
      const record = sent?.method === 'settle' ? sent.settlement.record : undefined;
      expect(JSON.parse(JSON.stringify(record)).filters).toEqual({ include_domains: ['docs.example.com', 'example.org'], country: 'DE', published_after: '2025-01-31T11:00:00.000Z' });

      const plain = setup(false);
      await settle(plain.steps, plain.ctx, [], [answered], buildReply('req_unit', [answered], 1, undefined), true);
      const plainSent = plain.money.calls[0];
      expect(JSON.stringify(plainSent?.method === 'settle' ? plainSent.settlement.record : null)).not.toContain('filters');
    });

    it('keeps no outcome without an Idempotency-Key', async () => {
      const { steps, money, ctx } = setup(false);
      await settle(steps, ctx, [], [answered], buildReply('req_unit', [answered], 1, undefined), true);
      expect(money.calls[0]).toMatchObject({ method: 'settle', settlement: { outcome: null, releaseAccountLease: true } });
    });
  });

  describe('failed: the settlement could not be handed to Redis', () => {
    it('is logged and answered as data (the search answers 500; nothing is charged)', async () => {
      const { steps, money, lines, ctx } = setup(false);
      money.settleAnswers.push(new Error('not connected'));
      expect(await settle(steps, ctx, [], [answered], buildReply('req_unit', [answered], 1, undefined), true)).toEqual({ kind: 'failed' });
      expect(lines).toEqual([expect.objectContaining({ level: 50, msg: 'settlement failed; the reservation is released by reconciliation', account_id: 'acc_unit', err: 'Error: not connected' })]);
    });
  });

  describe('finished: no provider was called', () => {
    it('the leftover ops and the account lease, then the outcome kept (a 502 is kept)', async () => {
      const { steps, money, ctx } = setup(true);
      const attempts = [capacity, notConfigured];
      const reply = buildReply('req_unit', attempts, 1, undefined);
      expect(reply.status).toBe(502);
      const ops: MoneyOp[] = [{ kind: 'release', index: 0, keepMicros: 0 }];
      expect(await settle(steps, ctx, ops, attempts, reply, true)).toEqual({ kind: 'finished' });
      expect(money.calls).toEqual([{ method: 'finish', ops: [{ kind: 'release', index: 0, keepMicros: 0 }, UNLEASE_ACCOUNT], outcome: outcomeValue('req_unit', 'bd', 502, reply.body) }]);
    });

    it('a 503 before any call is not kept: the claim goes back after the account lease', async () => {
      const { steps, money, ctx } = setup(true);
      const reply = buildReply('req_unit', [capacity], 1, undefined);
      expect(reply.status).toBe(503);
      await settle(steps, ctx, [], [capacity], reply, true);
      expect(money.calls).toEqual([{ method: 'finish', ops: [UNLEASE_ACCOUNT, RELEASE_CLAIM], outcome: null }]);
    });

    it('no account lease to give back when none was taken; no claim to give back without an Idempotency-Key', async () => {
      const { steps, money, ctx } = setup(false);
      await settle(steps, ctx, [], [capacity], buildReply('req_unit', [capacity], 1, undefined), false);
      expect(money.calls).toEqual([{ method: 'finish', ops: [], outcome: null }]);
    });
  });

  describe('foreign: another request owns the Idempotency-Key', () => {
    it('its stored value, to answer as its repeat', async () => {
      const { steps, money, ctx } = setup(true);
      money.finishAnswers.push({ foreignOutcome: 'THEIRS' });
      expect(await settle(steps, ctx, [], [notConfigured], buildReply('req_unit', [notConfigured], 1, undefined), false)).toEqual({ kind: 'foreign', stored: 'THEIRS' });
    });

    it('never without an Idempotency-Key', async () => {
      const { steps, money, ctx } = setup(false);
      money.finishAnswers.push({ foreignOutcome: 'THEIRS' });
      expect(await settle(steps, ctx, [], [notConfigured], buildReply('req_unit', [notConfigured], 1, undefined), false)).toEqual({ kind: 'finished' });
    });
  });

  describe('fault', () => {
    it('Redis failing on the last round trip of a search without a call is thrown', async () => {
      const { steps, money, lines, ctx } = setup(false);
      money.finishAnswers.push(new Error('gone'));
      await expect(settle(steps, ctx, [], [capacity], buildReply('req_unit', [capacity], 1, undefined), true)).rejects.toThrow('gone');
      expect(messages(lines)).toEqual([]);
    });
  });

  describe('keptOutcome', () => {
    it('every reply under an Idempotency-Key but a 503 before any provider call', () => {
      const { ctx } = setup(true);
      const overloaded = buildReply('req_unit', [capacity], 1, undefined);
      expect(keptOutcome(ctx, overloaded, false)).toBeNull();
      expect(keptOutcome(ctx, overloaded, true)).toBe(outcomeValue('req_unit', 'bd', 503, overloaded.body));
      expect(keptOutcome(setup(false).ctx, buildReply('req_unit', [answered], 1, undefined), true)).toBeNull();
    });
  });

  describe('settlementRecord', () => {
    it('one entry per attempt in order, and the sum charged', () => {
      const { ctx } = setup(false);
      const record = settlementRecord(ctx.scope, [notConfigured, timedOut, capacity, answered], undefined);
      expect(record).toMatchObject({ v: 1, requestId: 'req_unit', accountId: 'acc_unit', keyId: 'key_unit', chargedMicros: 9_450 });
      expect(record.attempts).toEqual([
        { index: 0, model: 'tavily/basic', provider: 'tavily', source: 'platform', status: 'skipped', error: 'provider not configured', reservedMicros: 0, chargedMicros: 0, timedOut: false, results: 0 },
        { index: 1, model: 'exa/auto', provider: 'exa', source: 'byok', status: 'error', error: 'timed out', reservedMicros: 450, chargedMicros: 450, timedOut: true, results: 0 },
        { index: 2, model: 'brave/web', provider: 'brave', source: 'platform', status: 'skipped', error: 'provider at capacity', reservedMicros: 0, chargedMicros: 0, timedOut: false, results: 0 },
        { index: 3, model: 'exa/fast', provider: 'exa', source: 'platform', status: 'success', error: null, reservedMicros: 9_000, chargedMicros: 9_000, timedOut: false, results: 2, cache: 'off', savedMicros: 0 },
      ]);
    });
  });
});
