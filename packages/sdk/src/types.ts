/**
 * Every request and response shape of the public API, in one file, so that a contract test
 * can compare them with a machine-readable description of the API. Field names are the
 * wire names (snake_case). Money is a number of USD; timestamps are RFC 3339 UTC strings.
 * Every JSON body the API handlers write carries `request_id`.
 */

/**
 * A whole number (a count, milliseconds, seconds, a position). TypeScript has no integer
 * type; the name says what the API guarantees, and the contract test reads it as the JSON
 * Schema type `integer`.
 * @asType integer
 */
export type Integer = number;

/** The three upstream providers. */
export type Provider = 'brave' | 'exa' | 'tavily';

/** The providers as a list, in the API's order. */
export const PROVIDERS: readonly Provider[] = ['brave', 'exa', 'tavily'];

// ---------------------------------------------------------------------------------------
// Errors

/** The closed set of error codes (spec section 7, in the order of its table, then `unsupported_filter`, then the key fences' `ip_not_allowed` and `model_not_allowed`, then `unsupported_option`, then `max_cost_exceeded`). */
export const ERROR_CODES = [
  'invalid_request',
  'unknown_model',
  'unknown_provider',
  'invalid_api_key',
  'key_disabled',
  'key_expired',
  'insufficient_credits',
  'key_limit_exceeded',
  'wrong_key_type',
  'not_found',
  'rate_limited',
  'too_many_concurrent_requests',
  'internal',
  'all_providers_failed',
  'payment_error',
  'overloaded',
  'byok_disabled',
  'payment_disabled',
  'unsupported_filter',
  'ip_not_allowed',
  'model_not_allowed',
  'unsupported_option',
  'max_cost_exceeded',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** The codes whose error object carries `needed_usd`. */
export type PaymentErrorCode = 'insufficient_credits' | 'key_limit_exceeded';

interface ErrorFields<C extends ErrorCode> {
  code: C;
  /** For humans; may change. Never branch on it. */
  message: string;
  /** The same as the `x-svc-request-id` response header. */
  request_id: string;
}

/** 402: the price of the cheapest blocked attempt. */
export interface PaymentError extends ErrorFields<PaymentErrorCode> {
  needed_usd: number;
}

/**
 * 402 `max_cost_exceeded`: every requested model would take the request past its `max_cost_usd`
 * (nothing was charged). `needed_usd`: the least `max_cost_usd` that lets one of them run;
 * `attempts`: every model, each skipped with its reason.
 */
export interface MaxCostError extends ErrorFields<'max_cost_exceeded'> {
  needed_usd: number;
  attempts: Attempt[];
}

/** The codes whose error object carries `attempts`. */
export type AttemptsErrorCode = 'all_providers_failed' | 'unsupported_filter' | 'unsupported_option';

/**
 * 502 `all_providers_failed` (every attempt, in order), or 400 `unsupported_filter` (every
 * model skipped, each with `unsupported filter: <names>`; nothing was charged), or 400
 * `unsupported_option` (every model skipped for what it cannot honour: a search's contents, an
 * extract's format or option; nothing was charged).
 */
export interface AllProvidersFailedError extends ErrorFields<AttemptsErrorCode> {
  attempts: Attempt[];
}

export type PlainError = ErrorFields<Exclude<ErrorCode, PaymentErrorCode | AttemptsErrorCode | 'max_cost_exceeded'>>;

/** The `error` object of an error body, discriminated by `code`. */
export type ApiError = PaymentError | MaxCostError | AllProvidersFailedError | PlainError;

/** An error body: `{"error": {...}}`. */
export interface ErrorResponse {
  error: ApiError;
}

// ---------------------------------------------------------------------------------------
// Lists

/** A paginated list: `next_cursor` is null on the last page. */
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
  request_id: string;
}

/** Query of a paginated list. */
export interface PageQuery {
  /** 1..100, default 20. */
  limit?: Integer;
  /** The `next_cursor` of the previous page, unchanged. */
  cursor?: string;
}

// ---------------------------------------------------------------------------------------
// Audit log (management key)

/** Who made a change. `oauth_grant`: an OAuth grant's client (e.g. it revoked the grant through the revocation endpoint). */
export type AuditActorKind = 'management_key' | 'session' | 'oauth_grant' | 'operator';

export type AuditAction =
  | 'api_key.create' | 'api_key.update' | 'api_key.delete'
  | 'management_key.create' | 'management_key.update' | 'management_key.delete'
  | 'provider_key.set' | 'provider_key.delete'
  | 'oauth_grant.create' | 'oauth_grant.revoke'
  | 'purchase.start' | 'credits.grant'
  | 'webhook_endpoint.create' | 'webhook_endpoint.update' | 'webhook_endpoint.rotate_secret' | 'webhook_endpoint.delete'
  | 'billing_settings.update' | 'card_setup.start'
  | 'user.password_reset' | 'notification_settings.update';

/** A recorded value: never a secret, a key hash or a provider key. */
export type AuditValue = string | number | boolean | null | string[];

/** One change: when, who, from where, what, on which target, and each field before and after. */
export interface AuditEntry {
  /** `aud_` + 24 base62 characters. */
  id: string;
  at: string;
  actor: { kind: AuditActorKind; id: string };
  client_address: string | null;
  action: AuditAction;
  target_id: string;
  changes: Record<string, { before: AuditValue; after: AuditValue }>;
}

