import { atOurRateMicros, attemptMoney, findResearchModel, MODEL_NOT_ALLOWED_MESSAGE, minCapMicros, RESEARCH_MODELS } from '@svc/contracts';
import type { ResearchModelSpec } from '@svc/contracts';
import { chargeOf, nextAttempt, plan, startingMoney } from './research-plan';

const model = (id: string): ResearchModelSpec => {
  const found = findResearchModel(id);
  if (found === undefined) throw new Error(id);
  return found;
};

describe('a research run\'s plan (pure)', () => {
  it('holds min(cap, the sum of the runnable models\' most), skipping with the reason what cannot run within the cap', () => {
    const p = plan(['exa/agent-high', 'exa/agent-medium', 'tavily/research-mini', 'exa/agent-low'], 500_000, null);
    expect(p.attempts.map((a) => [a.model, a.status])).toEqual([
      ['exa/agent-high', 'skipped'], ['exa/agent-medium', 'pending'], ['tavily/research-mini', 'skipped'], ['exa/agent-low', 'pending'],
    ]);
    expect(p.attempts[0]?.error).toBe('its most possible cost (0.625 USD) exceeds what the cap leaves (0.5 USD)');
    expect(p.current).toBe(1);
    expect(p.heldMicros).toBe(125_000 + 31_250);
    // The cap bounds the hold when the models' sum passes it.
    expect(plan(['exa/agent-auto', 'tavily/research-pro'], 3_000_000, null).heldMicros).toBe(3_000_000);
  });

  it('skips a fenced model with the fence\'s message, and has no current attempt when nothing can run', () => {
    const fenced = plan(['exa/agent-low', 'tavily/research-mini'], 2_000_000, ['tavily/*']);
    expect(fenced.attempts.map((a) => [a.status, a.error])).toEqual([['skipped', MODEL_NOT_ALLOWED_MESSAGE], ['pending', null]]);
    expect(fenced.current).toBe(1);
    const none = plan(['exa/agent-auto'], 1_000_000, null);
    expect(none.current).toBeNull();
    expect(none.heldMicros).toBe(0);
    expect(none.attempts[0]?.error).toContain('smallest budget');
  });

  it('gives a metered model what the cap leaves as its budget in provider money, at most its largest, and not below its smallest', () => {
    const auto = model('exa/agent-auto');
    expect(attemptMoney(auto, 2_000_000)).toEqual({ ok: true, money: { ceilingMicros: 2_000_000, providerBudgetMicros: 1_600_000 } });
    expect(attemptMoney(auto, 1_000_000_000)).toEqual({ ok: true, money: { ceilingMicros: 125_000_000, providerBudgetMicros: 100_000_000 } });
    expect(attemptMoney(auto, minCapMicros(auto)).ok).toBe(true);
    expect(attemptMoney(auto, minCapMicros(auto) - 1).ok).toBe(false);
    // A fixed model's least cap is its price; every model's least cap is within its most.
    expect(minCapMicros(model('exa/agent-medium'))).toBe(125_000);
    for (const m of RESEARCH_MODELS) expect(minCapMicros(m)).toBeLessThanOrEqual(m.maxCostMicros);
  });

  it('a fallback fits in what the hold leaves after what earlier attempts were charged', () => {
    const p = plan(['exa/agent-auto', 'exa/agent-medium'], 1_500_000, null);
    expect(p.heldMicros).toBe(1_500_000);
    // The first attempt failed at the provider after using 1.40 of the hold: 0.10 is left, below medium's 0.125.
    const attempts = p.attempts.map((a, i) => (i === 0 ? { ...a, status: 'failed' as const, chargedMicros: 1_400_000 } : a));
    const after = nextAttempt(attempts, 0, p.heldMicros);
    expect(after.next).toBeNull();
    expect(after.attempts[1]).toMatchObject({ status: 'skipped', error: expect.stringContaining('exceeds what the cap leaves (0.1 USD)') });
    // With 1.30 charged, 0.20 is left: medium runs, with its own price as its ceiling.
    const cheaper = p.attempts.map((a, i) => (i === 0 ? { ...a, status: 'failed' as const, chargedMicros: 1_300_000 } : a));
    expect(nextAttempt(cheaper, 0, p.heldMicros).next).toBe(1);
    expect(startingMoney(cheaper, 1, p.heldMicros)).toEqual({ ok: true, money: { ceilingMicros: 125_000, providerBudgetMicros: null } });
  });

  it('charges the report at the catalog\'s rate, never above the ceiling nor below 0', () => {
    const auto = model('exa/agent-auto');
    expect(atOurRateMicros(auto, { providerCostMicros: 800_000 })).toBe(1_000_000);
    // Halves round up to the micro-USD: 1 provider micro at 1.25 is 1.25 micros, 2 is 2.5.
    expect(atOurRateMicros(auto, { providerCostMicros: 1 })).toBe(1);
    expect(atOurRateMicros(auto, { providerCostMicros: 2 })).toBe(3);
    expect(atOurRateMicros(model('tavily/research-pro'), { credits: 40 })).toBe(400_000);
    expect(chargeOf(2_000_000, 3_000_000)).toBe(2_000_000);
    expect(chargeOf(2_000_000, 500_000)).toBe(500_000);
    expect(chargeOf(2_000_000, -5)).toBe(0);
  });
});
