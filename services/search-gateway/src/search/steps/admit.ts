import { describeError } from '@svc/errors';
import { NO_OPS } from '../../money/money.ops';
import type { AdmissionVerdict, MoneyOp, ReserveVerdict } from '../../money/money.ops';
import { refuse } from '../search.result';
import type { RateLimitState, SearchRefusal } from '../search.result';
import type { AttemptResult } from '../search.outcome';
import type { AttemptRequest } from './plan';
import { takesProviderLease } from './cache';
import type { SearchContext, SearchSteps } from './search-steps';

/** Why an admitted attempt is not run: the key's limit, the balance, or capacity (the provider's, or a cold account). */
export type BlockReason = 'limit' | 'balance' | 'capacity';

/**
 * What an admission makes of an attempt. `rateLimit` is the key's state after the search's
 * first admission (undefined on a later one).
 * - `reserved`: its most possible cost is held and the provider lease taken: call it;
 * - `blocked`: not run (an attempt skipped for `reason`); what it took goes back with the
 *   search's next round trip (queued in its ops);
 * - `duplicate`: the Idempotency-Key belongs to an earlier request whose claim or outcome is
 *   `stored` (first admission only): nothing was taken but perhaps the provider lease (queued);
 * - `refused`: the key's rate, the account's cap, or a cold account (first admission only):
 *   nothing is held;
 * - `unavailable`: Redis did not answer, before any provider call: the account lease may be
 *   held (the caller gives it back).
 */
export type Admission =
  | { readonly kind: 'reserved'; readonly rateLimit: RateLimitState | undefined }
  | { readonly kind: 'blocked'; readonly reason: BlockReason; readonly rateLimit: RateLimitState | undefined }
  | { readonly kind: 'duplicate'; readonly stored: string; readonly rateLimit: RateLimitState | undefined }
  | { readonly kind: 'refused'; readonly refusal: SearchRefusal }
  | { readonly kind: 'unavailable' };

/** What a later admission (no claim, the account lease already held) can make of an attempt. */
export type LaterAdmission = Extract<Admission, { kind: 'reserved' | 'blocked' | 'unavailable' }>;

/** The admission's verdict on an attempt, before the search's rate state is attached. */
export type Reservation = 'reserved' | BlockReason | 'duplicate';

// The outcomes of later admissions carry nothing of their own: one object each.
const RESERVED: LaterAdmission = { kind: 'reserved', rateLimit: undefined };
const BLOCKED_LIMIT: LaterAdmission = { kind: 'blocked', reason: 'limit', rateLimit: undefined };
const BLOCKED_BALANCE: LaterAdmission = { kind: 'blocked', reason: 'balance', rateLimit: undefined };
const BLOCKED_CAPACITY: LaterAdmission = { kind: 'blocked', reason: 'capacity', rateLimit: undefined };
const UNAVAILABLE: LaterAdmission = { kind: 'unavailable' };

/**
 * What an admitted attempt's reserve verdict makes of it, queueing in `ops` what it leaves
 * to give back: the provider lease of an attempt not run, the reservation of one that got no
 * provider lease. A cold account (Redis lost its data during the search) reserved nothing:
 * the attempt is skipped as capacity.
 */
export function reservationOf(ops: MoneyOp[], verdict: ReserveVerdict, leased: boolean, request: AttemptRequest): Reservation {
  switch (verdict.kind) {
    case 'ok':
      if (leased) return 'reserved';
      ops.push({ kind: 'release', index: request.index, keepMicros: 0 });
      return 'capacity';
    case 'dup':
    case 'limit':
    case 'balance':
    case 'cold':
      if (leased && takesProviderLease(request)) ops.push({ kind: 'unlease', provider: request.provider, leaseId: request.leaseId });
      return verdict.kind === 'dup' ? 'duplicate' : verdict.kind === 'cold' ? 'capacity' : verdict.kind;
  }
}

