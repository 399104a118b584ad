import type { Logger } from 'pino';
import type { CacheMetrics } from './cache.metrics';
import type { CacheRedis } from './cache.redis';
import type { MeasuredText } from '../redis/resp-connection';
import { LEAD_MARK } from './cache.scripts';

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
  /** CACHE_LOCAL_MAX_BYTES: the most those local copies hold (keys and results); the oldest go first. */
  readonly localMaxBytes?: number;
}

/** An entry as Redis holds it, decoded: the answer, the result count it was asked for, when it was stored (Unix ms). */
interface DecodedEntry {
  readonly answer: CachedAnswer;
  readonly asked: number;
  readonly storedAt: number;
}

/** An entry's copy this process keeps for CACHE_LOCAL_TTL_MS: what a lookup needs without Redis. */
interface LocalEntry {
  readonly asked: number;
  readonly storedAt: number;
  readonly count: number;
  readonly json: string;
  /** When this process stops using its copy: CACHE_LOCAL_TTL_MS after it was read, never past the entry's TTL. */
  readonly until: number;
  readonly bytes: number;
}

/** A stored answer as a lookup finds it: its results as the JSON text stored (never parsed here). */
export interface CachedAnswer {
  /** How many results the text holds. */
  readonly count: number;
  /** The results, a JSON array. */
  readonly json: string;
  /** Whole seconds since it was stored (never negative). */
  readonly ageS: number;
}

/**
 * An answer's value in Redis, `<asked>|<stored at>|<count>|<results JSON>`, with its UTF-8
 * length. The prefix is ASCII (digits and bars), so only the results (already one flat string)
 * are measured. Measuring the joined text first copied it into a new flat string of its own,
 * about 5 KB a miss; the joined measure took about 1 µs more (`npm run bench -- cache-key`).
 */
export function entryValue(asked: number, storedAt: number, count: number, json: string): MeasuredText {
  const prefix = `${asked}|${storedAt}|${count}|`;
  return { text: prefix + json, byteLength: prefix.length + Buffer.byteLength(json) };
}

/** What a lookup makes of a search's attempt. */
export type LookupOutcome =
  | { readonly kind: 'hit'; readonly answer: CachedAnswer }
  | { readonly kind: 'lead' }
  | { readonly kind: 'follow' }
  /** No entry, and no lead taken (only looked, or Redis did not answer). */
  | { readonly kind: 'miss' };

/** What a search waiting for an identical one finds. */
export type JoinOutcome = { readonly kind: 'joined'; readonly answer: CachedAnswer } | { readonly kind: 'alone' };

const MISS: LookupOutcome = { kind: 'miss' };
const LEAD: LookupOutcome = { kind: 'lead' };
const FOLLOW: LookupOutcome = { kind: 'follow' };
const ALONE: JoinOutcome = { kind: 'alone' };

/** A failing cache Redis is logged at most this often. */
const LOG_EVERY_MS = 10_000;

/**
 * The shared result cache and the coalescing of identical searches in flight, on Redis
 * (docs/decisions/0023). The cache never fails a search: a Redis error is a miss (logged,
 * at most every 10 s), and a search whose leader's answer does not come goes on alone.
 */
export class ResultCache {
  /** Searches of this process waiting for the same lead (entry, result count and age) share one poll. */
  private readonly waits = new Map<string, Promise<JoinOutcome>>();
  /**
   * Bytes (keys and values) this process stored, by the second their entries expire: the
   * bytes-held gauge without a record per entry (a gateway stores thousands a second). An
   * entry stored again before it expired counts twice until the first copy's second passes:
   * the gauge is an upper bound, as the sum over gateways already is.
   */
  private readonly held = new Map<number, number>();
  private lastLogMs = 0;
  /** Copies of entries read in the last CACHE_LOCAL_TTL_MS, oldest first (Map order), and their size. */
  private readonly local = new Map<string, LocalEntry>();
  private localBytes = 0;

  constructor(
    private readonly redis: CacheRedis,
    readonly settings: CacheSettings,
    private readonly log: Logger,
    readonly metrics: CacheMetrics | null = null,
    private readonly clock: () => number = Date.now,
  ) {
    metrics?.watchBytes(() => this.bytesHeld());
    metrics?.watchLocalBytes(() => this.localBytes);
  }

