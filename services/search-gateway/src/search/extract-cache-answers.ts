import { byokFeeMicros, extractCachePriceMicros, LIMITS } from '@svc/contracts';
import type { Micros } from '@svc/money';
import { cacheDigest, cacheKeys, SHARED_SCOPE } from '../cache/cache.key';
import type { CachedAnswer, LookupOutcome, ResultCache } from '../cache/result-cache';
import type { LeaseRequest, MoneyOp, ReserveRequest } from '../money/money.ops';
import { cutText } from '../providers';
import type { FetchedPage } from '../providers';
import type { ExtractRequest } from './extract.schema';
import type { AttemptResult, ExtractedPage } from './search.outcome';
import { ExtractCall } from './steps/extract';
import type { ExtractContext, ExtractSteps, ServedPages } from './steps/extract';
import { DEFAULT_BYOK_FEE_PERCENT } from './steps/price';
import type { AnswerSource, Answering, AttemptRequest, Callable, Readiness } from './steps/search-steps';
import type { ExtractModelSpec } from '@svc/contracts';

/** A lookup an extract attempt does not make (cache `refresh`): every URL goes to the provider, its page is stored. */
const REFRESH: LookupOutcome = Object.freeze({ kind: 'miss' });

/** A page as its cache entry holds it (the entry's results: a JSON array of one). */
interface StoredPage {
  readonly title: string | null;
  readonly text: string;
  readonly published_at: string | null;
  readonly truncated: boolean;
}

/**
 * The result cache as an answer source of extracts (docs/decisions/0058): an entry per URL and
 * model, keyed by the model, the URL in its normal form (what the provider receives), the format
 * and the query. In front of each attempt it looks up the attempt's URLs (in the flush of its
 * admission, as a search's lookup); the pages it finds are served at the model's cache price per
 * URL, and the attempt's call fetches only the others, whose pages are stored. An attempt whose
 * every URL was found calls no provider and holds no provider lease. The statuses and rules are a
 * search's (`default`, `refresh`, `off`; cache_max_age_s; an account's own key has entries of its
 * own), but for one: extracts are not coalesced (no lead is taken, nothing is `joined`).
 */
export class ExtractCacheAnswers implements AnswerSource<ExtractRequest> {
  constructor(private readonly cache: ResultCache) {}

  open(steps: ExtractSteps, ctx: ExtractContext, call: Callable<ExtractRequest>): Answering<ExtractRequest> {
    const request = ctx.call.request;
    // Every extract attempt is an ExtractCall; `off` asks for no cache (its pages are shown so).
    if (request.cache === 'off' || !(call instanceof ExtractCall)) return call;
    const { planned } = call;
    const { model } = planned;
    const percent = this.cache.settings.pricePercent;
    const perUrl = planned.source === 'byok' ? byokFeeMicros(model.perUrlMicros, steps.settings.byokFeePercent ?? DEFAULT_BYOK_FEE_PERCENT) : model.perUrlMicros;
    // A page served from the cache costs the model's cache price per URL, never more than the same URL from the provider.
    const hitMicros = Math.min(extractCachePriceMicros(model, percent), perUrl);
    const scope = planned.source === 'byok' ? { kind: 'account' as const, accountId: ctx.scope.accountId } : SHARED_SCOPE;
    const entries = call.urls.map((url) => {
      const keys = cacheKeys(cacheDigest(model.id, url, pageKeyPart(request)), scope);
      return keys.account === null ? [keys.shared] : [keys.account, keys.shared];
    });
    return new CachedPages(this.cache, call, model, entries, request, hitMicros, Math.max(0, perUrl - hitMicros));
  }
}

/** The part of a page's key besides the model and the URL: what the page was asked as (kept apart from every search's key). */
function pageKeyPart(request: ExtractRequest): string {
  return `extract\nformat=${request.format}\nquery=${request.query ?? ''}`;
}

/** One extract attempt with the cache in front of its call. */
class CachedPages implements Answering<ExtractRequest> {
  readonly reserve: ReserveRequest;
  readonly lease: LeaseRequest | null;
  cheaper: ReserveRequest | null = null;
  /** The lookup of each URL (in the call's order): pending, then what it found. */
  private found: (LookupOutcome | Promise<LookupOutcome>)[];
  private readonly maxAgeMs: number | null;