/**
 * The search's first admission (one round trip, with the provider lease beside it): the
 * key's rate, the account's in-flight lease, the Idempotency-Key claim and the first
 * reservation. A refused one gives back the provider lease it may have taken; a cold account
 * asks for its hydration, waits for it and is admitted once more, else refused.
 */
export async function admitFirst(steps: SearchSteps, ctx: SearchContext, ops: MoneyOp[], request: AttemptRequest): Promise<Admission> {
  let answer: { leased: boolean; admission: AdmissionVerdict };
  try {
    // A search's first round trip: nothing is left over from an earlier one.
    answer = await steps.money.admitFirst(ctx.scope, NO_OPS, takesProviderLease(request) ? request : null, request, steps.settings.admission);
  } catch (error) {
    return admissionFailed(steps, ctx, error);
  }
  return admitted(steps, ops, request, answer) ?? refused(steps, ctx, ops, request, answer, true);
}

/**
 * A later attempt's admission: the search's leftover ops, the account lease extended, the
 * provider lease and the reservation, in one round trip. Redis failing after a provider call
 * is a fault (thrown: what was called must still be settled by reconciliation).
 */
export async function admitNext(steps: SearchSteps, ctx: SearchContext, ops: MoneyOp[], attempts: readonly AttemptResult[], request: AttemptRequest): Promise<LaterAdmission> {
  let answer: { leased: boolean; verdict: ReserveVerdict };
  try {
    answer = await steps.money.admit(ctx.scope, ops.splice(0), takesProviderLease(request) ? request : null, request, steps.settings.admission.leaseTtlMs);
  } catch (error) {
    if (providerCalled(attempts)) throw error;
    return admissionFailed(steps, ctx, error);
  }
  switch (reservationOf(ops, answer.verdict, answer.leased, request)) {
    case 'reserved':
      return RESERVED;
    case 'limit':
      return BLOCKED_LIMIT;
    case 'balance':
      return BLOCKED_BALANCE;
    case 'capacity':
      return BLOCKED_CAPACITY;
    case 'duplicate':
      // Only a claim can find the key taken, and only the first admission carries one.
      throw new Error('a reservation without a claim answered dup');
  }
}

/**
 * The first admission went out beside the result cache's lookup, in the same flush, as for a
 * miss (the model's price, a provider lease); the lookup found a hit. What the hit makes of it:
 * - reserved: the hit keeps the larger reservation (it is charged the cache price, and the
 *   rest goes back at the settlement) and its provider lease goes back with the search's next
 *   round trip;
 * - blocked (the model's price passed the key's limit or the balance, or the provider was at
 *   capacity): admitted once more as the hit it is, at the cache price and without a lease,
 *   so a hit is still checked against the limit and the balance at the cache price;
 * - anything else (refused, duplicate, unavailable) stands as it is.
 */
export async function admitHit(steps: SearchSteps, ctx: SearchContext, ops: MoneyOp[], speculative: AttemptRequest, hit: AttemptRequest, first: Admission): Promise<{ request: AttemptRequest; first: Admission }> {
  switch (first.kind) {
    case 'reserved':
      ops.push({ kind: 'unlease', provider: speculative.provider, leaseId: speculative.leaseId });
      return { request: { ...hit, amountMicros: speculative.amountMicros }, first };
    case 'blocked': {
      const again = await admitNext(steps, ctx, ops, [], hit);
      return { request: hit, first: again.kind === 'unavailable' ? again : { ...again, rateLimit: first.rateLimit } };
    }
    default:
      return { request: hit, first };
  }
}

/** Gives back the account in-flight lease alone (an exit whose last round trip did not); it expires on its own otherwise. */
export async function releaseAccountLease(steps: SearchSteps, ctx: SearchContext): Promise<void> {
  await steps.money.releaseAccount(ctx.scope).catch((cause: unknown) => {
    steps.log.error({ request_id: ctx.call.requestId, account_id: ctx.scope.accountId, err: describeError(cause) }, 'account lease release failed; it expires on its own');
  });
}

