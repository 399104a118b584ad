import { describeError } from '@svc/errors';
import type { SearchFilters, SettledAttempt, SettlementRecord } from '@svc/contracts';
import type { Micros } from '@svc/money';
import { currentTraceparent } from '@svc/tracing';
import { RELEASE_CLAIM, UNLEASE_ACCOUNT } from '../../money/money.ops';
import type { MoneyOp } from '../../money/money.ops';
import type { MoneyScope } from '../../money/money.scope';
import { outcomeValue } from '../idempotency';
import { skipMessage } from '../search.outcome';
import type { AttemptResult } from '../search.outcome';
import type { AttemptedRequest, SearchReply } from '../search.result';
import { providerCalled } from './admit';
import type { SearchContext, SearchSteps } from './search-steps';

/**
 * How a search's last round trip went:
 * - `settled`: a provider was called; its settlement is on the socket to Redis (its answer
 *   is checked in the background) and the account lease goes back in it;
 * - `finished`: no provider was called; the leftover ops ran and the outcome is kept;
 * - `foreign`: as finished, but another request owns the Idempotency-Key: `stored` is its
 *   claim or outcome (the search answers as its repeat);
 * - `failed`: the settlement could not be handed to Redis (logged; the search answers 500 and
 *   reconciliation releases the reservation: nothing is charged).
 */
export type Settled =
  | { readonly kind: 'settled' }
  | { readonly kind: 'finished' }
  | { readonly kind: 'foreign'; readonly stored: string }
  | { readonly kind: 'failed' };

const SETTLED: Settled = { kind: 'settled' };
const FINISHED: Settled = { kind: 'finished' };
const FAILED: Settled = { kind: 'failed' };

/**
 * The outcome to keep under the Idempotency-Key, or null: every reply is kept but a 503
 * made before any provider call (nothing ran, and the SDK retries it with the same key).
 */
export function keptOutcome<R extends AttemptedRequest>(ctx: SearchContext<R>, reply: SearchReply, called: boolean): string | null {
  const idempotency = ctx.call.idempotency;
  if (idempotency === null || (reply.status === 503 && !called)) return null;
  return outcomeValue(ctx.call.requestId, idempotency.bodyDigest, reply.status, reply.body);
}

/**
 * The search's last round trip, before its reply leaves. With a provider call: the
 * settlement (leftover ops, the settle script with the record, the outcome and the account
 * lease, the dirty mark), sent and not awaited. Without: the leftover ops, the account lease
 * when `leaseHeld`, the claim back when the outcome is not kept, and the outcome to keep,
 * awaited. Redis failing on the latter is a fault (thrown).
 */
export async function settle<R extends AttemptedRequest>(steps: SearchSteps<R>, ctx: SearchContext<R>, ops: MoneyOp[], attempts: readonly AttemptResult[], reply: SearchReply, leaseHeld: boolean): Promise<Settled> {
  const { scope } = ctx;
  const called = providerCalled(attempts);
  const stored = keptOutcome(ctx, reply, called);
  if (!called) {
    if (leaseHeld) ops.push(UNLEASE_ACCOUNT);
    if (ctx.call.idempotency !== null && stored === null) ops.push(RELEASE_CLAIM);
    const { foreignOutcome } = await steps.money.finish(scope, ops, stored);
    return foreignOutcome === null || ctx.call.idempotency === null ? FINISHED : { kind: 'foreign', stored: foreignOutcome };
  }
  try {
    // On the socket to Redis before the reply leaves; Redis's answer is awaited in the background.
    const { request } = ctx.call;
    await steps.money.settle(scope, ops, { record: settlementRecord(scope, attempts, request.filters, request.kind), outcome: stored, releaseAccountLease: true });
  } catch (error) {
    steps.log.error({ request_id: scope.requestId, account_id: scope.accountId, err: describeError(error) }, 'settlement failed; the reservation is released by reconciliation');
    return FAILED;
  }
  return SETTLED;
}

/**
 * The SettlementRecord of a search that called a provider: every attempt, what it was charged
 * in all, and the filters it was made with (canonical; undefined, so left out of the JSON, without);
 * an extract's record says so (`kind`: absent on a search's, whose bytes are as they were).
 */
export function settlementRecord(scope: MoneyScope, attempts: readonly AttemptResult[], filters: SearchFilters | undefined, kind?: 'extract'): SettlementRecord {
  // Object literals of one shape (no spread): this runs once per search on the hot path.
  const settled: SettledAttempt[] = [];
  let chargedMicros: Micros = 0;
  for (let index = 0; index < attempts.length; index++) {
    const attempt = attempts[index] as AttemptResult;
    const { id: model, provider } = attempt.model;
    const source = attempt.source ?? 'platform';
    switch (attempt.status) {
      case 'success':
        settled.push({ index, model, provider, source, status: 'success', error: null, reservedMicros: attempt.reservedMicros, chargedMicros: attempt.chargedMicros, timedOut: false, results: attempt.results.length, cache: attempt.cache?.status ?? 'off', savedMicros: attempt.cache?.savedMicros ?? 0 });
        chargedMicros += attempt.chargedMicros;
        break;
      case 'error':
        settled.push({ index, model, provider, source, status: 'error', error: attempt.error, reservedMicros: attempt.reservedMicros, chargedMicros: attempt.chargedMicros, timedOut: attempt.kind === 'timeout', results: 0 });
        chargedMicros += attempt.chargedMicros;
        break;
      case 'skipped':
        settled.push({ index, model, provider, source, status: 'skipped', error: skipMessage(attempt), reservedMicros: 0, chargedMicros: 0, timedOut: false, results: 0 });
        break;
    }
  }
  const record: SettlementRecord = { v: 1, requestId: scope.requestId, accountId: scope.accountId, keyId: scope.keyId, settledAtMs: Date.now(), attempts: settled, chargedMicros, traceparent: currentTraceparent(), filters };
  if (kind !== undefined) record.kind = kind;
  return record;
}