  constructor(
    private readonly cache: ResultCache,
    private readonly call: ExtractCall,
    private readonly model: ExtractModelSpec,
    private readonly entries: readonly (readonly string[])[],
    private readonly extract: ExtractRequest,
    private readonly hitMicros: Micros,
    private readonly savedPerHit: Micros,
  ) {
    this.reserve = call;
    this.lease = call;
    this.maxAgeMs = extract.cacheMaxAgeS === null ? null : extract.cacheMaxAgeS * 1000;
    if (extract.cache === 'refresh') {
      this.found = entries.map(() => REFRESH);
      return;
    }
    const asked = extract.maxCharsPerUrl;
    let local = 0;
    this.found = entries.map((keys) => {
      const copy = cache.lookupLocal(keys, asked, this.maxAgeMs);
      if (copy !== null) {
        local++;
        return { kind: 'hit', answer: copy };
      }
      return cache.lookup(keys, asked, this.maxAgeMs, call.leaseId, false, model.id);
    });
    if (local === entries.length) {
      // Every page is a copy this gateway kept: admitted at the cache price, no provider lease.
      this.reserve = { index: call.index, amountMicros: this.hitsCharge(local), claim: call.claim };
      this.lease = null;
    }
  }

  get request(): AttemptRequest<ExtractModelSpec> {
    return this.call;
  }

  ready(): Readiness | Promise<Readiness> {
    return this.found.some((outcome) => outcome instanceof Promise) ? Promise.all(this.found).then((found) => this.decided(found)) : this.decided(this.found as LookupOutcome[]);
  }

  async answer(steps: ExtractSteps, ctx: ExtractContext, ops: MoneyOp[], leased: boolean): Promise<AttemptResult> {
    const found = await Promise.all(this.found);
    const served: ExtractedPage[] = [];
    const missing: string[] = [];
    found.forEach((outcome, i) => {
      const url = this.call.urls[i] as string;
      const page = outcome.kind === 'hit' ? this.pageOf(url, outcome.answer) : null;
      if (page === null) missing.push(url);
      else served.push(page);
    });
    for (let i = 0; i < served.length; i++) this.cache.metrics?.counted(this.model.id, 'hit');
    const pages: ServedPages = {
      pages: served,
      chargedMicros: this.hitsCharge(served.length),
      savedMicros: served.length * this.savedPerHit,
      store: (page) => this.store(page),
    };
    if (missing.length === 0) return this.call.succeeded(pages, [], 0, [], steps.settings);
    return this.call.fetch(steps, ctx, ops, leased, missing, pages);
  }

  /** Nothing to give back: no lead is taken for an extract's pages. */
  close(): void {}

  /** What the lookups found: every page (a call is not needed: the cache price, no lease), or a call for the rest. */
  private decided(found: readonly LookupOutcome[]): Readiness {
    this.found = [...found];
    const hits = found.filter((outcome) => outcome.kind === 'hit').length;
    if (hits < found.length) return 'calls';
    if (this.reserve === this.call) this.cheaper = { index: this.call.index, amountMicros: this.hitsCharge(hits) };
    return 'answers';
  }

  private hitsCharge(hits: number): Micros {
    return hits * this.hitMicros;
  }

  /** A stored page as the attempt's result holds it, cut to this request's max_chars_per_url; null when the entry is not a page. */
  private pageOf(url: string, answer: CachedAnswer): ExtractedPage | null {
    let stored: unknown;
    try {
      stored = (JSON.parse(answer.json) as unknown[])[0];
    } catch {
      return null;
    }
    if (!isStoredPage(stored)) return null;
    const text = cutText(stored.text, this.extract.maxCharsPerUrl);
    return {
      url, title: stored.title, text, published_at: stored.published_at, truncated: stored.truncated || text.length < stored.text.length,
      cache: { status: 'hit', ageS: answer.ageS },
    };
  }

  /**
   * Stores a page the call fetched, for its model's TTL, in this attempt's own entry (the
   * account's for a BYOK attempt). A page the cap did not cut serves any later cap.
   */
  private store(page: FetchedPage): void {
    const index = this.call.urls.indexOf(page.url);
    const keys = this.entries[index];
    if (keys === undefined || keys[0] === undefined) return;
    this.cache.metrics?.counted(this.model.id, 'miss');
    const stored: StoredPage = { title: page.title, text: page.text, published_at: page.published_at, truncated: page.truncated };
    const asked = page.truncated ? this.extract.maxCharsPerUrl : LIMITS.extractCharsPerUrl.max;
    this.cache.store(keys[0], this.model.id, asked, 1, JSON.stringify([stored]), '');
  }
}

function isStoredPage(value: unknown): value is StoredPage {
  if (typeof value !== 'object' || value === null) return false;
  const page = value as Record<string, unknown>;
  return (page.title === null || typeof page.title === 'string') && typeof page.text === 'string'
    && (page.published_at === null || typeof page.published_at === 'string') && typeof page.truncated === 'boolean';
}
