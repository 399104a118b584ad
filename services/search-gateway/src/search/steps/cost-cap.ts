import type { Micros } from '@svc/money';
import type { AttemptResult } from '../search.outcome';

/**
 * The request's cost cap (`max_cost_usd`, docs/api.md "The cost cap"), one rule for every kind of
 * request and strategy: an attempt may be admitted only if what the request already holds or
 * keeps, plus the attempt's reservation (the most it can cost), stays within the cap. Since an
 * attempt is never charged more than it reserved (an answer its price for the results that came
 * back, a timeout its base price, a failure nothing), the request is never charged more than the
 * cap, whatever fails or times out.
 *
 * - A fallback's attempts run one after another: what it holds when the next one's turn comes is
 *   what the earlier attempts were charged or keep (`spentMicros`).
 * - A fan-out's attempts are admitted together: what it holds is the reservations of those chosen
 *   before, in the order asked.
 */
export function withinCap(capMicros: Micros | null | undefined, heldMicros: Micros, reserveMicros: Micros): boolean {
  return capMicros === null || capMicros === undefined || heldMicros + reserveMicros <= capMicros;
}

/** What a request's attempts so far were charged or keep (a skipped attempt holds nothing). */
export function spentMicros(attempts: readonly AttemptResult[]): Micros {
  let spent = 0;
  for (let i = 0; i < attempts.length; i++) {
    const attempt = attempts[i] as AttemptResult;
    if (attempt.status !== 'skipped') spent += attempt.chargedMicros;
  }
  return spent;
}
