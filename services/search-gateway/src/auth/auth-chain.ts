import { evaluateKey } from '@svc/contracts';
import type { KeyLookup, KeyRecord, RequiredKind } from '@svc/contracts';
import { AppError, describeError } from '@svc/errors';
import { AddressList, clientAddress } from '@svc/http-edge';
import { hashSecret, parseAccessToken, parseBearer } from '@svc/keys';
import type { Logger } from 'pino';
import type { KeyCache } from './key-cache';
import type { KeyOwner } from './key-lookup.grpc';
import type { KeyRecordStore } from './key-record.store';
import { usableUntilMs } from './key-state-bound';
import type { KeyStateBound } from './key-state-bound';

/** Why a request was not authenticated; each maps to one spec code. */
export type AuthFailure =
  | { ok: false; code: 'invalid_api_key'; reason: 'missing' | 'malformed' | 'unknown' | 'deleted' }
  | { ok: false; code: 'key_disabled'; reason: 'disabled' }
  | { ok: false; code: 'key_expired'; reason: 'expired' }
  | { ok: false; code: 'wrong_key_type'; reason: 'wrong_kind' }
  | { ok: false; code: 'ip_not_allowed'; reason: 'address' };

export type AuthOutcome = { ok: true; record: KeyRecord; keyHash: string } | AuthFailure;

const MESSAGES: Record<AuthFailure['reason'], string> = {
  missing: 'missing Authorization header; send Authorization: Bearer svc-...',
  malformed: 'the Authorization header must be Bearer followed by a key starting with svc-',
  unknown: 'unknown or deleted key',
  deleted: 'unknown or deleted key',
  disabled: 'this key is disabled',
  expired: 'this key has expired',
  wrong_kind: 'this endpoint does not accept this kind of key',
  address: 'this key may not be used from this client address',
};

/** What the address fence needs of a request: its socket's peer and X-Forwarded-For (a Fastify request is one). */
export interface ClientOrigin {
  readonly ip: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** Stored fences compiled once per record's list (records are shared objects in the key cache). */
const compiledFences = new WeakMap<readonly string[], AddressList>();

function fenceOf(cidrs: readonly string[]): AddressList {
  let list = compiledFences.get(cidrs);
  if (list === undefined) {
    list = AddressList.lenient(cidrs);
    compiledFences.set(cidrs, list);
  }
  return list;
}

/** The AppError for a failed outcome (the spec's 401/403 codes). */
export function authError(failure: AuthFailure): AppError {
  return new AppError(failure.code, MESSAGES[failure.reason]);
}

function verdict(lookup: KeyLookup, keyHash: string, nowMs: number, required: RequiredKind): AuthOutcome {
  const result = evaluateKey(lookup, nowMs, required);
  if (result.ok) return { ok: true, record: result.record, keyHash };
  switch (result.code) {
    case 'key_disabled': return { ok: false, code: 'key_disabled', reason: 'disabled' };
    case 'key_expired': return { ok: false, code: 'key_expired', reason: 'expired' };
    case 'wrong_key_type': return { ok: false, code: 'wrong_key_type', reason: 'wrong_kind' };
    default:
      return { ok: false, code: 'invalid_api_key', reason: lookup.found ? 'deleted' : 'unknown' };
  }
}

export interface AuthChainDeps {
  cache: KeyCache;
  store: KeyRecordStore;
  owner: KeyOwner;
  log: Logger;
  /** The propagation bound; the store must apply the same one to Redis values. */
  bound: KeyStateBound;
  now?: () => number;
  /** TRUSTED_PROXIES: who may name the client in X-Forwarded-For (default: nobody). */
  trustedProxies?: AddressList;
}

/** A resolved state and the last instant it may be used (Infinity: a tombstone, final). */
interface Resolved {
  lookup: KeyLookup;
  usableUntilMs: number;
}

/**
 * Verifies a bearer key: parse -> hash -> in-process cache -> Redis -> one gRPC fill.
 * A cached key costs no I/O; a miss costs one Redis GET, and on a Redis miss or fault one
 * LookupKey, shared by every concurrent request for the same hash. Expected rejections
 * are outcomes; only "nobody can answer" is thrown (AppError internal).
 *
 * Propagation bound: a Redis value older than the bound allows is a miss (the store's
 * rule), and every cached state expires by its stamp + KEY_PROPAGATION_MAX_MS - skew; a gRPC
 * answer is stamped when its request was sent. Tombstones are exempt (deletion is final).
 */
export class AuthChain {
  private readonly cache: KeyCache;
  private readonly store: KeyRecordStore;
  private readonly owner: KeyOwner;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly bound: KeyStateBound;
  private readonly trustedProxies: AddressList;
  private readonly inFlight = new Map<string, Promise<KeyLookup>>();
  /** Grows on every invalidation, so a fill that started before it is not cached. */
  private generation = 0;