  /**
   * Looks up `entries` (in order; the first is the search's own, where its answer goes) for an
   * answer of at least `asked` results at most `maxAgeMs` old (null: any age); without one,
   * takes the lead of identical searches on the own entry (`lead`: its value is `~<token>`
   * until the answer or release replaces it) or finds another search leading there
   * (`follow`). `lead: false` only looks.
   */
  lookup(entries: readonly string[], asked: number, maxAgeMs: number | null, token: string, lead: boolean, modelId?: string): Promise<LookupOutcome> {
    const [own] = entries;
    if (own === undefined) return Promise.resolve(MISS);
    if (entries.length > 1) return this.lookupScript(entries, asked, maxAgeMs, token, lead);
    // One promise step after the batch's reply (every search's first attempt comes through here).
    const asking = lead ? this.redis.command('set', [own, LEAD_MARK + token, 'NX', 'PX', this.leadTtlMs, 'GET']) : this.redis.command('get', [own]);
    return this.guarded('lookup', asking, (value) => this.found(own, value, asked, maxAgeMs, lead, modelId), MISS);
  }

  /** What the lookup of one entry makes of its value: nothing (lead or miss), a lead (follow or miss), or an answer. */
  private found(own: string, value: unknown, asked: number, maxAgeMs: number | null, lead: boolean, modelId: string | undefined): LookupOutcome {
    if (typeof value !== 'string') return lead ? LEAD : MISS;
    if (value.startsWith(LEAD_MARK)) return lead ? FOLLOW : MISS;
    const decoded = this.serving(value, asked, maxAgeMs);
    if (decoded === null) return MISS;
    if (modelId !== undefined) this.keepLocal(own, decoded, modelId);
    return { kind: 'hit', answer: decoded.answer };
  }

  /** A lookup of two entries (a BYOK search's own and the shared one): one script reads both and takes the lead. */
  private lookupScript(entries: readonly string[], asked: number, maxAgeMs: number | null, token: string, lead: boolean): Promise<LookupOutcome> {
    const asking = this.redis.run('svcCacheLookup', entries, [asked, this.clock(), maxAgeMs ?? -1, this.leadTtlMs, LEAD_MARK + token, lead ? '1' : '0']);
    return this.guarded('lookup', asking, (reply) => this.scriptFound(reply), MISS);
  }

  /** What the lookup script answered: `{'hit', value}`, `{'lead'}`, `{'follow'}` or `{'miss'}`. */
  private scriptFound(reply: unknown): LookupOutcome {
    if (!Array.isArray(reply)) return MISS;
    const [kind, value] = reply as [unknown, unknown];
    if (kind === 'hit' && typeof value === 'string') {
      // Not kept as a local copy: the reply does not say which of the two entries answered.
      const decoded = this.decode(value);
      return decoded === null ? MISS : { kind: 'hit', answer: decoded.answer };
    }
    return kind === 'lead' ? LEAD : kind === 'follow' ? FOLLOW : MISS;
  }

  /**
   * The first of `entries` whose copy this process kept (a lookup found it in Redis in the last
   * CACHE_LOCAL_TTL_MS, within its model's TTL) that serves `asked` results at most `maxAgeMs`
   * old (null: any age): a hit answered without Redis. Null: look up in Redis.
   */
  lookupLocal(entries: readonly string[], asked: number, maxAgeMs: number | null): CachedAnswer | null {
    if (this.local.size === 0) return null;
    const now = this.clock();
    for (const key of entries) {
      const kept = this.local.get(key);
      if (kept === undefined) continue;
      if (now >= kept.until) {
        this.forgetLocal(key, kept);
        continue;
      }
      if (kept.asked < asked || (maxAgeMs !== null && now - kept.storedAt > maxAgeMs)) continue;
      this.metrics?.localHit();
      return { count: kept.count, json: kept.json, ageS: Math.max(0, Math.floor((now - kept.storedAt) / 1000)) };
    }
    return null;
  }

  /**
   * Waits for the answer of the search leading on `entry`: `joined` with it once stored,
   * `alone` when the lead is gone without one that serves this search (the leading call
   * failed, or its gateway died and the lead expired) or `timeoutMs` passed.
   */
  join(entry: string, asked: number, maxAgeMs: number | null, timeoutMs: number): Promise<JoinOutcome> {
    const id = `${entry}\n${asked}\n${maxAgeMs ?? -1}`;
    const running = this.waits.get(id);
    if (running !== undefined) return running;
    const wait = this.poll(entry, asked, maxAgeMs, this.clock() + timeoutMs).finally(() => this.waits.delete(id));
    this.waits.set(id, wait);
    return wait;
  }

