import { describeError } from '@svc/errors';
import type { Micros } from '@svc/money';
import { NO_OPS } from '../../money/money.ops';
import type { AdmissionVerdict, LeaseRequest, MoneyOp, ReserveRequest, ReserveVerdict } from '../../money/money.ops';
import { refuse } from '../search.result';
import type { RateLimitState, SearchRefusal } from '../search.result';
import type { AttemptResult } from '../search.outcome';
import type { AttemptedRequest } from '../search.result';
import type { Answering, Readiness, SearchContext, SearchSteps } from './search-steps';

/** Why an admitted attempt is not run: the key's limit, the balance, or capacity (the provider's, or a cold account). */
export type BlockReason = 'limit' | 'balance' | 'capacity';

/**
 * What an admission makes of an attempt. `rateLimit` is the key's state after the search's
 * first admission (undefined on a later one).
 * - `reserved`: its most possible cost is held (`reservedMicros`): answer it; `leased` whether
 *   it holds a provider lease (an attempt answered without its provider holds none, and a
 *   provider call admitted without one takes one before it calls);
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
  | { readonly kind: 'reserved'; readonly rateLimit: RateLimitState | undefined; readonly leased: boolean; readonly reservedMicros: Micros }
  | { readonly kind: 'blocked'; readonly reason: BlockReason; readonly rateLimit: RateLimitState | undefined }
  | { readonly kind: 'duplicate'; readonly stored: string; readonly rateLimit: RateLimitState | undefined }
  | { readonly kind: 'refused'; readonly refusal: SearchRefusal }
  | { readonly kind: 'unavailable' };

/** What a later admission (no claim, the account lease already held) can make of an attempt. */
export type LaterAdmission = Extract<Admission, { kind: 'reserved' | 'blocked' | 'unavailable' }>;

/**
 * The admission's verdict on an attempt, before the search's rate state is attached:
 * `reserved` with its provider lease, `unleased` reserved without one, or why it is not run.
 */
export type Reservation = 'reserved' | 'unleased' | BlockReason | 'duplicate';

// The outcomes of later admissions that carry nothing of their own: one object each.
const BLOCKED_LIMIT: LaterAdmission = { kind: 'blocked', reason: 'limit', rateLimit: undefined };
const BLOCKED_BALANCE: LaterAdmission = { kind: 'blocked', reason: 'balance', rateLimit: undefined };
const BLOCKED_CAPACITY: LaterAdmission = { kind: 'blocked', reason: 'capacity', rateLimit: undefined };
const UNAVAILABLE: LaterAdmission = { kind: 'unavailable' };

/**
 * What an admitted attempt's reserve verdict makes of it, once its answer source is `ready`
 * (docs/decisions/0042: only a provider call takes a provider-capacity lease), queueing in
 * `ops` what it leaves to give back:
 * - an attempt answered without its provider (`answers`) is reserved whether or not a lease
 *   was taken beside its lookup; one it was given goes back;
 * - a provider call is reserved with the lease it was given; one that asked for a lease and
 *   got none is blocked for capacity (its reservation goes back); one that asked for none is
 *   reserved without (it takes one before its call);
 * - a verdict that reserved nothing (limit, balance, a duplicate claim, a cold account) gives
 *   back the lease, if one was taken; a cold account (Redis lost its data during the search)
 *   is skipped as capacity.
 * `leased` is the money port's: true when the lease was taken or none was asked; `asked` the
 * lease this admission asked for (the answering's own, none on a re-admission at a cheaper price).
 */
export function reservationOf<R extends AttemptedRequest>(ops: MoneyOp[], verdict: ReserveVerdict, leased: boolean, answering: Answering<R>, readiness: Readiness = 'calls', asked: LeaseRequest | null = answering.lease): Reservation {
  const took = leased && asked !== null;
  const { request } = answering;
  switch (verdict.kind) {
    case 'ok':
      if (readiness === 'calls') {
        if (took) return 'reserved';
        if (asked === null) return 'unleased';
        ops.push({ kind: 'release', index: request.index, keepMicros: 0 });
        return 'capacity';
      }
      if (took) ops.push({ kind: 'unlease', provider: request.provider, leaseId: request.leaseId });
      return 'unleased';
    case 'dup':
    case 'limit':
    case 'balance':
    case 'cold':
      if (took) ops.push({ kind: 'unlease', provider: request.provider, leaseId: request.leaseId });
      return verdict.kind === 'dup' ? 'duplicate' : verdict.kind === 'cold' ? 'capacity' : verdict.kind;
  }
}

