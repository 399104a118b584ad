import { hash } from 'node:crypto';

/**
 * A search's query in its one normal form (docs/decisions/0043): Unicode NFC, trimmed, every
 * run of whitespace (JavaScript's \s: Unicode's space separators, U+FEFF, tabs and line
 * breaks) one space; case is kept ("Rust" and "rust" are different searches for some
 * providers, and the cache never guesses). The search request holds its query in this form
 * (toSearchRequest), so it is what the provider receives and what the cache key is made of;
 * the key normalises again, which changes nothing (the form is idempotent).
 */
export function normaliseQuery(query: string): string {
  // Printable ASCII words one space apart are already normal (NFC leaves ASCII alone): the
  // common query skips the normalisation, the trim and the collapse (0.06 against 0.36 µs,
  // measured by a benchmark since removed; decision 0023).
  return NORMAL_ASCII.test(query) ? query : query.normalize('NFC').trim().replace(/\s+/gu, ' ');
}

/** Printable ASCII words one space apart: a query normaliseQuery returns unchanged. */
const NORMAL_ASCII = /^[\x21-\x7e]+(?: [\x21-\x7e]+)*$/;

/** A value the filters of a search may hold (JSON). */
export type FilterValue = string | number | boolean | null | readonly FilterValue[] | { readonly [key: string]: FilterValue | undefined };

/**
 * A search's filters as one canonical JSON text: object keys sorted at every depth, fields
 * whose value is undefined left out, arrays in their order. Every filter the request carries
 * is part of the key, so a search with filters is never answered from an entry stored
 * without them (or with others).
 */
export function canonicalFilters(filters: object): string {
  return canonical(filters as { readonly [key: string]: FilterValue | undefined });
}

function canonical(value: FilterValue | undefined): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${(value as readonly FilterValue[]).map(canonical).join(',')}]`;
  const record = value as { readonly [key: string]: FilterValue | undefined };
  const parts: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const field = record[key];
    if (field === undefined) continue;
    parts.push(`${JSON.stringify(key)}:${canonical(field)}`);
  }
  return `{${parts.join(',')}}`;
}

/** Whose answers an entry holds: every account's (answers from the platform's provider keys), or one account's (its own key, BYOK). */
export type CacheScope = { readonly kind: 'shared' } | { readonly kind: 'account'; readonly accountId: string };

export const SHARED_SCOPE: CacheScope = Object.freeze({ kind: 'shared' });

/**
 * The Redis keys of one model, query and filters. Every key shares the hash tag of the
 * digest (`{...}`), so the lookup script of a BYOK search, which reads the account's entry and
 * the shared one in one call, runs on Redis Cluster too. The digest is SHA-256 of the model,
 * the normalised query and the canonical filters; the result count is not in it: an entry
 * records how many results it was asked for and serves any request for at most as many. An
 * entry's key is also where identical searches in flight find their leader (cache.scripts.ts).
 */
export interface CacheKeys {
  /** The entry shared by every account. */
  readonly shared: string;
  /** The account's own entry (BYOK answers); null in the shared scope. */
  readonly account: string | null;
}

const PREFIX = 'svc:cache:';

export function cacheDigest(modelId: string, query: string, filters: string): string {
  // The one-shot hash: a quarter of createHash's cost for a text this small (0.2 against 0.8 µs here).
  return hash('sha256', `${modelId}\n${normaliseQuery(query)}\n${filters}`, 'base64url');
}

/** An account's part of a key: a digest of its id (key names show no account id). */
function accountTag(accountId: string): string {
  return hash('sha256', accountId, 'base64url').slice(0, 22);
}

export function cacheKeys(digest: string, scope: CacheScope): CacheKeys {
  const tagged = `${PREFIX}{${digest}}`;
  if (scope.kind === 'shared') return { shared: `${tagged}:e`, account: null };
  return { shared: `${tagged}:e`, account: `${tagged}:e:${accountTag(scope.accountId)}` };
}
