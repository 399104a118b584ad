import { byokFeeMicros, extractCostMicros } from '@svc/contracts';
import type { CacheStatus, ExtractModelSpec, Provider } from '@svc/contracts';
import { describeError } from '@svc/errors';
import type { Micros } from '@svc/money';
import { CACHE_OFF } from '../../cache/cache.ticket';
import type { AttemptCache } from '../../cache/cache.ticket';
import type { Claim, LeaseRequest, MoneyOp, ReserveRequest } from '../../money/money.ops';
import type { ExtractOutcome, FetchedPage } from '../../providers';
import type { ExtractRequest } from '../extract.schema';
import type { AttemptResult, ExtractDetail, ExtractedPage } from '../search.outcome';
import type { OptionSkip } from './plan';
import { DEFAULT_BYOK_FEE_PERCENT } from './price';
import type { AnswerKeeper, AttemptRequest, Callable, PlannedAttempt, Readiness, SearchContext, SearchSettings, SearchSteps } from './search-steps';

/**
 * Extract on the attempt seam (docs/decisions/0042, 0058): a second kind of attempt beside a
 * search's provider call. Each attempt is one model called for the URLs no attempt before it
 * fetched (fallback per URL); it reserves what those URLs can cost at its model, is charged for
 * the pages that came back, and never for a URL that failed. The steps that admit, settle and
 * close are the search's.
 */

export type ExtractContext = SearchContext<ExtractRequest>;
export type ExtractSteps = SearchSteps<ExtractRequest>;
export type ExtractPlanned = PlannedAttempt<ExtractModelSpec>;

/** What a call for `urls` URLs costs on `planned`'s model: the provider price in whole blocks, or the BYOK fee of it. */
export function extractChargeOf(planned: ExtractPlanned, urls: number, settings: SearchSettings): Micros {
  const price = extractCostMicros(planned.model, urls);
  return planned.source === 'byok' ? byokFeeMicros(price, settings.byokFeePercent ?? DEFAULT_BYOK_FEE_PERCENT) : price;
}

/** The most an extract's attempt on `model` can cost, as planned: every URL of the request (before BYOK). */
export function extractPlanPrice(model: ExtractModelSpec, request: ExtractRequest): Micros {
  return extractCostMicros(model, request.urls.length);
}

/** The URLs of the request that no attempt so far fetched, in the order sent. */
export function missingUrls(request: ExtractRequest, attempts: readonly AttemptResult[]): readonly string[] {
  const fetched = new Set<string>();
  for (const attempt of attempts) {
    if (attempt.status !== 'success' || attempt.extract === undefined) continue;
    for (const page of attempt.results as readonly ExtractedPage[]) fetched.add(page.url);
  }
  return fetched.size === 0 ? request.urls : request.urls.filter((url) => !fetched.has(url));
}

/**
 * An extract's gate before its admission: the format, `query` and `max_age_s` the model cannot
 * honour (never dropped: the model is skipped, `unsupported option: <names>`).
 */
export function extractGate(planned: ExtractPlanned, request: ExtractRequest): OptionSkip | null {
  const { model } = planned;
  let missing: string[] | null = null;
  if (!model.supportedFormats.includes(request.format)) (missing ??= []).push(`format ${request.format}`);
  if (request.query !== null && !model.supportedOptions.includes('query')) (missing ??= []).push('query');
  if (request.maxAgeS !== null && !model.supportedOptions.includes('max_age_s')) (missing ??= []).push('max_age_s');
  return missing === null ? null : { reason: 'unsupported_option', options: missing };
}

/** What the result cache served of an attempt's URLs before its call (the call fetches the rest). */
export interface ServedPages {
  readonly pages: readonly ExtractedPage[];
  /** What the served pages cost (the cache price per URL, or the BYOK fee of it). */
  readonly chargedMicros: Micros;
  /** What they saved against the same URLs from the provider. */
  readonly savedMicros: Micros;
  /** Stores a page the call fetched (the cache's part of a miss); null: nothing stored (`off`). */
  readonly store: ((page: FetchedPage) => void) | null;
}

/** Nothing served from the cache, nothing stored: an extract without a cache (`off`). */
const NOTHING_SERVED: ServedPages = Object.freeze({ pages: [], chargedMicros: 0, savedMicros: 0, store: null });

/**
 * One extract attempt: the URLs still missing, sent to one model (the lease and reserve request
 * of its admission, its provider call's key and timeout). Without a cache it is the Answering
 * the steps run; the result cache (extract-cache-answers.ts) opens one in front of it that
 * serves some URLs and has it fetch the rest.
 */