  /**
   * Stores a complete, successful answer of `asked` results under `entry` for the model's
   * TTL; it replaces the lead there, if any (whoever held it: the answer serves the searches
   * waiting for it as well as the leader's would). Not awaited by the search.
   * `json`: the results as a JSON array of `count` results (made once, for the store and the reply).
   * `token`: the lead this search holds on `entry` ('' when none), given back when the answer is too large to store.
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
    const previous = this.local.size === 0 ? undefined : this.local.get(entry);
    if (previous !== undefined) this.forgetLocal(entry, previous);
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
    this.redis.run('svcCacheRelease', [entry], [LEAD_MARK + token]).catch((error: unknown) => this.failed('release', error));
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

  private leadLifetimeMs = 20_000;

  /** Set from the provider timeout (PROVIDER_TIMEOUT_MS + the lease margin). */
  useLeadLifetime(ms: number): void {
    this.leadLifetimeMs = ms;
  }

  private async poll(entry: string, asked: number, maxAgeMs: number | null, deadlineMs: number): Promise<JoinOutcome> {
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, this.settings.pollMs));
      const outcome = await this.guarded('join', this.redis.command('get', [entry]), (value) => this.peeked(value, asked, maxAgeMs), ALONE);
      if (outcome !== null) return outcome;
      if (this.clock() >= deadlineMs) return ALONE;
    }
  }

  /**
   * What a waiting search makes of the entry's value: `joined` with an answer that serves it (the
   * leader's, or one another search stored meanwhile), `alone` with none or one that does not
   * serve it, null while a search still leads.
   */
  private peeked(value: unknown, asked: number, maxAgeMs: number | null): JoinOutcome | null {
    if (typeof value !== 'string') return ALONE;
    if (value.startsWith(LEAD_MARK)) return null;
    const decoded = this.serving(value, asked, maxAgeMs);
    return decoded === null ? ALONE : { kind: 'joined', answer: decoded.answer };
  }

  /** An entry's value decoded when it serves `asked` results at most `maxAgeMs` old (null: any age); else null. */
  private serving(value: string, asked: number, maxAgeMs: number | null): DecodedEntry | null {
    const decoded = this.decode(value);
    if (decoded === null || !(decoded.asked >= asked)) return null;
    if (maxAgeMs !== null && !(this.clock() - decoded.storedAt <= maxAgeMs)) return null;
    return decoded;
  }

  /**
   * `<asked>|<stored at>|<count>|<results JSON>` (the results are not parsed: a hit's reply
   * carries the text). An entry of the first format, `<asked>|<stored at>|<results JSON>`
   * (a gateway of an earlier build may still be storing them), is parsed for its count.
   */
  private decode(value: string): DecodedEntry | null {
    const first = value.indexOf('|');
    const second = value.indexOf('|', first + 1);
    if (first < 0 || second < 0) return null;
    const asked = Number(value.slice(0, first));
    const storedAt = Number(value.slice(first + 1, second));
    const ageS = Math.max(0, Math.floor((this.clock() - storedAt) / 1000));
    if (value.charCodeAt(second + 1) === 0x5b /* [ */) {
      try {
        const json = value.slice(second + 1);
        const results = JSON.parse(json) as unknown;
        return Array.isArray(results) ? { answer: { count: results.length, json, ageS }, asked, storedAt } : null;
      } catch {
        return null;
      }
    }
    const third = value.indexOf('|', second + 1);
    const count = Number(value.slice(second + 1, third));
    if (third < 0 || !Number.isSafeInteger(count) || count < 0 || value.charCodeAt(third + 1) !== 0x5b) return null;
    return { answer: { count, json: value.slice(third + 1), ageS }, asked, storedAt };
  }

  /** Keeps an entry's copy for CACHE_LOCAL_TTL_MS (never past its TTL), within CACHE_LOCAL_MAX_BYTES: the oldest copies go first. */
  private keepLocal(key: string, { answer, asked, storedAt }: DecodedEntry, modelId: string): void {
    const localTtlMs = this.settings.localTtlMs ?? 0;
    const maxBytes = this.settings.localMaxBytes ?? 0;
    const bytes = key.length + answer.json.length;
    if (localTtlMs <= 0 || bytes > maxBytes || !Number.isSafeInteger(asked) || !Number.isSafeInteger(storedAt)) return;
    const previous = this.local.get(key);
    if (previous !== undefined) this.forgetLocal(key, previous);
    const until = Math.min(this.clock() + localTtlMs, storedAt + this.settings.ttlMs(modelId));
    const kept: LocalEntry = { asked, storedAt, count: answer.count, json: answer.json, until, bytes };
    this.local.set(key, kept);
    this.localBytes += bytes;
    for (const [oldest, entry] of this.local) {
      if (this.localBytes <= maxBytes) break;
      this.forgetLocal(oldest, entry);
    }
  }

  private forgetLocal(key: string, entry: LocalEntry): void {
    this.local.delete(key);
    this.localBytes -= entry.bytes;
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
