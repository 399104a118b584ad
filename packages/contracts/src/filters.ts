/**
 * Search filters (docs/api.md, "Filters"): declared once here. The gateway's route schema,
 * the OpenAPI document, the MCP `web_search` input schema and the CLI flags are built from
 * (or checked against) FILTER_NAMES and FILTER_SCHEMAS; the catalog says which filters each
 * model honours; canonicalFilters gives the one normalized form every consumer (the
 * adapters, a cache key) reads.
 */

/** The filter fields of POST /v1/search, in their canonical order. */
export const FILTER_NAMES = ['include_domains', 'exclude_domains', 'country', 'language', 'published_after', 'published_before', 'safesearch'] as const;
export type FilterName = (typeof FILTER_NAMES)[number];

/** Most hostnames in include_domains or exclude_domains. */
export const MAX_FILTER_DOMAINS = 20;
export const SAFESEARCH_LEVELS = ['off', 'moderate', 'strict'] as const;
export type SafeSearch = (typeof SAFESEARCH_LEVELS)[number];

/** ISO 3166-1 alpha-2: the officially assigned codes. */
export const COUNTRY_CODES = (
  'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ ' +
  'CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR ' +
  'GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP ' +
  'KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT ' +
  'MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW ' +
  'SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG ' +
  'UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW'
).split(' ');

/** ISO 639-1: the two-letter language codes. */
export const LANGUAGE_CODES = (
  'aa ab ae af ak am an ar as av ay az ba be bg bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz ee el en eo es ' +
  'et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki ' +
  'kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no ' +
  'nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te ' +
  'tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu'
).split(' ');

/**
 * A hostname: dot-separated labels of letters, digits and inner hyphens, at least two labels,
 * at most 253 characters (no scheme, port, path or wildcard). Case does not matter.
 */
export const HOSTNAME_PATTERN = '^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$';
/** RFC 3339 full-date, or date-time with a Z or a numeric offset (fractions of a second allowed). */
export const RFC3339_DATE_OR_DATE_TIME_PATTERN = '^\\d{4}-\\d{2}-\\d{2}(?:[Tt]\\d{2}:\\d{2}:\\d{2}(?:\\.\\d{1,9})?(?:[Zz]|[+-]\\d{2}:\\d{2}))?$';

const DOMAINS_SCHEMA = {
  type: 'array', minItems: 1, maxItems: MAX_FILTER_DOMAINS,
  items: { type: 'string', pattern: HOSTNAME_PATTERN },
} as const;
const DATE_SCHEMA = { type: 'string', pattern: RFC3339_DATE_OR_DATE_TIME_PATTERN } as const;

/** The JSON Schema of each filter field: the rules every schema of a search request takes. */
export const FILTER_SCHEMAS = {
  include_domains: DOMAINS_SCHEMA,
  exclude_domains: DOMAINS_SCHEMA,
  country: { type: 'string', enum: COUNTRY_CODES },
  language: { type: 'string', enum: LANGUAGE_CODES },
  published_after: DATE_SCHEMA,
  published_before: DATE_SCHEMA,
  safesearch: { type: 'string', enum: SAFESEARCH_LEVELS },
} as const satisfies Record<FilterName, object>;

/** What each filter means, for people and agents (OpenAPI, the MCP tool, the CLI help). */
export const FILTER_DESCRIPTIONS: Readonly<Record<FilterName, string>> = {
  include_domains: `Only results from these hostnames (1 to ${MAX_FILTER_DOMAINS}, e.g. "example.com"); a hostname also matches its subdomains.`,
  exclude_domains: `No results from these hostnames (1 to ${MAX_FILTER_DOMAINS}); a hostname also matches its subdomains.`,
  country: 'The country to search from: an ISO 3166-1 alpha-2 code in capitals, e.g. "US", "DE".',
  language: 'The language of the results: an ISO 639-1 code in lower case, e.g. "en", "de".',
  published_after: 'Only results published at or after this: an RFC 3339 date ("2025-01-31", from the start of that UTC day) or date-time.',
  published_before: 'Only results published at or before this: an RFC 3339 date ("2025-01-31", to the end of that UTC day) or date-time.',
  safesearch: 'Adult-content filtering: off, moderate or strict.',
};