  constructor(deps: AuthChainDeps) {
    this.cache = deps.cache;
    this.store = deps.store;
    this.owner = deps.owner;
    this.log = deps.log;
    this.bound = deps.bound;
    this.now = deps.now ?? Date.now;
    this.trustedProxies = deps.trustedProxies ?? AddressList.parse([]);
  }

  /**
   * An API key (`Authorization: Bearer svc-...`). Throws AppError('internal') when neither
   * Redis nor account-admin can answer. With `origin`, a key fenced to addresses
   * (`allowedIps`) is also checked against the client's address (403 ip_not_allowed); a key
   * without that fence costs nothing more.
   */
  async authenticate(authorization: string | undefined, required: RequiredKind, origin?: ClientOrigin): Promise<AuthOutcome> {
    const parsed = parseBearer(authorization);
    if (!parsed.ok) return { ok: false, code: 'invalid_api_key', reason: parsed.reason };
    const keyHash = hashSecret(parsed.secret);
    const cached = this.cache.get(keyHash);
    return this.decide(cached ?? (await this.fill(keyHash)), keyHash, required, origin);
  }

  /**
   * An OAuth access token (`Authorization: Bearer svc-oat-...`, decision 0029), which
   * account-admin's LookupKey resolves to its grant's API key record: the same chain, kind
   * and address fence as that key.
   */
  async authenticateAccessToken(authorization: string | undefined, origin: ClientOrigin): Promise<AuthOutcome> {
    const parsed = parseAccessToken(authorization);
    if (!parsed.ok) return { ok: false, code: 'invalid_api_key', reason: parsed.reason };
    const keyHash = hashSecret(parsed.token);
    return this.decide(this.cache.get(keyHash) ?? (await this.fill(keyHash)), keyHash, 'api', origin);
  }

  /** The client's address (@svc/http-edge clientAddress with TRUSTED_PROXIES). */
  clientAddress(origin: ClientOrigin): string {
    return clientAddress(origin.ip, origin.headers['x-forwarded-for'], this.trustedProxies);
  }

  /** The state table's verdict on a resolved state, then the address fence (only a key that has one, and only with `origin`). */
  private decide(lookup: KeyLookup, keyHash: string, required: RequiredKind, origin: ClientOrigin | undefined): AuthOutcome {
    const outcome = verdict(lookup, keyHash, this.now(), required);
    if (outcome.ok && outcome.record.allowedIps !== undefined && origin !== undefined
      && !fenceOf(outcome.record.allowedIps).has(this.clientAddress(origin))) {
      return { ok: false, code: 'ip_not_allowed', reason: 'address' };
    }
    return outcome;
  }

  /** Drops one hash (a key-change message or a changed-key header). */
  invalidate(keyHash: string): void {
    this.generation++;
    this.cache.delete(keyHash);
    this.inFlight.delete(keyHash);
  }

  /** Drops everything (the change feed may have lost messages). */
  invalidateAll(): void {
    this.generation++;
    this.cache.clear();
    this.inFlight.clear();
  }

  private fill(keyHash: string): Promise<KeyLookup> {
    const pending = this.inFlight.get(keyHash);
    if (pending !== undefined) return pending;
    const generation = this.generation;
    const promise = this.resolve(keyHash).then(
      (resolved) => {
        if (this.inFlight.get(keyHash) === promise) this.inFlight.delete(keyHash);
        if (this.generation === generation) this.cache.set(keyHash, resolved.lookup, resolved.usableUntilMs);
        return resolved.lookup;
      },
      (error: unknown) => {
        if (this.inFlight.get(keyHash) === promise) this.inFlight.delete(keyHash);
        throw error;
      },
    );
    this.inFlight.set(keyHash, promise);
    return promise;
  }

  private async resolve(keyHash: string): Promise<Resolved> {
    const stored = await this.store.read(keyHash);
    if (stored.kind === 'found') return this.stamped(stored.lookup, stored.writtenAtMs);
    if (stored.kind === 'error') {
      this.log.warn({ err: describeError(stored.error) }, 'key record read from Redis failed; asking account-admin');
    }
    // Taken before the request leaves: the answer reflects Postgres at some later instant.
    const sentAtMs = this.now();
    const owned = await this.owner.lookup(keyHash);
    if (owned.kind === 'found') return this.stamped(owned.lookup, sentAtMs);
    this.log.error({ err: describeError(owned.error) }, 'key lookup at account-admin failed');
    throw new AppError('internal', 'internal error');
  }

  private stamped(lookup: KeyLookup, stampMs: number | null): Resolved {
    if (stampMs === null || isTombstone(lookup)) return { lookup, usableUntilMs: Number.POSITIVE_INFINITY };
    return { lookup, usableUntilMs: usableUntilMs(this.bound, stampMs) };
  }
}

/** A deleted record never comes back, so its state has no deadline (the cache lifetime still applies). */
function isTombstone(lookup: KeyLookup): boolean {
  return lookup.found && lookup.record.deleted;
}