/** A provider was called (an attempt answered or failed): what follows must be settled. */
export function providerCalled(attempts: readonly AttemptResult[]): boolean {
  for (let i = 0; i < attempts.length; i++) {
    if ((attempts[i] as AttemptResult).status !== 'skipped') return true;
  }
  return false;
}

/** Before any provider call nothing is charged: fail closed, retryable. */
function admissionFailed(steps: SearchSteps, ctx: SearchContext, error: unknown): LaterAdmission {
  steps.log.error({ request_id: ctx.call.requestId, err: describeError(error) }, 'redis admission failed');
  return UNAVAILABLE;
}

/** The first admission's answer when admitted (with the key's rate state), else null. */
function admitted(steps: SearchSteps, ops: MoneyOp[], request: AttemptRequest, answer: { leased: boolean; admission: AdmissionVerdict }): Admission | null {
  const verdict = answer.admission;
  if (verdict.kind !== 'admitted') return null;
  const rateLimit: RateLimitState = { limit: steps.settings.admission.ratePerSecond, remaining: verdict.remaining };
  const reserve = verdict.verdict;
  const reservation = reservationOf(ops, reserve, answer.leased, request);
  switch (reservation) {
    case 'reserved':
      return { kind: 'reserved', rateLimit };
    case 'duplicate':
      return { kind: 'duplicate', stored: reserve.kind === 'dup' ? reserve.stored : '', rateLimit };
    default:
      return { kind: 'blocked', reason: reservation, rateLimit };
  }
}

/** A first admission Redis refused (rate, account cap, cold account): nothing is held but perhaps the provider lease. */
async function refused(steps: SearchSteps, ctx: SearchContext, ops: MoneyOp[], request: AttemptRequest, answer: { leased: boolean; admission: AdmissionVerdict }, retryCold: boolean): Promise<Admission> {
  const { money, log, settings } = steps;
  const { scope } = ctx;
  if (answer.leased && takesProviderLease(request)) {
    await money.finish(scope, [{ kind: 'unlease', provider: request.provider, leaseId: request.leaseId }], null).catch((cause: unknown) => {
      log.warn({ request_id: scope.requestId, provider: request.provider, err: describeError(cause) }, 'provider lease release failed; it expires on its own');
    });
  }
  const verdict = answer.admission;
  switch (verdict.kind) {
    case 'cold': {
      // Redis lost this account's spendable side (or it never had one): nothing was written.
      // The ledger worker rebuilds it from the ledger; an account without history at once,
      // one with history after the grace period. Wait a little, admit once more, else 503.
      await money.requestHydration(scope.accountId).catch((cause: unknown) => {
        log.warn({ request_id: scope.requestId, account_id: scope.accountId, err: describeError(cause) }, 'hydration request failed');
      });
      if (retryCold && (await waitWarm(steps, scope.accountId))) {
        let again: { leased: boolean; admission: AdmissionVerdict };
        try {
          again = await money.admitFirst(scope, NO_OPS, takesProviderLease(request) ? request : null, request, settings.admission);
        } catch (error) {
          return admissionFailed(steps, ctx, error);
        }
        return admitted(steps, ops, request, again) ?? refused(steps, ctx, ops, request, again, false);
      }
      return { kind: 'refused', refusal: refuse.cold(ctx.call.requestId) };
    }
    case 'rate_limited':
      return { kind: 'refused', refusal: refuse.rateLimited(ctx.call.requestId, settings.admission.ratePerSecond, settings.admission.burst, verdict.retryAfterMs) };
    default:
      return { kind: 'refused', refusal: refuse.tooMany(ctx.call.requestId, settings.admission.accountCap) };
  }
}

/** Polls until the account's balance exists again, for at most `hydrationWaitMs`; false when it did not. */
async function waitWarm(steps: SearchSteps, accountId: string): Promise<boolean> {
  const deadline = Date.now() + (steps.settings.hydrationWaitMs ?? 1_500);
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    if (await steps.money.isWarm(accountId).catch(() => false)) return true;
  }
  return false;
}