/** What a bad value of each filter must be instead (the 400 invalid_request message names the field and says this). */
export const FILTER_HINTS: Readonly<Record<FilterName, string>> = {
  include_domains: `must be 1 to ${MAX_FILTER_DOMAINS} hostnames such as "example.com" (no scheme, port, path or wildcard)`,
  exclude_domains: `must be 1 to ${MAX_FILTER_DOMAINS} hostnames such as "example.com" (no scheme, port, path or wildcard)`,
  country: 'must be an ISO 3166-1 alpha-2 country code in capitals, such as "US"',
  language: 'must be an ISO 639-1 language code in lower case, such as "en"',
  published_after: 'must be an RFC 3339 date ("2025-01-31") or date-time ("2025-01-31T12:00:00Z")',
  published_before: 'must be an RFC 3339 date ("2025-01-31") or date-time ("2025-01-31T12:00:00Z")',
  safesearch: `must be one of ${SAFESEARCH_LEVELS.join(', ')}`,
};

/**
 * The filters of one search in canonical form: only the filters sent, hostnames in lower
 * case, without duplicates and sorted; date-times in UTC (`YYYY-MM-DDTHH:MM:SS.sssZ`), dates
 * as `YYYY-MM-DD`; keys in FILTER_NAMES order. Equal searches give equal objects, so
 * `JSON.stringify` of it is a cache key.
 */
export interface SearchFilters {
  readonly include_domains?: readonly string[];
  readonly exclude_domains?: readonly string[];
  readonly country?: string;
  readonly language?: string;
  readonly published_after?: string;
  readonly published_before?: string;
  readonly safesearch?: SafeSearch;
}

/** A filter value that the schema admits but that is still wrong; `field` names the filter. */
export class FilterError extends Error {
  constructor(readonly field: FilterName, message: string) {
    super(message);
    this.name = 'FilterError';
  }
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** The first or last millisecond (UTC) a date or date-time stands for, or NaN when it is no real time. */
export function filterInstantMs(value: string, end: 'start' | 'end'): number {
  if (DATE_ONLY.test(value)) {
    const ms = Date.parse(`${value}T00:00:00.000Z`);
    // Date.parse rolls 2025-02-30 over to March: a real date prints back the same.
    if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value) return Number.NaN;
    return end === 'start' ? ms : ms + 86_400_000 - 1;
  }
  const [date] = value.split(/[Tt]/);
  const ms = Date.parse(value);
  if (Number.isNaN(ms) || date === undefined || Number.isNaN(filterInstantMs(date, 'start'))) return Number.NaN;
  const time = /[Tt](\d{2}):(\d{2}):(\d{2})/.exec(value);
  if (time === null || Number(time[1]) > 23 || Number(time[2]) > 59 || Number(time[3]) > 60) return Number.NaN;
  return ms;
}

function canonicalDomains(domains: readonly string[]): readonly string[] {
  return Object.freeze([...new Set(domains.map((domain) => domain.toLowerCase()))].sort());
}

function canonicalDate(field: FilterName, value: string): string {
  const ms = filterInstantMs(value, 'start');
  if (Number.isNaN(ms)) throw new FilterError(field, `${field} is not a real date or date-time`);
  return DATE_ONLY.test(value) ? value : new Date(ms).toISOString();
}

/**
 * The canonical form of the filter fields of a request whose shape the schema already
 * checked (FILTER_SCHEMAS), or undefined when it has none. Throws FilterError for what a
 * schema cannot say: a date that does not exist, published_after later than published_before.
 */
export function canonicalFilters(input: { readonly [K in FilterName]?: unknown }): SearchFilters | undefined {
  // Nothing is allocated for a search without filters (the hot path).
  let out: Record<string, unknown> | undefined;
  for (const name of FILTER_NAMES) {
    const value = input[name];
    if (value === undefined) continue;
    out ??= {};
    switch (name) {
      case 'include_domains':
      case 'exclude_domains':
        out[name] = canonicalDomains(value as string[]);
        break;
      case 'published_after':
      case 'published_before':
        out[name] = canonicalDate(name, value as string);
        break;
      default:
        out[name] = value;
    }
  }
  if (out === undefined) return undefined;
  const filters = out as SearchFilters;
  if (filters.published_after !== undefined && filters.published_before !== undefined
    && filterInstantMs(filters.published_after, 'start') > filterInstantMs(filters.published_before, 'end')) {
    throw new FilterError('published_after', 'published_after must not be later than published_before');
  }
  return Object.freeze(filters);
}

