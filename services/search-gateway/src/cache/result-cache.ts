import type { Logger } from 'pino';
import type { CacheMetrics } from './cache.metrics';
import type { CacheRedis } from './cache.redis';
import { ALONE, Coalescing } from './coalescing';
import type { JoinOutcome } from './coalescing';
import { decodeEntry, entryValue, isLead, leadValue, servingEntry } from './entry-codec';
import type { CachedAnswer } from './entry-codec';
import { LocalCopies } from './local-copies';

export type { CachedAnswer } from './entry-codec';
export { entryValue } from './entry-codec';
export type { JoinOutcome } from './coalescing';

/** The deployment's cache settings (docs/operations.md, the result cache). */
export interface CacheSettings {
  /** CACHE_PRICE_PERCENT: a hit or joined search costs this percentage of the model's base price. */
  readonly pricePercent: number;
  /** How long an entry of each model lives (CACHE_TTL_S, with CACHE_TTL_BY_MODEL's exceptions), in ms. */
  readonly ttlMs: (modelId: string) => number;
  /** CACHE_MAX_ENTRY_BYTES: an answer larger than this is not stored. */
  readonly maxEntryBytes: number;
  /** How often a search waiting for an identical one in flight looks for its answer (ms). */
  readonly pollMs: number;
  /**
   * CACHE_LOCAL_TTL_MS: how long this process keeps a copy of an entry its lookup found in
   * Redis, answering the same lookup without Redis (0 or absent: never).
   */
  readonly localTtlMs?: number;
  /** CACHE_LOCAL_MAX_BYTES: the most those local copies hold (keys and results); the least recently used go first. */
  readonly localMaxBytes?: number;
}

/** What a lookup makes of a search's attempt. */
export type LookupOutcome =
  | { readonly kind: 'hit'; readonly answer: CachedAnswer }
  | { readonly kind: 'lead' }
  | { readonly kind: 'follow' }
  /** No entry, and no lead taken (only looked, or Redis did not answer). */
  | { readonly kind: 'miss' };

const MISS: LookupOutcome = { kind: 'miss' };
const LEAD: LookupOutcome = { kind: 'lead' };
const FOLLOW: LookupOutcome = { kind: 'follow' };

/** A failing cache Redis is logged at most this often. */
const LOG_EVERY_MS = 10_000;

/**
 * The shared result cache on Redis (docs/decisions/0023): its commands (lookup, store, the
 * lead's release, a waiting search's look) and their failures, with the parts it is made of:
 * the entry codec (entry-codec.ts), each gateway's own copies (local-copies.ts) and the
 * coalescing of identical searches in this process (coalescing.ts). The cache never fails a
 * search: a Redis error is a miss (logged, at most every 10 s), and a search whose leader's
 * answer does not come goes on alone.
 */
export class ResultCache {
  /**
   * Bytes (keys and values) this process stored, by the second their entries expire: the
   * bytes-held gauge without a record per entry (a gateway stores thousands a second). An
   * entry stored again before it expired counts twice until the first copy's second passes:
   * the gauge is an upper bound, as the sum over gateways already is.
   */
  private readonly held = new Map<number, number>();
  private lastLogMs = 0;
  private readonly local: LocalCopies;
  private readonly coalescing: Coalescing;
  private leadLifetimeMs = 20_000;

  constructor(
    private readonly redis: CacheRedis,
    readonly settings: CacheSettings,
    private readonly log: Logger,
    readonly metrics: CacheMetrics | null = null,
    private readonly clock: () => number = Date.now,
  ) {
    this.local = new LocalCopies({ ttlMs: settings.localTtlMs ?? 0, maxBytes: settings.localMaxBytes ?? 0 });
    this.coalescing = new Coalescing((entry, asked, maxAgeMs) => this.peek(entry, asked, maxAgeMs), settings.pollMs, clock);
    metrics?.watchBytes(() => this.bytesHeld());
    metrics?.watchLocalBytes(() => this.local.bytes);
  }