/**
 * The search's first admission (one round trip, with the provider lease beside it, and its
 * answer source's own I/O in the same flush): the key's rate, the account's in-flight lease,
 * the Idempotency-Key claim and the first reservation. A refused one gives back the provider
 * lease it may have taken; a cold account asks for its hydration, waits for it and is admitted
 * once more, else refused.
 */
export async function admitFirst<R extends AttemptedRequest>(steps: SearchSteps<R>, ctx: SearchContext<R>, ops: MoneyOp[], answering: Answering<R>): Promise<Admission> {
  let answer: { leased: boolean; admission: AdmissionVerdict };
  try {
    // A search's first round trip: nothing is left over from an earlier one.
    answer = await steps.money.admitFirst(ctx.scope, NO_OPS, answering.lease, answering.reserve, steps.settings.admission);
  } catch (error) {
    return admissionFailed(steps, ctx, error);
  }
  if (answer.admission.kind !== 'admitted') return refused(steps, ctx, ops, answering, answer, true);
  const admission = admitted(steps, ctx, ops, answering, answer.admission, answer.leased);
  return admission instanceof Promise ? await admission : admission;
}

/**
 * A later attempt's admission: the search's leftover ops, the account lease extended, the
 * provider lease and the reservation, in one round trip (with the answer source's own I/O
 * in the same flush). Redis failing after a provider call is a fault (thrown: what was called
 * must still be settled by reconciliation).
 */
export async function admitNext<R extends AttemptedRequest>(steps: SearchSteps<R>, ctx: SearchContext<R>, ops: MoneyOp[], attempts: readonly AttemptResult[], answering: Answering<R>): Promise<LaterAdmission> {
  let answer: { leased: boolean; verdict: ReserveVerdict };
  try {
    answer = await steps.money.admit(ctx.scope, ops.splice(0), answering.lease, answering.reserve, steps.settings.admission.leaseTtlMs);
  } catch (error) {
    if (providerCalled(attempts)) throw error;
    return admissionFailed(steps, ctx, error);
  }
  const readiness = answering.ready();
  const reservation = reservationOf(ops, answer.verdict, answer.leased, answering, readiness instanceof Promise ? await readiness : readiness);
  return later(steps, ctx, ops, attempts, answering, reservation, answering.reserve);
}

/** A later admission's outcome; a money block at the model's price is admitted once more at a cheaper reservation that covers the attempt. */
async function later<R extends AttemptedRequest>(steps: SearchSteps<R>, ctx: SearchContext<R>, ops: MoneyOp[], attempts: readonly AttemptResult[], answering: Answering<R>, reservation: Reservation, reserve: ReserveRequest): Promise<LaterAdmission> {
  switch (reservation) {
    case 'reserved':
    case 'unleased':
      return { kind: 'reserved', rateLimit: undefined, leased: reservation === 'reserved', reservedMicros: reserve.amountMicros };
    case 'limit':
    case 'balance':
      if (answering.cheaper !== null && reserve !== answering.cheaper) return admitCheaper(steps, ctx, ops, attempts, answering, answering.cheaper);
      return reservation === 'limit' ? BLOCKED_LIMIT : BLOCKED_BALANCE;
    case 'capacity':
      return BLOCKED_CAPACITY;
    case 'duplicate':
      // Only a claim can find the key taken, and only the first admission carries one.
      throw new Error('a reservation without a claim answered dup');
  }
}

/**
 * An attempt whose reservation at the model's price was blocked (the key's limit or the
 * balance) but whose answer source answers it for less (a stored answer at the cache price):
 * admitted once more at that price, without a provider lease, so it is checked against the
 * limit and the balance at what it costs (one more round trip, only then).
 */
async function admitCheaper<R extends AttemptedRequest>(steps: SearchSteps<R>, ctx: SearchContext<R>, ops: MoneyOp[], attempts: readonly AttemptResult[], answering: Answering<R>, cheaper: ReserveRequest): Promise<LaterAdmission> {
  let answer: { leased: boolean; verdict: ReserveVerdict };
  try {
    answer = await steps.money.admit(ctx.scope, ops.splice(0), null, cheaper, steps.settings.admission.leaseTtlMs);
  } catch (error) {
    if (providerCalled(attempts)) throw error;
    return admissionFailed(steps, ctx, error);
  }
  return later(steps, ctx, ops, attempts, answering, reservationOf(ops, answer.verdict, answer.leased, answering, 'answers', null), cheaper);
}