/** The names of the filters sent, in canonical order. */
export function filterNamesOf(filters: SearchFilters): FilterName[] {
  return FILTER_NAMES.filter((name) => filters[name] !== undefined);
}

/**
 * The filters sent that a model cannot honour (in canonical order), or null when it honours
 * every one of them.
 */
export function unsupportedFilters(supported: readonly FilterName[], filters: SearchFilters): FilterName[] | null {
  let missing: FilterName[] | null = null;
  for (const name of FILTER_NAMES) {
    if (filters[name] !== undefined && !supported.includes(name)) (missing ??= []).push(name);
  }
  return missing;
}

/** Whether `hostname` is `domain` or one of its subdomains (both lower case). */
export function hostnameMatches(hostname: string, domain: string): boolean {
  return hostname === domain || hostname.endsWith(`.${domain}`);
}

/**
 * Whether a result a provider returned lies inside the filters that can be checked on the
 * result itself (a fan-out applies them again to its merged list, docs/api.md "Fan-out"): its
 * URL's host inside `include_domains` (a listed hostname or a subdomain of one) and outside
 * `exclude_domains`; its publication time, when it has one, inside `published_after` ..
 * `published_before` (a date stands for its whole UTC day). A result without a date is kept: its
 * provider applied the date filter and nothing here says otherwise. A URL that does not parse is
 * outside any domain filter. `country`, `language` and `safesearch` cannot be checked on a result.
 */
export function resultWithinFilters(url: string, publishedAt: string | null, filters: SearchFilters): boolean {
  const include = filters.include_domains;
  const exclude = filters.exclude_domains;
  if (include !== undefined || exclude !== undefined) {
    let hostname: string;
    try {
      hostname = new URL(url).hostname.toLowerCase();
    } catch {
      return false;
    }
    if (include !== undefined && !include.some((domain) => hostnameMatches(hostname, domain))) return false;
    if (exclude?.some((domain) => hostnameMatches(hostname, domain)) === true) return false;
  }
  if (publishedAt !== null && (filters.published_after !== undefined || filters.published_before !== undefined)) {
    const at = Date.parse(publishedAt);
    if (Number.isNaN(at)) return true;
    if (filters.published_after !== undefined && at < filterInstantMs(filters.published_after, 'start')) return false;
    if (filters.published_before !== undefined && at > filterInstantMs(filters.published_before, 'end')) return false;
  }
  return true;
}

const HOSTNAME = new RegExp(HOSTNAME_PATTERN);
const DATE_OR_DATE_TIME = new RegExp(RFC3339_DATE_OR_DATE_TIME_PATTERN);
const COUNTRY_SET: ReadonlySet<string> = new Set(COUNTRY_CODES);
const LANGUAGE_SET: ReadonlySet<string> = new Set(LANGUAGE_CODES);
const SAFESEARCH_SET: ReadonlySet<string> = new Set(SAFESEARCH_LEVELS);

function isDomainList(value: unknown): boolean {
  return Array.isArray(value) && value.length >= 1 && value.length <= MAX_FILTER_DOMAINS
    && value.every((d) => typeof d === 'string' && HOSTNAME.test(d));
}

/** Whether `value` obeys FILTER_SCHEMAS[name]. */
function obeysSchema(name: FilterName, value: unknown): boolean {
  switch (name) {
    case 'include_domains':
    case 'exclude_domains':
      return isDomainList(value);
    case 'country':
      return typeof value === 'string' && COUNTRY_SET.has(value);
    case 'language':
      return typeof value === 'string' && LANGUAGE_SET.has(value);
    case 'published_after':
    case 'published_before':
      return typeof value === 'string' && DATE_OR_DATE_TIME.test(value);
    case 'safesearch':
      return typeof value === 'string' && SAFESEARCH_SET.has(value);
  }
}

/**
 * Whether `value` is a search's filters exactly as canonicalFilters gives them: a non-empty
 * object of filter fields only, each obeying its schema, already in canonical form (a record
 * read back from elsewhere, e.g. billing reading a settlement, is checked with this).
 */
export function isCanonicalFilters(value: unknown): value is SearchFilters {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  if (entries.length === 0) return false;
  for (const [name, field] of entries) {
    if (!(FILTER_NAMES as readonly string[]).includes(name) || !obeysSchema(name as FilterName, field)) return false;
  }
  try {
    return JSON.stringify(canonicalFilters(value)) === JSON.stringify(value);
  } catch {
    return false;
  }
}