/** GET /v1/audit-log: newest first. */
export type AuditLogPage = Page<AuditEntry>;

/** GET /v1/audit-log's query: a page and filters that all must hold. */
export interface AuditLogQuery extends PageQuery {
  action?: AuditAction;
  actor_kind?: AuditActorKind;
  actor_id?: string;
  target_id?: string;
  /** RFC 3339; entries at or after it. */
  from?: string;
  /** RFC 3339; entries before it. */
  to?: string;
}

// ---------------------------------------------------------------------------------------
// Catalog (public)

export interface ModelPricing {
  /** Price of one search (0 on an extract model: it is priced per URL). */
  base_usd: number;
  /** Results covered by `base_usd`; null when the provider does not price by count. */
  included_results: Integer | null;
  /** Price of each result beyond `included_results` (0 when not priced by count). */
  per_result_usd: number;
  /** Price of a search answered from the result cache (`hit` or `joined`), or of one URL on an extract model; null when the deployment has no cache. */
  cache_price_usd: number | null;
  /** Search models: what asking for contents (text or highlights) adds to a search; 0 where the provider charges nothing extra. */
  contents_usd?: number;
  /** Extract models: the price of one URL that came back. */
  per_url_usd?: number;
  /** Extract models: URLs are charged in whole blocks of this many per model call. */
  url_block?: Integer;
  /** Research models: how a run is metered. */
  metering?: ResearchMetering;
  /** Research models: the price of one run (`per_run`), of one USD the provider reports (`usage`), or of one provider credit (`credits`). */
  unit_usd?: number;
  /** Research models: the most one run can cost. */
  max_cost_usd?: number;
  /** Research models: the least a run's cap (what is left of it) must be for this model to run. */
  min_cap_usd?: number;
}

/** What a model does: `search` (POST /v1/search), `extract` (POST /v1/extract) or `research` (POST /v1/research). */
export type ModelKind = 'search' | 'extract' | 'research';

/** How a research model is metered: a fixed price per run, the provider's reported cost, or its reported credits. */
export type ResearchMetering = 'per_run' | 'usage' | 'credits';

/** What a search result may carry besides its snippet. */
export type SearchContents = 'none' | 'text' | 'highlights';

/** The text format of an extract. */
export type ExtractFormat = 'text' | 'markdown';

/** An optional field of an extract a model may honour. */
export type ExtractOption = 'max_age_s' | 'query';

/** GET /v1/models, one element of `data`. */
export interface Model {
  /** `<provider>/<variant>` */
  id: string;
  kind: ModelKind;
  provider: Provider;
  variant: string;
  description: string;
  /** Most results the upstream returns. */
  max_results: Integer;
  pricing: ModelPricing;
  /** False when this deployment has no platform key for the provider. */
  available: boolean;
  /** The search filters this model honours; a search with any other filter skips it (none on extract models). */
  supported_filters: FilterName[];
  /** Search models: the contents its results can carry. */
  supported_contents?: SearchContents[];
  /** Extract models: the formats it returns. */
  supported_formats?: ExtractFormat[];
  /** Extract models: the optional fields it honours. */
  supported_options?: ExtractOption[];
  /** What the platform knows of the model now (GET /v1/status). */
  status: ModelStatus;
  /** Research models: what a run that did not complete is charged. */
  research_rules?: { failed: string; cancelled: string; not_started: string };
}

/** GET /v1/models */
export interface ModelList {
  data: Model[];
  request_id: string;
}

/** `degraded`: many of its calls failed over the last 5 minutes; `unavailable`: its provider's breaker is open (or no platform key). */
export type ModelStatus = 'operational' | 'degraded' | 'unavailable';

/** Calls of one provider or model over a window of GET /v1/status. */
export interface HealthWindow {
  calls: Integer;
  /** Answered calls over calls; null without calls. */
  success_rate: number | null;
  timeouts: Integer;
  /** 5xx, connection errors, unreadable answers, the platform key refused. */
  server_errors: Integer;
  /** The provider's 429 and quota answers. */
  rate_limited: Integer;
  /** Upper bound of the latency bucket of the median / 95th-percentile call; null without calls. */
  p50_ms: Integer | null;
  p95_ms: Integer | null;
}

/** A provider's circuit breaker in GET /v1/status. */
export interface Breaker {
  /** `half_open`: the cool-down ended; still skipped until one probe answers. */
  state: 'closed' | 'open' | 'half_open';
  /** Set while an operator holds the breaker so. */
  forced: 'open' | 'closed' | null;
  reason: string | null;
  opened_at: string | null;
  /** Seconds until the probe; null when closed. */
  retry_after_seconds: Integer | null;
}

/** GET /v1/status */
export interface ServiceStatus {
  updated_at: string;
  breaker_enabled: boolean;
  providers: {
    provider: Provider;
    status: ModelStatus;
    configured: boolean;
    breaker: Breaker;
    last_5m: HealthWindow;
    last_1h: HealthWindow;
  }[];
  models: {
    id: string;
    provider: Provider;
    status: ModelStatus;
    last_5m: HealthWindow;
    last_1h: HealthWindow;
  }[];
  request_id: string;
}

/** GET /v1/credits/pricing, one element of `models`. */
export interface ModelPrice extends ModelPricing {
  id: string;
  kind: ModelKind;
}