  /**
   * Looks up `entries` (in order; the first is the search's own, where its answer goes) for an
   * answer of at least `asked` results at most `maxAgeMs` old (null: any age); without one,
   * takes the lead of identical searches on the own entry (`lead`: its value is `~<token>`
   * until the answer or release replaces it) or finds another search leading there
   * (`follow`). `lead: false` only looks. With `modelId`, a hit on one entry is kept as this
   * process's copy.
   */
  lookup(entries: readonly string[], asked: number, maxAgeMs: number | null, token: string, lead: boolean, modelId?: string): Promise<LookupOutcome> {
    const [own] = entries;
    if (own === undefined) return Promise.resolve(MISS);
    if (entries.length > 1) return this.lookupScript(entries, asked, maxAgeMs, token, lead);
    // One promise step after the batch's reply (every search's first attempt comes through here).
    const asking = lead ? this.redis.command('set', [own, leadValue(token), 'NX', 'PX', this.leadTtlMs, 'GET']) : this.redis.command('get', [own]);
    return this.guarded('lookup', asking, (value) => this.found(own, value, asked, maxAgeMs, lead, modelId), MISS);
  }

  /**
   * The first of `entries` whose copy this process kept (a lookup found it in Redis in the last
   * CACHE_LOCAL_TTL_MS, within its model's TTL) that serves `asked` results at most `maxAgeMs`
   * old (null: any age): a hit answered without Redis. Null: look up in Redis.
   */
  lookupLocal(entries: readonly string[], asked: number, maxAgeMs: number | null): CachedAnswer | null {
    const answer = this.local.find(entries, asked, maxAgeMs, this.clock());
    if (answer !== null) this.metrics?.localHit();
    return answer;
  }

  /** An attempt of this process looks up `entry`: true when another is already on it (coalescing.ts). Matched by one `leave`. */
  enter(entry: string): boolean {
    return this.coalescing.enter(entry);
  }

  leave(entry: string): void {
    this.coalescing.leave(entry);
  }

  /**
   * Waits for the answer of the search leading on `entry`: `joined` with it once stored,
   * `alone` when the lead is gone without one that serves this search or `timeoutMs` passed.
   */
  join(entry: string, asked: number, maxAgeMs: number | null, timeoutMs: number): Promise<JoinOutcome> {
    return this.coalescing.join(entry, asked, maxAgeMs, timeoutMs);
  }

  /**
   * Stores a complete, successful answer of `asked` results under `entry` for the model's
   * TTL; it replaces the lead there, if any (whoever held it: the answer serves the searches
   * waiting for it as well as the leader's would). Not awaited by the search.
   * `json`: the results as a JSON array of `count` results (made once, for the store and the reply).
   * `token`: the lead this search holds on `entry` ('' when none): an answer too large to store
   * gives it back, so the store always ends the lead it was handed.
   */
  store(entry: string, modelId: string, asked: number, count: number, json: string, token: string): void {
    // The value is measured once (for the size limit, the RESP length and the bytes-held
    // gauge) and sent as text in the batch's one write: no buffer of its own (decision 0023).
    const value = entryValue(asked, this.clock(), count, json);
    const bytes = value.byteLength;
    if (bytes > this.settings.maxEntryBytes) {
      this.metrics?.oversized();
      if (token !== '') this.release(entry, token);
      return;
    }
    const ttlMs = this.settings.ttlMs(modelId);
    // A copy this process kept of the entry's previous answer (a refresh replaces it) is dropped.
    this.local.drop(entry);
    this.redis.command('set', [entry, value, 'PX', ttlMs]).then(
      () => {
        const second = Math.ceil((this.clock() + ttlMs) / 1000);
        this.held.set(second, (this.held.get(second) ?? 0) + entry.length + bytes);
      },
      (error: unknown) => this.failed('store', error),
    );
  }

  /** Gives back the lead `token` holds on `entry` without an answer: whoever waits for it goes on alone. Not awaited. */
  release(entry: string, token: string): void {
    this.redis.run('svcCacheRelease', [entry], [leadValue(token)]).catch((error: unknown) => this.failed('release', error));
  }

