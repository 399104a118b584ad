/**
 * The bounds of the platform's API, declared once. The DTOs of account-admin and billing
 * (through @svc/http-edge's field decorators, which also write their OpenAPI properties),
 * the gateway's pricing answer, the dashboard (which imports this file) and the tests read
 * them from here; docs/api.md states the same numbers in prose. This file imports nothing,
 * so the dashboard's bundler can take it as it is.
 */
export const LIMITS = {
  /** A key's name (API and management keys), in characters. */
  keyName: { min: 1, max: 100 },
  /** A key's credit limit in USD: above 0, at most this. */
  keyLimitUsd: { max: 1_000_000_000 },
  /** One credit purchase (Stripe Checkout) in USD, whole cents. */
  purchaseUsd: { min: 5, max: 10_000 },
  /** The page size of every list (`limit`). */
  pageSize: { min: 1, max: 100, default: 20 },
  /** A dashboard password, in characters. */
  password: { min: 12, max: 1_024 },
  /** An email address, in characters (RFC 5321's path limit). */
  email: { max: 254 },
  /** The token of a mailed link (sign-up confirmation, password reset) as a page posts it: 43 characters; longer is refused before any lookup. */
  linkToken: { min: 1, max: 128 },
  /** A provider's API key stored for BYOK, in characters. */
  providerKey: { min: 1, max: 512 },
  /** A checkout success or cancel URL, in characters. */
  url: { max: 2_048 },
  /** The days of a usage range (`from`..`to` inclusive). */
  usageRangeDays: { default: 30, max: 366 },
  /** An operator grant in USD: above 0, at most this. */
  grantUsd: { max: 1_000_000 },
  /** An operator grant's reason, in characters. */
  grantReason: { min: 1, max: 500 },
  /** An account's name (operator API), in characters. */
  accountName: { min: 1, max: 200 },
  /** A webhook endpoint's URL, in characters. */
  webhookUrl: { max: 2_048 },
  /** Webhook endpoints per account. */
  webhookEndpoints: { max: 16 },
  /** An account's low-balance threshold in USD (balance.low), whole cents. */
  lowBalanceThresholdUsd: { min: 0, max: 1_000_000 },
  /** Automatic top-up (billing settings' `auto_topup`), whole cents: what one top-up charges. */
  autoTopupAmountUsd: { min: 5, max: 10_000 },
  /** Automatic top-up: the balance below which a top-up is made. */
  autoTopupThresholdUsd: { min: 0, max: 1_000_000 },
  /** Automatic top-up: the most its top-ups may charge in one calendar month (UTC); at least the amount. */
  autoTopupMonthlyCapUsd: { min: 5, max: 1_000_000 },
  /** Automatic top-up stops after this many consecutive failed top-ups, until the owner saves its settings again. */
  autoTopupFailures: { max: 2 },
  /** An API key's `allowed_ips`: this many IPv4/IPv6 CIDRs at most (or null: any address). */
  allowedIps: { min: 1, max: 32 },
  /** An API key's `allowed_models`: this many model ids or `<provider>/*` at most (or null: any model). */
  allowedModels: { min: 1, max: 64 },
  /** One entry of `allowed_models`, in characters. */
  modelFenceEntry: { max: 64 },
  /** One CIDR of `allowed_ips` or `TRUSTED_PROXIES`, in characters (the longest IPv6 form and a prefix). */
  cidr: { max: 64 },
  /** The audit log's retention in days (AUDIT_RETENTION_DAYS): entries older than this may be purged. */
  auditRetentionDays: { min: 1, max: 36_500, default: 400 },
  /** POST /v1/extract: the URLs of one request (each http or https). */
  extractUrls: { min: 1, max: 20 },
  /** One URL of POST /v1/extract, in characters (as sent). */
  extractUrlChars: { max: 2_048 },
  /** POST /v1/extract `max_chars_per_url`: the most characters of text one page returns. */
  extractCharsPerUrl: { min: 100, max: 100_000, default: 20_000 },
  /** POST /v1/extract `query` (rank or trim each page's text by relevance to it), in characters after trimming. */
  extractQuery: { min: 1, max: 400 },
  /** POST /v1/extract `max_age_s`: accept provider-cached content at most this many seconds old (0: fetch live); a year at most. */
  extractMaxAgeS: { min: 0, max: 31_536_000 },
  /** POST /v1/search `max_chars_per_result`: the most characters of `text`, or of all `highlights`, one result carries. */
  searchCharsPerResult: { min: 100, max: 20_000, default: 5_000 },
  /** `max_total_chars` of a search or an extract: the most characters of text the whole answer carries. */
  maxTotalChars: { min: 100, max: 2_000_000 },
  /**
   * The default `max_total_chars` of the MCP tools web_search and web_fetch: a tool result shows
   * the text twice (its text block and its structured content), so at most about 40,000
   * characters of page text, under 25,000 tokens of output at 2 characters a token or more
   * (English runs about 4): a client's cap on a tool's output is about 25,000 tokens.
   */
  mcpTotalChars: { default: 20_000 },
  /** POST /v1/search with `strategy: "fanout"`: how many models (`model` and `models` together, each once) are called at once. */
  fanoutModels: { min: 2, max: 5 },
  /**
   * POST /v1/search `fanout_wait_ms`: how long a fan-out waits for its models once they are called,
   * in milliseconds; a model still running then is cancelled (its attempt a timeout). The default is
   * the gateway's FANOUT_WAIT_MS, whose own default is this `default`.
   */
  fanoutWaitMs: { min: 100, max: 60_000, default: 10_000 },
  /**
   * `max_cost_usd` of a search or an extract (fallback or fan-out), and a research run's required
   * cap: the most the request may cost. Above 0, at most this, whole micro-USD (at most 6 decimals).
   */
  maxCostUsd: { max: 1_000 },
  /** A research run's `input` (POST /v1/research), in characters after trimming. */
  researchInput: { min: 1, max: 8_000 },
  /** A research run's `models`: research model ids in fallback order. */
  researchModels: { min: 1, max: 5 },
  /** A research run's `output_schema`: its JSON text at most this many bytes, nested at most this deep. */
  researchOutputSchema: { maxBytes: 16_384, maxDepth: 10 },
  /** A research run's `metadata`: at most this many keys, each 1..`keyMax` characters, each value a string of at most `valueMax`. */
  researchMetadata: { maxKeys: 16, keyMax: 40, valueMax: 500 },
  /** How long `wait` in the SDK and CLI polls a research run by default (seconds), and at most. */
  researchWaitSeconds: { default: 600, max: 7_200 },
} as const;
