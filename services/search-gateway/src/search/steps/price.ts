import { byokFeeMicros, costMicros } from '@svc/contracts';
import type { Micros } from '@svc/money';
import type { PlannedAttempt, SearchSettings } from './search-steps';

/** BYOK_FEE_PERCENT's default. */
export const DEFAULT_BYOK_FEE_PERCENT = 5;

/** What an answered attempt is charged for `results` results: the model's cost, or the BYOK fee of it. */
export function chargeOf(planned: PlannedAttempt, results: number, settings: SearchSettings): Micros {
  const cost = costMicros(planned.model, results);
  return planned.source === 'byok' ? byokFeeMicros(cost, settings.byokFeePercent ?? DEFAULT_BYOK_FEE_PERCENT) : cost;
}

/** What a timed-out attempt keeps: the model's base price, or the BYOK fee of it (never more than it reserved). */
export function keptOnTimeout(planned: PlannedAttempt, settings: SearchSettings): Micros {
  const base = planned.model.baseMicros;
  const kept = planned.source === 'byok' ? byokFeeMicros(base, settings.byokFeePercent ?? DEFAULT_BYOK_FEE_PERCENT) : base;
  return Math.min(kept, planned.priceMicros);
}