/** GET /v1/credits/pricing */
export interface Pricing {
  currency: 'USD';
  models: ModelPrice[];
  /** The checkout amount range. */
  purchase: { min_usd: number; max_usd: number };
  byok: { enabled: boolean; fee_percent: number };
  /** The result cache: whether the deployment has one, and `cache_price_usd` as a percentage of `base_usd`. */
  cache: { enabled: boolean; price_percent: Integer | null };
  request_id: string;
}

// ---------------------------------------------------------------------------------------
// Search

/** POST /v1/search. At least one of `model` and `models`. */
export interface SearchRequest {
  /** 1..2,000 characters after trimming. */
  query: string;
  /** A model id; tried first. */
  model?: string;
  /** 1..10 model ids, in fallback order. */
  models?: string[];
  /** 1..100, default 10; capped per model. */
  max_results?: Integer;
  /** The result cache: `default` (look up, store), `refresh` (store only), `off` (neither). */
  cache?: CacheMode;
  /** Accept a stored answer at most this many seconds old (0..604,800); default any. */
  cache_max_age_s?: Integer;
  // Filters (never dropped: a model that cannot honour one is skipped; see Model.supported_filters).
  /** 1..20 hostnames; a hostname also matches its subdomains. */
  include_domains?: string[];
  /** 1..20 hostnames; a hostname also matches its subdomains. */
  exclude_domains?: string[];
  /** ISO 3166-1 alpha-2, in capitals: `US`. */
  country?: CountryCode;
  /** ISO 639-1, in lower case: `en`. */
  language?: LanguageCode;
  /** RFC 3339 date (from the start of that UTC day) or date-time. */
  published_after?: string;
  /** RFC 3339 date (to the end of that UTC day) or date-time. */
  published_before?: string;
  safesearch?: SafeSearch;
  /** What each result carries besides its snippet (default `none`); a model that cannot return it is skipped. */
  contents?: SearchContents;
  /** With contents: 100..20,000 characters of text (or of all highlights) per result; default 5,000. */
  max_chars_per_result?: Integer;
  /** 100..2,000,000: the most characters of text in the whole answer (the last results cut or dropped; `truncated: true`). */
  max_total_chars?: Integer;
  /**
   * `fallback` (default): the models in order, the first answer. `fanout`: 2..5 models (`model` and
   * `models` together) called at once, their results merged (FanoutSearchResponse).
   */
  strategy?: SearchStrategy;
  /** With `strategy: "fanout"`: 100..60,000 ms to wait for the models once called (default: the deployment's, 10,000). */
  fanout_wait_ms?: Integer;
  /** The most this search may cost, in USD (above 0, at most 1,000, 6 decimals at most); else 402 `max_cost_exceeded`. */
  max_cost_usd?: number;
}

/** How a search uses its models. */
export type SearchStrategy = 'fallback' | 'fanout';

export type CacheMode = 'default' | 'refresh' | 'off';

/** The result cache's part in an answer: a stored answer, an identical search's in flight, the provider's, or no cache. */
export type CacheStatus = 'hit' | 'joined' | 'miss' | 'off';

/** `cache` of a search's answer (also the `x-svc-cache` header's status). */
export interface SearchCache {
  status: CacheStatus;
  /** Seconds since the answer was stored; 0 on `miss` and `off`. */
  age_s: Integer;
}

/** The filter fields of SearchRequest. */
export const FILTER_NAMES = ['include_domains', 'exclude_domains', 'country', 'language', 'published_after', 'published_before', 'safesearch'] as const;
export type FilterName = (typeof FILTER_NAMES)[number];
export type SafeSearch = 'off' | 'moderate' | 'strict';