export class ExtractCall implements Callable<ExtractRequest> {
  readonly provider: Provider;
  readonly leaseId: string;
  readonly cap: number;
  readonly lifetimeMs: number;
  readonly index: number;
  readonly amountMicros: Micros;
  readonly apiKey: string;
  readonly timeoutMs: number;

  constructor(readonly planned: ExtractPlanned, settings: SearchSettings, requestId: string, readonly claim: Claim | undefined, leftMs: number, readonly urls: readonly string[]) {
    const provider = planned.model.provider;
    this.provider = provider;
    this.leaseId = `${requestId}:${planned.index}`;
    this.cap = settings.maxInFlight[provider];
    this.lifetimeMs = settings.providerTimeoutMs + settings.leaseMarginMs;
    this.index = planned.index;
    // The most this call can cost: every missing URL at its model's price (never more than planned).
    this.amountMicros = extractChargeOf(planned, urls.length, settings);
    this.apiKey = planned.apiKey ?? '';
    this.timeoutMs = Math.min(settings.providerTimeoutMs, Math.floor(leftMs));
  }

  get request(): AttemptRequest<ExtractModelSpec> {
    return this;
  }

  get reserve(): ReserveRequest {
    return this;
  }

  get lease(): LeaseRequest {
    return this;
  }

  get cheaper(): null {
    return null;
  }

  ready(): Readiness {
    return 'calls';
  }

  answer(steps: ExtractSteps, ctx: ExtractContext, ops: MoneyOp[], leased: boolean): Promise<AttemptResult> {
    return this.fetch(steps, ctx, ops, leased, this.urls, NOTHING_SERVED);
  }

  /** A search's keeper has no part in an extract: the cache source calls `fetch`. */
  call(steps: ExtractSteps, ctx: ExtractContext, ops: MoneyOp[], leased: boolean, _keeper: AnswerKeeper | null): Promise<AttemptResult> {
    return this.fetch(steps, ctx, ops, leased, this.urls, NOTHING_SERVED);
  }

  close(): void {}

  /**
   * The provider call for `urls` (this attempt's URLs less those `served` from the cache), and
   * the attempt's result: `success` when any page came back (served or fetched), charged the
   * served pages and the fetched ones at the model's price, never more than the attempt
   * reserved; `error` otherwise, refunded in full, a timeout too (a URL that failed is never
   * charged). It queues the provider lease back and, on an error, the reservation.
   */
  async fetch(steps: ExtractSteps, ctx: ExtractContext, ops: MoneyOp[], leased: boolean, urls: readonly string[], served: ServedPages): Promise<AttemptResult> {
    const { planned, provider } = this;
    const { model, source } = planned;
    const { call } = ctx;
    if (!leased && !(await takeLease(steps, ctx, ops, this))) {
      ops.push({ kind: 'release', index: this.index, keepMicros: 0 });
      return { status: 'skipped', model, source, reason: 'capacity', priceMicros: this.amountMicros };
    }
    const extractor = steps.providers.extractor?.(provider);
    if (extractor === undefined) throw new Error(`no extract adapter for ${provider}`);
    const request = call.request;
    const { upstream } = call;
    const { health } = steps;
    const startedAt = performance.now();
    upstream?.begin(startedAt);
    let outcome: ExtractOutcome;
    try {
      outcome = await extractor.extract({
        urls, model, format: request.format, maxCharsPerUrl: request.maxCharsPerUrl, query: request.query, maxAgeS: request.maxAgeS,
        apiKey: this.apiKey, timeoutMs: this.timeoutMs,
      });
    } catch (error) {
      steps.log.error({ request_id: call.requestId, provider, err: describeError(error) }, 'extract adapter threw');
      outcome = { ok: false, kind: 'connection', error: 'provider call failed', status: null };
    }
    const endedAt = performance.now();
    upstream?.end(endedAt);
    ops.push({ kind: 'unlease', provider, leaseId: this.leaseId });
    const cut = !outcome.ok && outcome.kind === 'timeout' && this.timeoutMs < steps.settings.providerTimeoutMs;
    if (!cut) health?.record(provider, source, model.id, outcome.ok ? 'ok' : outcome.kind, endedAt - startedAt);
    if (!outcome.ok) {
      if (!cut) steps.metrics.countFailure(provider, outcome.kind);
      if (outcome.kind === 'bad_key' && source === 'platform') {
        steps.log.warn({ request_id: call.requestId, provider, status: outcome.status }, 'the platform key was rejected by the provider: replace it');
      }
      const failed = urls.map((url) => ({ url, error: outcome.error }));
      return this.ended(ops, served, failed, cut ? 'deadline' : outcome.kind, outcome.error, steps.settings);
    }
    const fetched = outcome.pages;
    if (served.store !== null) for (const page of fetched) served.store(page);
    if (fetched.length === 0) return this.ended(ops, served, outcome.failed, 'urls_failed', `${urls.length} of ${urls.length} URLs could not be fetched`, steps.settings);
    const status = served.store === null ? CACHE_OFF : MISSED;
    return this.succeeded(served, fetched.map((page) => pageOf(page, status)), fetched.length, outcome.failed, steps.settings);
  }

