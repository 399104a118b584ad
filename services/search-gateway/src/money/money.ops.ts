import type { Provider, SettlementRecord } from '@svc/contracts';
import type { Micros } from '@svc/money';
import type { MoneyScope } from './money.scope';

/**
 * A money operation a search leaves for its next round trip to Redis. Each is one command,
 * encoded by one encoder of money.scripts.ts; MoneyRepository sends them at the head of the
 * round trip, in the order the search queued them.
 */
export type MoneyOp =
  /** Lowers what attempt `index` holds to `keepMicros`, giving the rest back (RELEASE_LUA). */
  | { readonly kind: 'release'; readonly index: number; readonly keepMicros: Micros }
  /** Gives back a provider lease (merged with the flush's other releases of that provider). */
  | { readonly kind: 'unlease'; readonly provider: Provider; readonly leaseId: string }
  /** Gives back the search's account in-flight lease (member: the request id). */
  | { readonly kind: 'unleaseAccount' }
  /** Gives back this request's Idempotency-Key claim (an outcome not worth keeping; IDEMPOTENCY_RELEASE_LUA). */
  | { readonly kind: 'releaseClaim' };

/** The account lease back (one object for every search: it carries nothing of its own). */
export const UNLEASE_ACCOUNT: MoneyOp = { kind: 'unleaseAccount' };
/** The Idempotency-Key claim back (one object for every search). */
export const RELEASE_CLAIM: MoneyOp = { kind: 'releaseClaim' };
/** A round trip without leftover ops (a search's first admission). */
export const NO_OPS: readonly MoneyOp[] = [];

/** A provider capacity lease to take. */
export interface LeaseRequest {
  readonly provider: Provider;
  readonly leaseId: string;
  readonly cap: number;
  readonly lifetimeMs: number;
}

/** An Idempotency-Key claim: the value kept under the key while the first request runs. */
export interface Claim {
  readonly value: string;
  readonly ttlMs: number;
}

/** A reservation of an attempt's most possible cost. */
export interface ReserveRequest {
  readonly index: number;
  readonly amountMicros: Micros;
  /** The idempotency claim, on the search's first reservation. */
  readonly claim?: Claim | undefined;
}

/** The limits checked by a search's first admission (spec section 8). */
export interface AdmissionRequest {
  readonly ratePerSecond: number;
  readonly burst: number;
  readonly accountCap: number;
  readonly leaseTtlMs: number;
}

/** 'cold': the account's spendable side is not rebuilt yet since Redis lost its data (nothing written). */
export type ReserveVerdict = { readonly kind: 'ok' } | { readonly kind: 'limit' } | { readonly kind: 'balance' } | { readonly kind: 'cold' } | { readonly kind: 'dup'; readonly stored: string };

/**
 * The answer of a first admission: refused by the key's rate (nothing written), refused by
 * the account's in-flight cap (nothing written), or admitted with a reserve verdict and the
 * requests left in the key's burst.
 */
export type AdmissionVerdict =
  | { readonly kind: 'cold' }
  | { readonly kind: 'rate_limited'; readonly retryAfterMs: number }
  | { readonly kind: 'too_many' }
  | { readonly kind: 'admitted'; readonly remaining: number; readonly verdict: ReserveVerdict };

/**
 * The answer of a fan-out's admission (one ADMIT_LUA request with every model's reservation):
 * as a first admission's, and when admitted, one reserve verdict per reservation in the order
 * sent (`verdicts[0]` the first's; a duplicate claim answers `dup` for the first and nothing for
 * the others, which then hold nothing).
 */
export type FanoutAdmissionVerdict =
  | Exclude<AdmissionVerdict, { kind: 'admitted' }>
  | { readonly kind: 'admitted'; readonly remaining: number; readonly verdicts: readonly ReserveVerdict[] };

export interface Settlement {
  readonly record: SettlementRecord;
  /** The outcome to keep under the Idempotency-Key, or null. */
  readonly outcome: string | null;
  /**
   * The search's account in-flight lease goes back inside the settle script (same hash slot:
   * one command less than an `unleaseAccount` op).
   */
  readonly releaseAccountLease?: boolean | undefined;
}

/** A settlement on its way to Redis: sent once, and again (the same commands) after a failure. */
export interface OutgoingSettlement {
  readonly scope: MoneyScope;
  readonly ops: readonly MoneyOp[];
  readonly settlement: Settlement;
  readonly recordJson: string;
  /** When it was first sent (Unix ms): picks its settled-marker bucket and bounds its re-sends. */
  readonly firstSentAtMs: number;
}
