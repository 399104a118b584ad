import { findModel } from '@svc/contracts';
import type { ModelSpec } from '@svc/contracts';
import { attemptView, decideOutcome } from './search.outcome';
import type { AttemptResult, SkipReason } from './search.outcome';

function model(id: string): ModelSpec {
  const found = findModel(id);
  if (found === undefined) throw new Error(id);
  return found;
}
const skipped = (id: string, reason: SkipReason, priceMicros: number): AttemptResult =>
  ({ status: 'skipped', model: model(id), source: reason === 'not_configured' || reason === 'model_not_allowed' ? null : 'platform', reason, priceMicros });
const failed = (id: string, kind: 'timeout' | 'server_error', chargedMicros = 0): AttemptResult =>
  ({ status: 'error', model: model(id), source: 'platform', kind, error: 'x', reservedMicros: 9000, chargedMicros });

describe('search outcome rules (docs/api.md 10.5, when no model answers)', () => {
  it('402 insufficient_credits when every model is blocked by the balance, needing the cheapest price', () => {
    expect(decideOutcome([skipped('tavily/basic', 'balance', 10_000), skipped('exa/fast', 'balance', 9_000)]))
      .toEqual({ kind: 'payment', code: 'insufficient_credits', neededMicros: 9_000 });
  });

  it('402 key_limit_exceeded as soon as one block was the key limit', () => {
    expect(decideOutcome([skipped('tavily/basic', 'limit', 10_000), skipped('exa/fast', 'balance', 9_000)]))
      .toEqual({ kind: 'payment', code: 'key_limit_exceeded', neededMicros: 9_000 });
  });

  it('503 when every model not blocked by money was at capacity', () => {
    expect(decideOutcome([skipped('tavily/basic', 'capacity', 10_000), skipped('exa/fast', 'balance', 9_000)])).toEqual({ kind: 'overloaded' });
  });

  it('502 when anything else happened: a failure, or a provider not configured', () => {
    expect(decideOutcome([skipped('tavily/basic', 'capacity', 10_000), failed('exa/fast', 'server_error')])).toEqual({ kind: 'failed' });
    expect(decideOutcome([skipped('brave/web', 'not_configured', 6_000), skipped('exa/fast', 'capacity', 9_000)])).toEqual({ kind: 'failed' });
    expect(decideOutcome([])).toEqual({ kind: 'failed' });
  });

  it('shows cost_usd only on a timed-out attempt, and no source on an unconfigured one', () => {
    expect(attemptView(failed('exa/auto', 'timeout', 9_000))).toEqual({ model: 'exa/auto', source: 'platform', status: 'error', error: 'x', cost_usd: 0.009 });
    expect(attemptView(failed('exa/auto', 'server_error'))).toEqual({ model: 'exa/auto', source: 'platform', status: 'error', error: 'x' });
    expect(attemptView(skipped('brave/web', 'not_configured', 6_000))).toEqual({ model: 'brave/web', status: 'skipped', error: 'provider not configured' });
  });

  it('leaves models the key may not use out of the verdict, and shows them as skipped', () => {
    expect(decideOutcome([skipped('brave/web', 'model_not_allowed', 6_000), skipped('exa/fast', 'balance', 9_000)]))
      .toEqual({ kind: 'payment', code: 'insufficient_credits', neededMicros: 9_000 });
    expect(decideOutcome([skipped('brave/web', 'model_not_allowed', 6_000), skipped('exa/fast', 'capacity', 9_000)])).toEqual({ kind: 'overloaded' });
    expect(attemptView(skipped('brave/web', 'model_not_allowed', 6_000))).toEqual({ model: 'brave/web', status: 'skipped', error: 'model not allowed for this key' });
  });
});