/** ISO 3166-1 alpha-2: the officially assigned codes. */
export type CountryCode =
  | 'AD' | 'AE' | 'AF' | 'AG' | 'AI' | 'AL' | 'AM' | 'AO' | 'AQ' | 'AR' | 'AS' | 'AT' | 'AU' | 'AW' | 'AX' | 'AZ'
  | 'BA' | 'BB' | 'BD' | 'BE' | 'BF' | 'BG' | 'BH' | 'BI' | 'BJ' | 'BL' | 'BM' | 'BN' | 'BO' | 'BQ' | 'BR' | 'BS'
  | 'BT' | 'BV' | 'BW' | 'BY' | 'BZ' | 'CA' | 'CC' | 'CD' | 'CF' | 'CG' | 'CH' | 'CI' | 'CK' | 'CL' | 'CM' | 'CN'
  | 'CO' | 'CR' | 'CU' | 'CV' | 'CW' | 'CX' | 'CY' | 'CZ' | 'DE' | 'DJ' | 'DK' | 'DM' | 'DO' | 'DZ' | 'EC' | 'EE'
  | 'EG' | 'EH' | 'ER' | 'ES' | 'ET' | 'FI' | 'FJ' | 'FK' | 'FM' | 'FO' | 'FR' | 'GA' | 'GB' | 'GD' | 'GE' | 'GF'
  | 'GG' | 'GH' | 'GI' | 'GL' | 'GM' | 'GN' | 'GP' | 'GQ' | 'GR' | 'GS' | 'GT' | 'GU' | 'GW' | 'GY' | 'HK' | 'HM'
  | 'HN' | 'HR' | 'HT' | 'HU' | 'ID' | 'IE' | 'IL' | 'IM' | 'IN' | 'IO' | 'IQ' | 'IR' | 'IS' | 'IT' | 'JE' | 'JM'
  | 'JO' | 'JP' | 'KE' | 'KG' | 'KH' | 'KI' | 'KM' | 'KN' | 'KP' | 'KR' | 'KW' | 'KY' | 'KZ' | 'LA' | 'LB' | 'LC'
  | 'LI' | 'LK' | 'LR' | 'LS' | 'LT' | 'LU' | 'LV' | 'LY' | 'MA' | 'MC' | 'MD' | 'ME' | 'MF' | 'MG' | 'MH' | 'MK'
  | 'ML' | 'MM' | 'MN' | 'MO' | 'MP' | 'MQ' | 'MR' | 'MS' | 'MT' | 'MU' | 'MV' | 'MW' | 'MX' | 'MY' | 'MZ' | 'NA'
  | 'NC' | 'NE' | 'NF' | 'NG' | 'NI' | 'NL' | 'NO' | 'NP' | 'NR' | 'NU' | 'NZ' | 'OM' | 'PA' | 'PE' | 'PF' | 'PG'
  | 'PH' | 'PK' | 'PL' | 'PM' | 'PN' | 'PR' | 'PS' | 'PT' | 'PW' | 'PY' | 'QA' | 'RE' | 'RO' | 'RS' | 'RU' | 'RW'
  | 'SA' | 'SB' | 'SC' | 'SD' | 'SE' | 'SG' | 'SH' | 'SI' | 'SJ' | 'SK' | 'SL' | 'SM' | 'SN' | 'SO' | 'SR' | 'SS'
  | 'ST' | 'SV' | 'SX' | 'SY' | 'SZ' | 'TC' | 'TD' | 'TF' | 'TG' | 'TH' | 'TJ' | 'TK' | 'TL' | 'TM' | 'TN' | 'TO'
  | 'TR' | 'TT' | 'TV' | 'TW' | 'TZ' | 'UA' | 'UG' | 'UM' | 'US' | 'UY' | 'UZ' | 'VA' | 'VC' | 'VE' | 'VG' | 'VI'
  | 'VN' | 'VU' | 'WF' | 'WS' | 'YE' | 'YT' | 'ZA' | 'ZM' | 'ZW';

/** ISO 639-1: the two-letter language codes. */
export type LanguageCode =
  | 'aa' | 'ab' | 'ae' | 'af' | 'ak' | 'am' | 'an' | 'ar' | 'as' | 'av' | 'ay' | 'az' | 'ba' | 'be' | 'bg' | 'bi'
  | 'bm' | 'bn' | 'bo' | 'br' | 'bs' | 'ca' | 'ce' | 'ch' | 'co' | 'cr' | 'cs' | 'cu' | 'cv' | 'cy' | 'da' | 'de'
  | 'dv' | 'dz' | 'ee' | 'el' | 'en' | 'eo' | 'es' | 'et' | 'eu' | 'fa' | 'ff' | 'fi' | 'fj' | 'fo' | 'fr' | 'fy'
  | 'ga' | 'gd' | 'gl' | 'gn' | 'gu' | 'gv' | 'ha' | 'he' | 'hi' | 'ho' | 'hr' | 'ht' | 'hu' | 'hy' | 'hz' | 'ia'
  | 'id' | 'ie' | 'ig' | 'ii' | 'ik' | 'io' | 'is' | 'it' | 'iu' | 'ja' | 'jv' | 'ka' | 'kg' | 'ki' | 'kj' | 'kk'
  | 'kl' | 'km' | 'kn' | 'ko' | 'kr' | 'ks' | 'ku' | 'kv' | 'kw' | 'ky' | 'la' | 'lb' | 'lg' | 'li' | 'ln' | 'lo'
  | 'lt' | 'lu' | 'lv' | 'mg' | 'mh' | 'mi' | 'mk' | 'ml' | 'mn' | 'mr' | 'ms' | 'mt' | 'my' | 'na' | 'nb' | 'nd'
  | 'ne' | 'ng' | 'nl' | 'nn' | 'no' | 'nr' | 'nv' | 'ny' | 'oc' | 'oj' | 'om' | 'or' | 'os' | 'pa' | 'pi' | 'pl'
  | 'ps' | 'pt' | 'qu' | 'rm' | 'rn' | 'ro' | 'ru' | 'rw' | 'sa' | 'sc' | 'sd' | 'se' | 'sg' | 'si' | 'sk' | 'sl'
  | 'sm' | 'sn' | 'so' | 'sq' | 'sr' | 'ss' | 'st' | 'su' | 'sv' | 'sw' | 'ta' | 'te' | 'tg' | 'th' | 'ti' | 'tk'
  | 'tl' | 'tn' | 'to' | 'tr' | 'ts' | 'tt' | 'tw' | 'ty' | 'ug' | 'uk' | 'ur' | 'uz' | 've' | 'vi' | 'vo' | 'wa'
  | 'wo' | 'xh' | 'yi' | 'yo' | 'za' | 'zh' | 'zu';

export interface SearchResult {
  position: Integer;
  title: string;
  url: string;
  snippet: string;
  published_at: string | null;
  score: number | null;
  /** With contents `text`: the page's text. */
  text?: string;
  /** With contents `highlights`: its most relevant passages. */
  highlights?: string[];
  /** With contents: whether the text or highlights were cut. */
  truncated?: boolean;
}

