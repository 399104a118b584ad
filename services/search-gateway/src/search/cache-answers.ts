import { cachePriceMicros, resultCap } from '@svc/contracts';
import type { Micros } from '@svc/money';
import { cacheDigest, cacheKeys, canonicalFilters, SHARED_SCOPE } from '../cache/cache.key';
import type { CacheKeys } from '../cache/cache.key';
import { CACHE_MISS, CACHE_OFF } from '../cache/cache.ticket';
import type { AttemptCache } from '../cache/cache.ticket';
import type { CachedAnswer, LookupOutcome, ResultCache } from '../cache/result-cache';
import type { LeaseRequest, MoneyOp, ReserveRequest } from '../money/money.ops';
import type { NormalizedResult } from '../providers';
import { ResultsJson } from './search.outcome';
import type { AttemptResult, AttemptResults } from './search.outcome';
import { chargeOf } from './steps/price';
import type { AnswerKeeper, AnswerSource, Answering, AttemptRequest, Callable, Readiness, SearchContext, SearchSteps } from './steps/search-steps';

/** A search without filters, as the cache key takes it. */
const NO_FILTERS: object = Object.freeze({});
/** A `refresh`: no lookup, the provider is called and its answer stored. */
const REFRESH: LookupOutcome = Object.freeze({ kind: 'miss' });

/**
 * The result cache as an answer source (docs/decisions/0023 and 0042). In front of each
 * attempt's provider call it answers from a stored entry (`hit`), or from the answer of an
 * identical search in flight (`joined`), or lets the call run and stores its answer (`miss`).
 * The steps only see an Answering: what its admission reserves and leases, whether it calls
 * its provider, its answer, and its close (where a lead not handed to a store is given back:
 * the one place).
 */
export class CacheAnswers implements AnswerSource {
  /** A search that asked for no cache: its provider's answer is counted as `off` and shown so. */
  private readonly off: AnswerKeeper;

  constructor(private readonly cache: ResultCache) {
    this.off = {
      kept: (request, results) => {
        cache.metrics?.counted(request.planned.model.id, 'off');
        return { cache: CACHE_OFF, results };
      },
    };
  }

  open(_steps: SearchSteps, ctx: SearchContext, call: Callable): Answering {
    const search = ctx.call.request;
    if (search.cache === 'off') return new Uncached(call, this.off);
    const { planned } = call;
    const { model } = planned;
    // A search asking for contents has entries of its own (its results carry the page text): the
    // contents and their cap join the filters' part of the key; a search without keeps its key.
    const filters = canonicalFilters(search.filters ?? NO_FILTERS);
    const digest = cacheDigest(model.id, search.query, search.contents === 'none' ? filters : `${filters}\ncontents=${search.contents};${search.maxCharsPerResult}`);
    const keys = cacheKeys(digest, planned.source === 'byok' ? { kind: 'account', accountId: ctx.scope.accountId } : SHARED_SCOPE);
    // A hit or joined search costs the model's cache price, never more than the attempt would cost from the provider (a BYOK fee can be lower).
    const priceMicros = Math.min(cachePriceMicros(model, this.cache.settings.pricePercent), planned.priceMicros);
    return new CachedAttempt(this.cache, call, keys, resultCap(model, search.maxResults), search.cacheMaxAgeS === null ? null : search.cacheMaxAgeS * 1000, priceMicros, search.cache === 'refresh');
  }
}

/**
 * One attempt with the cache in front of its provider call. Its lookup goes out when it is
 * opened, in the same flush as its admission (one round trip, as without a cache):
 * - a copy this gateway kept answers at once: the admission reserves the cache price and takes
 *   no provider lease;
 * - else the admission reserves the model's price and takes a provider lease beside the
 *   lookup, unless another attempt of this gateway is already on the entry (this one will most
 *   likely follow it): only a provider call uses the lease, a hit or a follower gives it back
 *   at once. A follower whose leader failed takes its lease then, before its own call.
 */
class CachedAttempt implements Answering, AnswerKeeper {
  readonly reserve: ReserveRequest;
  readonly lease: LeaseRequest | null;
  cheaper: ReserveRequest | null = null;
  /** Where this attempt's answer goes: the account's own entry for a BYOK attempt, else the shared one. */
  private readonly entry: string;
  /** What the lookup made of it, once it answered. */
  private found: LookupOutcome | Promise<LookupOutcome>;
  /** It counts among this gateway's attempts on the entry (it looked the entry up in Redis). */
  private readonly entered: boolean;
  /** Its lead was handed to a store (which replaces it with the answer, or gives it back). */
  private handedOver = false;

  constructor(
    private readonly cache: ResultCache,
    private readonly call: Callable,
    keys: CacheKeys,
    private readonly asked: number,
    private readonly maxAgeMs: number | null,
    private readonly priceMicros: Micros,
    refresh: boolean,
  ) {
    this.entry = keys.account ?? keys.shared;
    this.reserve = call;
    this.lease = call;
    this.entered = false;
    if (refresh) {
      this.found = REFRESH;
      return;
    }
    // The search's own entry first: a lead is taken there.
    const entries = keys.account === null ? [keys.shared] : [keys.account, keys.shared];
    const local = cache.lookupLocal(entries, asked, maxAgeMs);
    if (local !== null) {
      this.found = { kind: 'hit', answer: local };
      this.reserve = { index: call.index, amountMicros: priceMicros, claim: call.claim };
      this.lease = null;
      return;
    }
    this.entered = true;
    if (cache.enter(this.entry)) this.lease = null;
    this.found = cache.lookup(entries, asked, maxAgeMs, call.leaseId, true, call.planned.model.id);
  }