  /**
   * The attempt's success: the served and fetched pages in the order of its URLs, its charge
   * capped at its reservation (served pages never make an attempt dearer than the same URLs
   * from the provider). The settlement refunds the rest of the reservation.
   */
  succeeded(served: ServedPages, fetched: readonly ExtractedPage[], fetchedCount: number, failed: ExtractDetail['failed'], settings: SearchSettings): AttemptResult {
    const { planned } = this;
    const chargedMicros = Math.min(this.amountMicros, served.chargedMicros + extractChargeOf(planned, fetchedCount, settings));
    const order = new Map<string, number>();
    this.urls.forEach((url, i) => order.set(url, i));
    const pages = [...served.pages, ...fetched].sort((a, b) => (order.get(a.url) ?? 0) - (order.get(b.url) ?? 0));
    const cache: AttemptCache = fetchedCount > 0 ? (served.store === null ? CACHE_OFF : { status: 'miss', ageS: 0, savedMicros: served.savedMicros })
      : { status: 'hit', ageS: oldest(served.pages), savedMicros: served.savedMicros };
    return {
      status: 'success', model: planned.model, source: planned.source, results: pages, reservedMicros: this.amountMicros, chargedMicros, cache,
      extract: { urls: this.urls.length, failed },
    };
  }

  /** The call answered no page: served pages alone make a success, else the attempt is an error, refunded in full. */
  private ended(ops: MoneyOp[], served: ServedPages, failed: ExtractDetail['failed'], kind: Extract<AttemptResult, { status: 'error' }>['kind'], error: string, settings: SearchSettings): AttemptResult {
    if (served.pages.length > 0) return this.succeeded(served, [], 0, failed, settings);
    ops.push({ kind: 'release', index: this.index, keepMicros: 0 });
    const { planned } = this;
    return { status: 'error', model: planned.model, source: planned.source, kind, error, reservedMicros: this.amountMicros, chargedMicros: 0, extract: { urls: this.urls.length, failed } };
  }
}

const MISSED = Object.freeze({ status: 'miss' as const, ageS: 0 });

/** A fetched page as the attempt's result holds it. */
function pageOf(page: FetchedPage, cache: { readonly status: CacheStatus; readonly ageS: number }): ExtractedPage {
  return { url: page.url, title: page.title, text: page.text, published_at: page.published_at, truncated: page.truncated, cache };
}

/** The age of the oldest served page, in seconds. */
function oldest(pages: readonly ExtractedPage[]): number {
  let age = 0;
  for (const page of pages) age = Math.max(age, page.cache.ageS);
  return age;
}

/** The provider lease of an attempt admitted without one (a cache source that asked for none), in one round trip of its own. */
async function takeLease(steps: ExtractSteps, ctx: ExtractContext, ops: MoneyOp[], request: ExtractCall): Promise<boolean> {
  const leftover = ops.splice(0);
  try {
    return await steps.money.lease(ctx.scope, leftover, request, steps.settings.admission.leaseTtlMs);
  } catch (error) {
    ops.unshift(...leftover);
    steps.log.error({ request_id: ctx.call.requestId, provider: request.provider, err: describeError(error) }, 'provider lease failed; the attempt is skipped as at capacity');
    return false;
  }
}

/** An extract's attempt once it passed its gates: the missing URLs sent to its model. */
export function extractCall(planned: ExtractPlanned, settings: SearchSettings, ctx: ExtractContext, claim: Claim | undefined, leftMs: number, attempts: readonly AttemptResult[]): ExtractCall {
  return new ExtractCall(planned, settings, ctx.call.requestId, claim, leftMs, missingUrls(ctx.call.request, attempts));
}

/** An extract is done once no URL is missing. */
export function extractDone(ctx: ExtractContext, attempts: readonly AttemptResult[]): boolean {
  return missingUrls(ctx.call.request, attempts).length === 0;
}