/** Whose provider key an attempt used. */
export type AttemptSource = 'platform' | 'byok';

/** An element of `attempts`: an attempt that did not answer. */
export interface Attempt {
  model: string;
  /** Absent on an attempt skipped because the provider is not configured. */
  source?: AttemptSource;
  status: 'error' | 'skipped';
  /** Short reason, e.g. `provider returned 500`. */
  error: string;
  /** Only on an attempt that timed out: the base price, which is kept. */
  cost_usd?: number;
}

/** A model that returned a merged result, and the result's position in that model's answer. */
export interface FanoutSource {
  model: string;
  position: Integer;
}

/** A fan-out's merged result: the best-ranked source's fields, its place and fused score, and every model that returned it. */
export interface FanoutResult {
  /** Its place in the merged list. */
  position: Integer;
  title: string;
  /** As the best-ranked source returned it. */
  url: string;
  snippet: string;
  published_at: string | null;
  /** Its reciprocal rank fusion score (the list is ordered by it). */
  score: number;
  text?: string;
  highlights?: string[];
  truncated?: boolean;
  /** Every model that returned it, best-ranked first. */
  sources: FanoutSource[];
}

/** One model of a fan-out: called or skipped, with what it cost. */
export interface FanoutAttempt {
  model: string;
  source?: AttemptSource;
  status: 'success' | 'error' | 'skipped';
  /** On success: how many results the model returned. */
  results?: Integer;
  cost_usd: number;
  /** Why it was skipped or failed; absent on success. */
  error?: string;
  /** On success: the result cache's part in its answer. */
  cache?: SearchCache;
}

/** POST /v1/search with `strategy: "fanout"`, 200. */
export interface FanoutSearchResponse {
  request_id: string;
  strategy: 'fanout';
  /** The models that answered, in the order asked. */
  models: string[];
  results: FanoutResult[];
  /** The total charged: the sum of the attempts' cost_usd. */
  cost_usd: number;
  /** Every model asked, in the order asked. */
  attempts: FanoutAttempt[];
  duplicates_removed: Integer;
  latency_ms: Integer;
  cache: SearchCache;
  truncated?: true;
}

/** POST /v1/search, 200: a fallback's answer or a fan-out's. */
export type SearchAnswer = SearchResponse | FanoutSearchResponse;

/** POST /v1/search, 200 (the fallback strategy). */
export interface SearchResponse {
  request_id: string;
  /** The model that answered. */
  model: string;
  provider: Provider;
  source: AttemptSource;
  results: SearchResult[];
  /** The total charged for this request. */
  cost_usd: number;
  /** The attempts before the one that answered (empty when the first answered). */
  attempts: Attempt[];
  latency_ms: Integer;
  cache: SearchCache;
  /** Present (true) when max_total_chars cut or dropped the last results. */
  truncated?: true;
}

// ---------------------------------------------------------------------------------------
// Extract (page content for known URLs)

/** POST /v1/extract. At least one of `model` and `models` (extract models). */
export interface ExtractRequest {
  /** 1..20 http or https URLs, each at most 2,048 characters. */
  urls: string[];
  /** An extract model id; tried first. */
  model?: string;
  /** Extract model ids in fallback order: a URL the first cannot fetch is tried at the next. */
  models?: string[];
  /** Default `text`; a model that cannot return it is skipped. */
  format?: ExtractFormat;
  /** 100..100,000, default 20,000. */
  max_chars_per_url?: Integer;
  /** 1..400 characters: rank or trim each page's text by relevance to it; a model that cannot is skipped. */
  query?: string;
  /** Accept provider-cached content at most this many seconds old (0: live); a model without freshness control is skipped. */
  max_age_s?: Integer;
  /** 100..2,000,000: the most characters of text in the whole answer. */
  max_total_chars?: Integer;
  cache?: CacheMode;
  cache_max_age_s?: Integer;
  /** The most this extract may cost, in USD (above 0, at most 1,000, 6 decimals at most); else 402 `max_cost_exceeded`. */
  max_cost_usd?: number;
}

/** One page that came back. */
export interface ExtractResult {
  /** The URL in its normal form. */
  url: string;
  /** The model that fetched it. */
  model: string;
  provider: Provider;
  source: AttemptSource;
  title: string | null;
  text: string;
  published_at: string | null;
  /** The length of `text`. */
  chars: Integer;
  truncated: boolean;
  cache: SearchCache;
}

/** A URL no model could fetch. */
export interface ExtractFailure {
  url: string;
  error: string;
}

/** One model called (or skipped) for the URLs still missing. */
export interface ExtractAttempt {
  model: string;
  source?: AttemptSource;
  status: 'success' | 'error' | 'skipped';
  urls: Integer;
  succeeded: Integer;
  failed: Integer;
  cost_usd: number;
  error?: string;
}

/** POST /v1/extract, 200 (at least one URL came back). */
export interface ExtractResponse {
  request_id: string;
  results: ExtractResult[];
  failed: ExtractFailure[];
  attempts: ExtractAttempt[];
  /** The total charged: the sum of the attempts' cost_usd. */
  cost_usd: number;
  latency_ms: Integer;
  cache: SearchCache;
  truncated: boolean;
}

// ---------------------------------------------------------------------------------------
// Keys

