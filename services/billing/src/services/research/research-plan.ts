import { attemptMoney, findResearchModel, MODEL_NOT_ALLOWED_MESSAGE, modelAllowed } from '@svc/contracts';
import type { ResearchModelSpec } from '@svc/contracts';
import type { Micros } from '@svc/money';
import type { StoredAttempt } from '../../stores/research.repository';

/**
 * A run's money and attempts, as pure functions (docs/decisions/0062): the plan made at
 * creation (which models may run, what is held), the next attempt after one failed, and what
 * an attempt is charged from the provider's report. Nothing here reads a clock or a store.
 */

export interface Plan {
  attempts: StoredAttempt[];
  /** The first attempt that may run; null when none may (the request is refused). */
  current: number | null;
  /** What the run holds: min(the cap, the sum of the most each runnable model can cost). */
  heldMicros: Micros;
}

export function newAttempt(model: ResearchModelSpec, status: 'pending' | 'skipped', error: string | null): StoredAttempt {
  return {
    model: model.id, provider: model.provider, status, error, ceilingMicros: null, providerBudgetMicros: null, providerRunId: null,
    providerCostMicros: null, chargedMicros: null, atRateMicros: null, startTries: 0, polls: 0, startedAt: null, endedAt: null,
  };
}

/**
 * The attempts of a new run: a model the key's fence refuses, or one that cannot run within the
 * cap alone (a fixed or credit model whose most possible cost passes it, a metered one whose
 * smallest budget does), is skipped with the reason; the others wait in order. The hold is the
 * least that covers every attempt the run could make: a run that tries each runnable model in
 * turn can never be charged more than the sum of their ceilings, nor more than the cap.
 */
export function plan(modelIds: readonly string[], capMicros: Micros, allowedModels: readonly string[] | null): Plan {
  const attempts: StoredAttempt[] = [];
  let sum = 0;
  let current: number | null = null;
  for (const id of modelIds) {
    const model = findResearchModel(id);
    if (model === undefined) throw new Error(`${id} is not a research model (the request was validated)`);
    if (allowedModels !== null && !modelAllowed(allowedModels, model)) {
      attempts.push(newAttempt(model, 'skipped', MODEL_NOT_ALLOWED_MESSAGE));
      continue;
    }
    const money = attemptMoney(model, capMicros);
    if (!money.ok) {
      attempts.push(newAttempt(model, 'skipped', money.reason));
      continue;
    }
    sum += money.money.ceilingMicros;
    current ??= attempts.length;
    attempts.push(newAttempt(model, 'pending', null));
  }
  return { attempts, current, heldMicros: Math.min(capMicros, sum) };
}

/** What the run's attempts have been charged so far. */
export function chargedSoFar(attempts: readonly StoredAttempt[]): Micros {
  return attempts.reduce((sum, a) => sum + (a.chargedMicros ?? 0), 0);
}

/**
 * After attempt `from` ended without an answer: the next pending attempt that still fits in
 * what the hold leaves (those that no longer fit are skipped with the reason), or null.
 * Returns new attempts (the input is not changed).
 */
export function nextAttempt(attempts: readonly StoredAttempt[], from: number, heldMicros: Micros): { attempts: StoredAttempt[]; next: number | null } {
  const out = attempts.map((a) => ({ ...a }));
  const left = heldMicros - chargedSoFar(out);
  for (let i = from + 1; i < out.length; i++) {
    const attempt = out[i];
    if (attempt === undefined || attempt.status !== 'pending') continue;
    const model = findResearchModel(attempt.model);
    if (model === undefined) throw new Error(`${attempt.model} is not a research model`);
    const money = attemptMoney(model, left);
    if (money.ok) return { attempts: out, next: i };
    out[i] = { ...attempt, status: 'skipped', error: money.reason };
  }
  return { attempts: out, next: null };
}

/** The ceiling and budget of attempt `index` when it starts: what the hold leaves after the earlier attempts. */
export function startingMoney(attempts: readonly StoredAttempt[], index: number, heldMicros: Micros): ReturnType<typeof attemptMoney> {
  const attempt = attempts[index];
  const model = attempt === undefined ? undefined : findResearchModel(attempt.model);
  if (model === undefined) throw new Error(`attempt ${index} has no research model`);
  return attemptMoney(model, heldMicros - chargedSoFar(attempts.slice(0, index)));
}

/** An attempt's charge: what the provider reported at our rate, never above its ceiling. */
export function chargeOf(ceilingMicros: Micros, atRateMicros: Micros): Micros {
  return Math.max(0, Math.min(ceilingMicros, atRateMicros));
}