/** Gives back the account in-flight lease alone (an exit whose last round trip did not); it expires on its own otherwise. */
export async function releaseAccountLease<R extends AttemptedRequest>(steps: SearchSteps<R>, ctx: SearchContext<R>): Promise<void> {
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
function admissionFailed<R extends AttemptedRequest>(steps: SearchSteps<R>, ctx: SearchContext<R>, error: unknown): LaterAdmission {
  steps.log.error({ request_id: ctx.call.requestId, err: describeError(error) }, 'redis admission failed');
  return UNAVAILABLE;
}

/** The first admission's answer when admitted, with the key's rate state, once the answer source is ready (at once for a provider call). */
function admitted<R extends AttemptedRequest>(steps: SearchSteps<R>, ctx: SearchContext<R>, ops: MoneyOp[], answering: Answering<R>, verdict: Extract<AdmissionVerdict, { kind: 'admitted' }>, leased: boolean): Admission | Promise<Admission> {
  const rateLimit: RateLimitState = { limit: steps.settings.admission.ratePerSecond, remaining: verdict.remaining };
  const readiness = answering.ready();
  return readiness instanceof Promise
    ? readiness.then((ready) => first(steps, ctx, ops, answering, verdict.verdict, leased, ready, rateLimit))
    : first(steps, ctx, ops, answering, verdict.verdict, leased, readiness, rateLimit);
}

/** What the first admission's reserve verdict makes of the attempt (see reservationOf), with the key's rate state. */
function first<R extends AttemptedRequest>(steps: SearchSteps<R>, ctx: SearchContext<R>, ops: MoneyOp[], answering: Answering<R>, reserve: ReserveVerdict, leased: boolean, readiness: Readiness, rateLimit: RateLimitState): Admission | Promise<Admission> {
  const reservation = reservationOf(ops, reserve, leased, answering, readiness);
  switch (reservation) {
    case 'reserved':
    case 'unleased':
      return { kind: 'reserved', rateLimit, leased: reservation === 'reserved', reservedMicros: answering.reserve.amountMicros };
    case 'duplicate':
      return { kind: 'duplicate', stored: reserve.kind === 'dup' ? reserve.stored : '', rateLimit };
    case 'limit':
    case 'balance':
      if (answering.cheaper !== null) {
        return admitCheaper(steps, ctx, ops, [], answering, answering.cheaper).then((again) => (again.kind === 'unavailable' ? again : { ...again, rateLimit }));
      }
      return { kind: 'blocked', reason: reservation, rateLimit };
    case 'capacity':
      return { kind: 'blocked', reason: reservation, rateLimit };
  }
}

/** A first admission Redis refused (rate, account cap, cold account): nothing is held but perhaps the provider lease. */
async function refused<R extends AttemptedRequest>(steps: SearchSteps<R>, ctx: SearchContext<R>, ops: MoneyOp[], answering: Answering<R>, answer: { leased: boolean; admission: AdmissionVerdict }, retryCold: boolean): Promise<Admission> {
  const { money, log, settings } = steps;
  const { scope } = ctx;
  const lease = answering.lease;
  if (answer.leased && lease !== null) {
    await money.finish(scope, [{ kind: 'unlease', provider: lease.provider, leaseId: lease.leaseId }], null).catch((cause: unknown) => {
      log.warn({ request_id: scope.requestId, provider: lease.provider, err: describeError(cause) }, 'provider lease release failed; it expires on its own');
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
          again = await money.admitFirst(scope, NO_OPS, lease, answering.reserve, settings.admission);
        } catch (error) {
          return admissionFailed(steps, ctx, error);
        }
        return again.admission.kind === 'admitted' ? await admitted(steps, ctx, ops, answering, again.admission, again.leased) : await refused(steps, ctx, ops, answering, again, false);
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
async function waitWarm<R extends AttemptedRequest>(steps: SearchSteps<R>, accountId: string): Promise<boolean> {
  const deadline = Date.now() + (steps.settings.hydrationWaitMs ?? 1_500);
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    if (await steps.money.isWarm(accountId).catch(() => false)) return true;
  }
  return false;
}