  /** The size of the entries this process stored that are still live (keys and values, bytes). */
  bytesHeld(): number {
    const now = this.clock() / 1000;
    let sum = 0;
    for (const [second, bytes] of this.held) {
      if (second <= now) this.held.delete(second);
      else sum += bytes;
    }
    return sum;
  }

  /** A lead lives as long as a provider call may, plus a margin: a crashed leader's expires on its own. */
  get leadTtlMs(): number {
    return this.leadLifetimeMs;
  }

  /** Set from the provider timeout (PROVIDER_TIMEOUT_MS + the lease margin). */
  useLeadLifetime(ms: number): void {
    this.leadLifetimeMs = ms;
  }

  /** What the lookup of one entry makes of its value: nothing (lead or miss), a lead (follow or miss), or an answer. */
  private found(own: string, value: unknown, asked: number, maxAgeMs: number | null, lead: boolean, modelId: string | undefined): LookupOutcome {
    if (typeof value !== 'string') return lead ? LEAD : MISS;
    if (isLead(value)) return lead ? FOLLOW : MISS;
    const now = this.clock();
    const decoded = servingEntry(value, asked, maxAgeMs, now);
    if (decoded === null) return MISS;
    if (modelId !== undefined) this.local.keep(own, decoded, this.settings.ttlMs(modelId), now);
    return { kind: 'hit', answer: decoded.answer };
  }

  /** A lookup of two entries (a BYOK search's own and the shared one): one script reads both and takes the lead. */
  private lookupScript(entries: readonly string[], asked: number, maxAgeMs: number | null, token: string, lead: boolean): Promise<LookupOutcome> {
    const asking = this.redis.run('svcCacheLookup', entries, [asked, this.clock(), maxAgeMs ?? -1, this.leadTtlMs, leadValue(token), lead ? '1' : '0']);
    return this.guarded('lookup', asking, (reply) => this.scriptFound(reply), MISS);
  }

  /** What the lookup script answered: `{'hit', value}`, `{'lead'}`, `{'follow'}` or `{'miss'}`. */
  private scriptFound(reply: unknown): LookupOutcome {
    if (!Array.isArray(reply)) return MISS;
    const [kind, value] = reply as [unknown, unknown];
    if (kind === 'hit' && typeof value === 'string') {
      // Not kept as a local copy: the reply does not say which of the two entries answered.
      const decoded = decodeEntry(value, this.clock());
      return decoded === null ? MISS : { kind: 'hit', answer: decoded.answer };
    }
    return kind === 'lead' ? LEAD : kind === 'follow' ? FOLLOW : MISS;
  }

  /**
   * A waiting search's look at the entry: `joined` with an answer that serves it (the leader's,
   * or one another search stored meanwhile), `alone` with none or one that does not serve it
   * (or Redis failing), null while a search still leads.
   */
  private peek(entry: string, asked: number, maxAgeMs: number | null): Promise<JoinOutcome | null> {
    return this.guarded('join', this.redis.command('get', [entry]), (value): JoinOutcome | null => {
      if (typeof value !== 'string') return ALONE;
      if (isLead(value)) return null;
      const decoded = servingEntry(value, asked, maxAgeMs, this.clock());
      return decoded === null ? ALONE : { kind: 'joined', answer: decoded.answer };
    }, ALONE);
  }

  /** `read` of what Redis answered; `fallback` when it failed (counted and logged as `what`): the cache never fails a search. */
  private guarded<T>(what: string, pending: Promise<unknown>, read: (reply: unknown) => T, fallback: T): Promise<T> {
    return pending.then(read, (error: unknown) => {
      this.failed(what, error);
      return fallback;
    });
  }

  private failed(what: string, error: unknown): void {
    this.metrics?.error(what);
    const now = this.clock();
    if (now - this.lastLogMs < LOG_EVERY_MS) return;
    this.lastLogMs = now;
    this.log.warn({ err: error instanceof Error ? error.message : String(error), op: what }, 'result cache: redis failed; searches go to the provider');
  }
}
