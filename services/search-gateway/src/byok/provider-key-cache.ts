import type { Provider } from '@svc/contracts';
import { decryptProviderKey } from '@svc/keys';
import type { KekRing } from '@svc/keys';
import type { Logger } from 'pino';
import type { ProviderKeySource } from './provider-key-source.grpc';

/** An account's usable provider keys (plaintext, in this process's memory only). */
export type ProviderKeySet = Readonly<Partial<Record<Provider, string>>>;

export const NO_PROVIDER_KEYS: ProviderKeySet = Object.freeze({});

export interface ProviderKeyCacheOptions {
  /** How long an account's set is used without asking again (KEY_CACHE_TTL_MS: within the propagation bound). */
  readonly ttlMs: number;
  /** How long a set may still be used when account-admin cannot be reached (KEY_PROPAGATION_MAX_MS). */
  readonly staleMaxMs: number;
  readonly maxEntries: number;
  /** After a failed fetch with nothing usable, the platform-only answer is kept this long (default 1 s). */
  readonly failureTtlMs?: number;
  readonly now?: () => number;
}

interface Entry {
  readonly keys: ProviderKeySet;
  readonly fetchedAtMs: number;
  readonly expiresAtMs: number;
}

/**
 * The gateway's copy of each account's provider keys. A search asks it for the account's
 * set before planning its attempts; a set is fetched from account-admin (envelopes over
 * gRPC, opened here with the KEK ring) at most once per `ttlMs` per account (concurrent
 * searches share one fetch), and dropped at once when a change message arrives or the
 * forwarded change's reply names the account. So a change applies at once on the gateway
 * that handled it, and within `ttlMs` plus one fetch everywhere else, also when a message is
 * lost (docs/propagation.md).
 *
 * Disabled (no ring): every account has no keys and nothing is fetched.
 */
export class ProviderKeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly fetching = new Map<string, Promise<ProviderKeySet>>();
  /** Grows on every invalidation: a fetch that started before one is not stored. */
  private generation = 0;
  private readonly now: () => number;

  constructor(
    private readonly source: ProviderKeySource,
    private readonly ring: KekRing | null,
    private readonly options: ProviderKeyCacheOptions,
    private readonly log: Logger,
  ) {
    this.now = options.now ?? Date.now;
  }

  get enabled(): boolean {
    return this.ring !== null;
  }

  /** The account's set: synchronously when a fresh copy is held, else a promise of it. */
  keysFor(accountId: string): ProviderKeySet | Promise<ProviderKeySet> {
    if (this.ring === null) return NO_PROVIDER_KEYS;
    const entry = this.entries.get(accountId);
    if (entry !== undefined && entry.expiresAtMs > this.now()) return entry.keys;
    const running = this.fetching.get(accountId);
    if (running !== undefined) return running;
    const fetch = this.fetch(accountId, this.ring, entry);
    this.fetching.set(accountId, fetch);
    return fetch;
  }

  invalidate(accountId: string): void {
    this.generation += 1;
    this.entries.delete(accountId);
    this.fetching.delete(accountId);
  }

  invalidateAll(): void {
    this.generation += 1;
    this.entries.clear();
    this.fetching.clear();
  }

  private async fetch(accountId: string, ring: KekRing, previous: Entry | undefined): Promise<ProviderKeySet> {
    const generation = this.generation;
    const startedAtMs = this.now();
    let keys: ProviderKeySet;
    let expiresAtMs: number;
    try {
      const envelopes = await this.source.envelopes(accountId);
      const opened: Partial<Record<Provider, string>> = {};
      for (const { provider, envelope } of envelopes) {
        try {
          opened[provider] = decryptProviderKey(ring, accountId, provider, envelope);
        } catch (error) {
          // The account's key is unusable here (a KEK this gateway lacks): the platform key serves.
          this.log.error({ account_id: accountId, provider, kek_id: envelope.kekId, err: error instanceof Error ? error.message : String(error) }, 'provider key cannot be opened; check PROVIDER_KEY_KEK_ID and PROVIDER_KEY_KEK_PREVIOUS');
        }
      }
      keys = Object.keys(opened).length === 0 ? NO_PROVIDER_KEYS : Object.freeze(opened);
      // Counted from the start of the fetch: the answer reflects PostgreSQL as of then or later.
      expiresAtMs = startedAtMs + this.options.ttlMs;
    } catch (error) {
      const usable = previous !== undefined && startedAtMs - previous.fetchedAtMs < this.options.staleMaxMs;
      this.log.warn({ account_id: accountId, err: error instanceof Error ? error.message : String(error), kept_previous: usable }, 'provider keys could not be fetched from account-admin');
      keys = usable ? previous.keys : NO_PROVIDER_KEYS;
      const retryAt = startedAtMs + (this.options.failureTtlMs ?? 1_000);
      expiresAtMs = usable ? Math.min(retryAt, previous.fetchedAtMs + this.options.staleMaxMs) : retryAt;
      if (usable) {
        this.store(accountId, generation, { keys, fetchedAtMs: previous.fetchedAtMs, expiresAtMs });
        return keys;
      }
    }
    this.store(accountId, generation, { keys, fetchedAtMs: startedAtMs, expiresAtMs });
    return keys;
  }

  private store(accountId: string, generation: number, entry: Entry): void {
    // An invalidation since the fetch started: the answer may predate the change; not kept
    // (the invalidation already dropped this fetch, and a newer one may be running).
    if (generation !== this.generation) return;
    this.fetching.delete(accountId);
    if (this.entries.size >= this.options.maxEntries && !this.entries.has(accountId)) {
      // Bounded: the oldest inserted entry goes (Map keeps insertion order).
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(accountId, entry);
  }
}