export type LimitReset = 'daily' | 'weekly' | 'monthly';

/** An API key record (never the secret, except `CreatedApiKey`). */
export interface ApiKey {
  /** `key_` + 24 base62 characters. */
  id: string;
  name: string;
  /** The masked secret, e.g. `svc-Ab3x…`. */
  label: string;
  limit_usd: number | null;
  limit_reset: LimitReset | null;
  limit_remaining_usd: number | null;
  /** Spend in the current period (all time when `limit_reset` is null). */
  usage_usd: number;
  limit_resets_at: string | null;
  usage_total_usd: number;
  expires_at: string | null;
  disabled: boolean;
  created_at: string;
  updated_at: string;
  last_used_at: string | null;
  /** The models the key may search (model ids or `<provider>/*`); null: every model. */
  allowed_models: string[] | null;
  /** The client addresses (IPv4/IPv6 CIDRs) the key may be used from; null: any. */
  allowed_ips: string[] | null;
}

/** GET /v1/keys/{id}, PATCH /v1/keys/{id} */
export interface ApiKeyResponse extends ApiKey {
  request_id: string;
}

/** POST /v1/keys, 201: the record and the secret, shown only here. */
export interface CreatedApiKey extends ApiKeyResponse {
  secret: string;
}

/** GET /v1/keys */
export type ApiKeyList = Page<ApiKey>;

/** POST /v1/keys. All fields optional. */
export interface CreateKeyRequest {
  /** 1..100 characters. */
  name?: string;
  /** > 0, or null for no limit. */
  limit_usd?: number | null;
  /** Needs a limit. */
  limit_reset?: LimitReset | null;
  /** A future RFC 3339 timestamp, or null for never. */
  expires_at?: string | null;
  disabled?: boolean;
  /** 1..64 distinct model ids or `<provider>/*`; null removes the fence. Other models are skipped (`model not allowed for this key`), none allowed is 403 `model_not_allowed`. */
  allowed_models?: string[] | null;
  /** 1..32 distinct IPv4/IPv6 CIDRs (a bare address is one host); null removes the fence. Other addresses get 403 `ip_not_allowed`. */
  allowed_ips?: string[] | null;
}

/** PATCH /v1/keys/{id}: the fields present change. `limit_usd: null` also clears `limit_reset`. */
export type UpdateKeyRequest = CreateKeyRequest;

/** DELETE /v1/keys/{id} */
export interface DeletedApiKey {
  id: string;
  deleted: true;
  request_id: string;
}

export interface RateLimit {
  requests_per_second: Integer;
  burst: Integer;
}

/** GET /v1/key with an API key. */
export interface ApiKeyInfo extends ApiKey {
  kind: 'api';
  rate_limit: RateLimit;
  request_id: string;
}

/** GET /v1/key with a management key. */
export interface ManagementKeyInfo {
  kind: 'management';
  /** `mkey_` + 24 base62 characters. */
  id: string;
  name: string;
  label: string;
  expires_at: null;
  disabled: false;
  created_at: string;
  updated_at: string;
  last_used_at: string | null;
  rate_limit: RateLimit;
  request_id: string;
}

/** GET /v1/key: the calling key, discriminated by `kind`. */
export type KeyInfo = ApiKeyInfo | ManagementKeyInfo;

// ---------------------------------------------------------------------------------------
// Provider keys (BYOK)

export interface ProviderKey {
  provider: Provider;
  /** `…` and the last 4 characters; the key itself is never shown. */
  label: string;
  created_at: string;
  updated_at: string;
}

/** GET, PUT /v1/provider-keys/{provider} */
export interface ProviderKeyResponse extends ProviderKey {
  request_id: string;
}

/** GET /v1/provider-keys */
export interface ProviderKeyList {
  data: ProviderKey[];
  /** Always null: an account has at most one key per provider. */
  next_cursor: null;
  request_id: string;
}

/** PUT /v1/provider-keys/{provider} */
export interface SetProviderKeyRequest {
  key: string;
}

/** DELETE /v1/provider-keys/{provider} */
export interface DeletedProviderKey {
  provider: Provider;
  deleted: true;
  request_id: string;
}

// ---------------------------------------------------------------------------------------
// Credits, checkout, usage

/** GET /v1/credits */
export interface Credits {
  /** What the account can spend now. */
  balance_usd: number;
  /** Held by searches in flight. */
  reserved_usd: number;
  total_purchased_usd: number;
  total_spent_usd: number;
  request_id: string;
}

/** POST /v1/credits/checkout */
export interface CheckoutRequest {
  /** 5..10,000, whole cents. */
  amount_usd: number;
  success_url?: string;
  cancel_url?: string;
}

/** POST /v1/credits/checkout, 201. */
export interface CheckoutSession {
  /** `chk_…` */
  id: string;
  /** Send the buyer here. */
  url: string;
  amount_usd: number;
  expires_at: string;
  request_id: string;
}

export type UsageGroupBy = 'day' | 'model' | 'key' | 'kind';

/** What a settled request was: a search, an extract, or a research run. */
export type RequestKind = 'search' | 'extract' | 'research';

/** GET /v1/usage query. */
export interface UsageQuery {
  /** `YYYY-MM-DD` (UTC); default 30 days before `to`. */
  from?: string;
  /** `YYYY-MM-DD` (UTC), inclusive; default today. */
  to?: string;
  group_by?: UsageGroupBy;
  /** Only this API key's usage. */
  key_id?: string;
}