  get request(): AttemptRequest {
    return this.call;
  }

  ready(): Readiness | Promise<Readiness> {
    const found = this.found;
    return found instanceof Promise ? found.then((outcome) => this.decided(outcome)) : this.decided(found);
  }

  async answer(steps: SearchSteps, ctx: SearchContext, ops: MoneyOp[], leased: boolean, reservedMicros: Micros): Promise<AttemptResult> {
    const found = this.found instanceof Promise ? await this.found : this.found;
    switch (found.kind) {
      case 'hit':
        return this.served(steps, found.answer, 'hit', reservedMicros);
      case 'follow': {
        // A provider lease taken beside the lookup goes back now, not after the wait: a search
        // served another's answer holds no provider capacity.
        if (ops.length > 0) steps.money.giveBack(ctx.scope, ops.splice(0));
        const joined = await this.cache.join(this.entry, this.asked, this.maxAgeMs, this.call.timeoutMs);
        if (joined.kind === 'joined') return this.served(steps, joined.answer, 'joined', reservedMicros);
        // The leader failed, went away or ran past the provider timeout: this search calls the
        // provider itself (taking its lease now) and stores its answer.
        return this.call.call(steps, ctx, ops, false, this);
      }
      case 'lead':
      case 'miss':
        return this.call.call(steps, ctx, ops, leased, this);
    }
  }

  /** The provider answered: the answer is stored (replacing the lead, if this attempt holds it) and counted as a miss; its JSON is made once, for the store and the reply. */
  kept(request: AttemptRequest, results: readonly NormalizedResult[]): { readonly cache: AttemptCache; readonly results: AttemptResults } {
    const model = request.planned.model.id;
    this.cache.metrics?.counted(model, 'miss');
    const json = JSON.stringify(results);
    const leading = !(this.found instanceof Promise) && this.found.kind === 'lead';
    this.cache.store(this.entry, model, this.asked, results.length, json, leading ? request.leaseId : '');
    this.handedOver = leading;
    return { cache: CACHE_MISS, results: new ResultsJson(results.length, json) };
  }

  /**
   * The one place a lead goes back without an answer (the call failed, or did not run:
   * blocked, refused, a fault): the searches waiting for it each go on alone.
   */
  close(): void {
    if (this.entered) this.cache.leave(this.entry);
    if (this.handedOver) return;
    const found = this.found;
    const token = this.call.leaseId;
    if (found instanceof Promise) {
      // Closed before its lookup was read (the admission refused the search): a lead it took goes back once it is known.
      void found.then((outcome) => {
        if (outcome.kind === 'lead') this.cache.release(this.entry, token);
      });
    } else if (found.kind === 'lead') {
      this.cache.release(this.entry, token);
    }
  }

  /** How the lookup's outcome answers the attempt; a stored answer found in Redis could be admitted for its cache price. */
  private decided(outcome: LookupOutcome): Readiness {
    this.found = outcome;
    switch (outcome.kind) {
      case 'hit':
        if (this.reserve === this.call) this.cheaper = { index: this.call.index, amountMicros: this.priceMicros };
        return 'answers';
      case 'follow':
        return 'answers';
      case 'lead':
      case 'miss':
        return 'calls';
    }
  }

  /** A stored answer (a hit's, or the leader's for a joined search) as the attempt's success at the cache price. */
  private served(steps: SearchSteps, answer: CachedAnswer, status: 'hit' | 'joined', reservedMicros: Micros): AttemptResult {
    const { planned } = this.call;
    const results = answer.count > this.asked ? firstResults(answer, this.asked) : new ResultsJson(answer.count, answer.json);
    this.cache.metrics?.counted(planned.model.id, status);
    const full = chargeOf(planned, results.length, steps.settings);
    return {
      status: 'success', model: planned.model, source: planned.source, results, reservedMicros, chargedMicros: this.priceMicros,
      cache: { status, ageS: answer.ageS, savedMicros: Math.max(0, full - this.priceMicros) },
    };
  }
}

/** An entry holding more results than asked: its first `asked` (the one case a stored text is parsed). */
function firstResults(answer: CachedAnswer, asked: number): AttemptResults {
  const all = JSON.parse(answer.json) as NormalizedResult[];
  return all.slice(0, asked);
}

/** A search that asked for no cache, on a deployment with one: its provider call, its answer counted as `off`. */
class Uncached implements Answering {
  readonly cheaper = null;

  constructor(private readonly call: Callable, private readonly keeper: AnswerKeeper) {}

  get request(): AttemptRequest {
    return this.call;
  }

  get reserve(): ReserveRequest {
    return this.call;
  }

  get lease(): LeaseRequest {
    return this.call;
  }

  ready(): Readiness {
    return 'calls';
  }

  answer(steps: SearchSteps, ctx: SearchContext, ops: MoneyOp[], leased: boolean): Promise<AttemptResult> {
    return this.call.call(steps, ctx, ops, leased, this.keeper);
  }

  close(): void {}
}
