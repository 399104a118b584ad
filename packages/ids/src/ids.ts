import { randomBytes } from 'node:crypto';

/**
 * The closed list of id prefixes. An id is the prefix and 24 random base62 characters; an id
 * of a time-ordered kind (TIME_ORDERED_KINDS) has its creation time before them.
 */
export const ID_PREFIXES = {
  account: 'acct_',
  user: 'usr_',
  session: 'sess_',
  apiKey: 'key_',
  managementKey: 'mkey_',
  request: 'req_',
  ledgerEntry: 'led_',
  checkout: 'chk_',
  oauthClient: 'ocl_',
  oauthRequest: 'oar_',
  oauthGrant: 'ogr_',
  event: 'evt_',
  webhookEndpoint: 'whe_',
  webhookDelivery: 'whd_',
  auditEntry: 'aud_',
  autoTopup: 'atu_',
  mailMessage: 'eml_',
  researchRun: 'rsr_',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const LENGTH = 24;

/**
 * Random bytes are drawn from the CSPRNG 4 KiB at a time and handed out in order, never
 * twice: one system call per ~80 ids instead of one per id (ids are made on every request).
 */
const POOL_SIZE = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;

function nextRandomByte(): number {
  if (poolOffset >= pool.length) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  return pool[poolOffset++] as number;
}

/** 24 base62 characters (about 143 bits), drawn without modulo bias. */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = nextRandomByte();
    // 248 = 62 * 4: bytes at or above it would bias the result.
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out;
}

/**
 * The kinds whose ids begin with their creation time: the rows written for every search
 * (settlements, usage events and ledger entries are keyed by the request id, ledger entries
 * also by their own id). Their primary keys and unique indexes then grow at their right
 * edge, where PostgreSQL finds the page at once and keeps it cached, instead of at a random
 * page of an index larger than its buffers: at 2,000,000 rows the ledger drain's write cost
 * PostgreSQL less than half as much per search (docs/decisions/0034). Neither kind is a
 * secret; every other kind stays wholly random.
 */
export const TIME_ORDERED_KINDS: readonly IdKind[] = ['request', 'ledgerEntry', 'researchRun'];

/**
 * The creation time's width: milliseconds since the Unix epoch in base 36, lower case, padded
 * (36^9 ms is about 3,200 years). Digits and lower-case letters sort the same way under the C
 * collation and the natural-language ones, so the ids sort by time in any database.
 */
const TIME_LENGTH = 9;

function timeBase36(ms: number): string {
  return Math.max(0, Math.floor(ms)).toString(36).padStart(TIME_LENGTH, '0');
}

export function newId(kind: IdKind): string {
  const random = randomBase62(LENGTH);
  return TIME_ORDERED_KINDS.includes(kind) ? ID_PREFIXES[kind] + timeBase36(Date.now()) + random : ID_PREFIXES[kind] + random;
}

export function newRequestId(): string {
  return newId('request');
}

/**
 * The pattern (a regular expression's source) of an id of `kind`: its prefix and 24 base62
 * characters, and for a time-ordered kind also its creation time before them (ids made before
 * the time was added, still in the database, keep the first form). The one definition every
 * validator and answer schema uses.
 */
export function idPatternSource(kind: IdKind): string {
  const body = TIME_ORDERED_KINDS.includes(kind) ? `(?:[0-9a-z]{${TIME_LENGTH}})?[0-9A-Za-z]{${LENGTH}}` : `[0-9A-Za-z]{${LENGTH}}`;
  return `^${ID_PREFIXES[kind]}${body}$`;
}

const PATTERNS = new Map<IdKind, RegExp>();

export function isId(kind: IdKind, value: unknown): value is string {
  if (typeof value !== 'string') return false;
  let pattern = PATTERNS.get(kind);
  if (pattern === undefined) {
    pattern = new RegExp(idPatternSource(kind));
    PATTERNS.set(kind, pattern);
  }
  return pattern.test(value);
}