/** One row of usage: the group field matches `group_by`. */
export interface UsageRow {
  date?: string;
  model?: string;
  key_id?: string;
  /** With group_by `kind`. */
  kind?: RequestKind;
  /** Requests settled (searches, extracts and research runs). */
  searches: Integer;
  failed_attempts: Integer;
  cost_usd: number;
  /** The part of cost_usd charged as BYOK fees (attempts with the account's own provider key). */
  byok_fee_usd: number;
  /** Searches answered from the result cache (hit or joined). */
  cache_hits: Integer;
  /** What those searches saved against the provider's price of the same answers. */
  cache_saved_usd: number;
}

/** GET /v1/usage */
export interface Usage {
  from: string;
  to: string;
  data: UsageRow[];
  total: { searches: Integer; cost_usd: number; byok_fee_usd: number; cache_hits: Integer; cache_saved_usd: number };
  request_id: string;
}

// ---------------------------------------------------------------------------------------
// Research runs

/** `queued`, `running`; then one of the settled statuses, whose `cost_usd` is final. */
export type ResearchStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

/** POST /v1/research. At least one of `model` and `models`. */
export interface ResearchRequest {
  /** The question or task, 1..8,000 characters after trimming. */
  input: string;
  /** A research model id (GET /v1/models, kind `research`); tried first. */
  model?: string;
  /** 1..5 research model ids, in fallback order. */
  models?: string[];
  /** The hard cap in USD: the run never costs more. */
  max_cost_usd: number;
  /** A JSON Schema for structured output (at most 16 KiB as JSON, nested at most 10 deep). */
  output_schema?: Record<string, unknown>;
  /** Your own labels (at most 16), returned with the run. */
  metadata?: Record<string, string>;
}

/** GET /v1/research's query. */
export interface ResearchListQuery extends PageQuery {
  /** Only runs in this status. */
  status?: ResearchStatus;
}

/** One model of a run: tried, skipped or waiting its turn. */
export interface ResearchAttempt {
  model: string;
  provider: 'exa' | 'tavily';
  status: 'pending' | 'skipped' | 'running' | 'completed' | 'failed' | 'cancelled';
  /** Why it was skipped or failed, or how it was cancelled. */
  error: string | null;
  /** What this attempt was charged; null until it ended. */
  cost_usd: number | null;
}

/** A page the answer cites. */
export interface ResearchSource {
  url: string;
  title: string | null;
}

/** A research run without its output (an element of GET /v1/research). */
export interface ResearchRunSummary {
  id: string;
  object: 'research_run';
  status: ResearchStatus;
  input: string;
  models: string[];
  /** The model that answered; else the one running or next to run; else the last that failed or was cancelled; null when none ran. */
  model: string | null;
  max_cost_usd: number;
  /** What the run holds from the balance now (0 once settled). */
  held_usd: number;
  /** What the run was charged, never above `max_cost_usd`; null until settled. */
  cost_usd: number | null;
  attempts: ResearchAttempt[];
  error: string | null;
  metadata: Record<string, string> | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  cancel_requested_at: string | null;
  request_id?: string;
}

/** A research run (POST /v1/research, GET /v1/research/{id}, the cancel answer, and the data of `research.completed` / `research.failed`). */
export interface ResearchRun extends ResearchRunSummary {
  /** Null until the run completed. `structured` follows `output_schema` (null without one). */
  output: { text: string | null; structured: unknown } | null;
  sources: ResearchSource[];
}

/** GET /v1/research */
export interface ResearchRunList {
  data: ResearchRunSummary[];
  next_cursor: string | null;
  request_id: string;
}

// ---------------------------------------------------------------------------------------
// The endpoints, as data

/** Which key an endpoint takes: none, an API key, a management key, or either. */
export type EndpointKey = 'none' | 'api' | 'management' | 'either';

/** One public endpoint and the names of its types in this file. */
export interface Endpoint {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** With `{id}` / `{provider}` path parameters. */
  path: string;
  key: EndpointKey;
  /** The success status. */
  status: 200 | 201 | 202;
  /** The request body's type, or null without a body. */
  request: string | null;
  /** The query's type, or null without one. */
  query: string | null;
  /** The success body's type. */
  response: string;
}

/**
 * Every public endpoint the client calls, with the names of the types above that describe
 * it, so that a contract test can compare each with a machine-readable API description.
 */
export const ENDPOINTS: readonly Endpoint[] = [
  { method: 'GET', path: '/v1/models', key: 'none', status: 200, request: null, query: null, response: 'ModelList' },
  { method: 'GET', path: '/v1/credits/pricing', key: 'none', status: 200, request: null, query: null, response: 'Pricing' },
  { method: 'GET', path: '/v1/status', key: 'none', status: 200, request: null, query: null, response: 'ServiceStatus' },
  { method: 'POST', path: '/v1/search', key: 'api', status: 200, request: 'SearchRequest', query: null, response: 'SearchAnswer' },
  { method: 'POST', path: '/v1/extract', key: 'api', status: 200, request: 'ExtractRequest', query: null, response: 'ExtractResponse' },
  { method: 'POST', path: '/v1/research', key: 'api', status: 202, request: 'ResearchRequest', query: null, response: 'ResearchRun' },
  { method: 'GET', path: '/v1/research', key: 'either', status: 200, request: null, query: 'ResearchListQuery', response: 'ResearchRunList' },
  { method: 'GET', path: '/v1/research/{id}', key: 'either', status: 200, request: null, query: null, response: 'ResearchRun' },
  { method: 'POST', path: '/v1/research/{id}/cancel', key: 'either', status: 200, request: null, query: null, response: 'ResearchRun' },
  { method: 'GET', path: '/v1/credits', key: 'either', status: 200, request: null, query: null, response: 'Credits' },
  { method: 'GET', path: '/v1/key', key: 'either', status: 200, request: null, query: null, response: 'KeyInfo' },
  { method: 'GET', path: '/v1/usage', key: 'either', status: 200, request: null, query: 'UsageQuery', response: 'Usage' },
  { method: 'POST', path: '/v1/credits/checkout', key: 'management', status: 201, request: 'CheckoutRequest', query: null, response: 'CheckoutSession' },
  { method: 'GET', path: '/v1/keys', key: 'management', status: 200, request: null, query: 'PageQuery', response: 'ApiKeyList' },
  { method: 'POST', path: '/v1/keys', key: 'management', status: 201, request: 'CreateKeyRequest', query: null, response: 'CreatedApiKey' },
  { method: 'GET', path: '/v1/keys/{id}', key: 'management', status: 200, request: null, query: null, response: 'ApiKeyResponse' },
  { method: 'PATCH', path: '/v1/keys/{id}', key: 'management', status: 200, request: 'UpdateKeyRequest', query: null, response: 'ApiKeyResponse' },
  { method: 'DELETE', path: '/v1/keys/{id}', key: 'management', status: 200, request: null, query: null, response: 'DeletedApiKey' },
  { method: 'GET', path: '/v1/provider-keys', key: 'management', status: 200, request: null, query: null, response: 'ProviderKeyList' },
  { method: 'GET', path: '/v1/provider-keys/{provider}', key: 'management', status: 200, request: null, query: null, response: 'ProviderKeyResponse' },
  { method: 'PUT', path: '/v1/provider-keys/{provider}', key: 'management', status: 200, request: 'SetProviderKeyRequest', query: null, response: 'ProviderKeyResponse' },
  { method: 'DELETE', path: '/v1/provider-keys/{provider}', key: 'management', status: 200, request: null, query: null, response: 'DeletedProviderKey' },
  { method: 'GET', path: '/v1/audit-log', key: 'management', status: 200, request: null, query: 'AuditLogQuery', response: 'AuditLogPage' },
];

// ---- events and webhooks (docs/api.md section 17) ----

export const WEBHOOK_EVENT_TYPES = ['balance.low', 'key.limit.threshold', 'credits.purchased', 'auto_topup.succeeded', 'auto_topup.failed', 'research.completed', 'research.failed'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** An event as delivered (and as `GET /v1/events` lists it). */
export interface WebhookEvent {
  id: string;
  object: 'event';
  type: WebhookEventType | (string & {});
  account_id: string;
  created_at: string;
  data: Record<string, unknown>;
}

/** A webhook endpoint (`secret` only in the answers of create and rotate-secret). */
export interface WebhookEndpoint {
  id: string;
  object: 'webhook_endpoint';
  url: string;
  events: WebhookEventType[];
  enabled: boolean;
  disabled_reason: 'failing' | null;
  failing_since: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
  secret?: string;
}

export interface WebhookAttempt {
  attempted_at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_head: string | null;
}

export interface WebhookDelivery {
  id: string;
  event_id: string;
  event_type: WebhookEventType;
  status: 'pending' | 'succeeded' | 'failed' | 'cancelled';
  attempt_count: number;
  created_at: string;
  last_attempt_at: string | null;
  attempts: WebhookAttempt[];
}

/** Automatic top-up as `GET /v1/billing/settings` shows it (docs/api.md section 17.5). */
export interface AutoTopupSettings {
  enabled: boolean;
  threshold_usd: number | null;
  amount_usd: number | null;
  monthly_cap_usd: number | null;
  /** The saved card (never its number); null until one is saved (POST /v1/billing/auto-topup/setup or the dashboard). */
  payment_method: { brand: string | null; last4: string | null; saved_at: string } | null;
  /** Pending and succeeded top-ups of the current UTC month: what the cap counts. */
  month_to_date_usd: number;
  consecutive_failures: number;
  /** `payment_failed`: turned off after consecutive failed top-ups; saving the settings again clears it. */
  disabled_reason: 'payment_failed' | null;
  last_topup: { id: string; status: 'pending' | 'succeeded' | 'failed' | 'skipped'; amount_usd: number; failure_code: string | null; created_at: string } | null;
}

export interface BillingSettings {
  low_balance_threshold_usd: number | null;
  auto_topup: AutoTopupSettings;
}

/** `PATCH /v1/billing/settings`: the fields to change. */
export interface BillingSettingsUpdate {
  low_balance_threshold_usd?: number | null;
  auto_topup?: { enabled?: boolean; threshold_usd?: number; amount_usd?: number; monthly_cap_usd?: number };
}

/** `POST /v1/billing/auto-topup/setup` (or the dashboard's): Stripe's page where the owner saves a card. */
export interface AutoTopupSetup {
  object: 'auto_topup_setup';
  url: string;
  expires_at: string;
}
