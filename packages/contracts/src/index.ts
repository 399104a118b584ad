export {
  CATALOG, PROVIDERS, findModel, isProvider, maxCostMicros, costMicros, resultCap, byokFeeMicros, cachePriceMicros, DEFAULT_CACHE_PRICE_PERCENT,
  MODEL_KINDS, SEARCH_CONTENTS, SEARCH_STRATEGIES, EXTRACT_FORMATS, EXTRACT_OPTIONS, EXTRACT_CATALOG, MODELS, findExtractModel, isModelId, extractCostMicros, extractCachePriceMicros,
} from './catalog';
export type { Provider, ModelSpec, ModelKind, SearchContents, SearchStrategy, ExtractFormat, ExtractOption, ExtractModelSpec, CatalogModel } from './catalog';
export { KEY_CHANGES_CHANNEL, evaluateKey, isKeyChangeMessage, LIMIT_RESETS } from './key-record';
export type { KeyRecord, KeyLookup, KeyChangeMessage, LimitReset, RequiredKind, KeyVerdict } from './key-record';
export { periodOf, KEY_PERIOD_COUNTER_GRACE_MS } from './key-periods';
export type { Period } from './key-periods';
export { redisKeys } from './redis-keys';
export { INTERNAL_HEADERS } from './internal-headers';
export { RESERVATION_TTL_GRACE_MS, SETTLEMENT_FIELD, SETTLEMENT_DIRTY_SET, SETTLEMENT_STREAMS_SET, LEDGER_QUEUE, RECONCILE_QUEUE, QUEUE_PREFIX, LEDGER_JOBS, isSettlementRecord, CACHE_STATUSES, RECORD_KINDS, REQUEST_KINDS, recordKind } from './settlement';
export type { SettledAttempt, SettlementRecord, LedgerJobName, LedgerJobPayload, CacheStatus, RequestKind } from './settlement';
export { recoveryKeys, SETTLE_CONFIRM_TTL_SECONDS, SETTLE_CONFIRM_BUCKET_MS, ENSURE_EPOCH_LUA, epochCreatedMs, ShardEpochs } from './recovery';
export { LIMITS } from './limits';
export type { ManagementKeyView, ActivityAttemptView, ActivityView, PurchaseView, DailySpendView, ConsentView, ConnectedAppView } from './dashboard-views';
export { PROVIDER_KEY_CHANGES_CHANNEL, isProviderKeyChangeMessage } from './provider-keys';
export type { ProviderKeyChangeMessage } from './provider-keys';
export {
  FILTER_NAMES, FILTER_SCHEMAS, FILTER_DESCRIPTIONS, FILTER_HINTS, MAX_FILTER_DOMAINS, SAFESEARCH_LEVELS, COUNTRY_CODES, LANGUAGE_CODES,
  HOSTNAME_PATTERN, RFC3339_DATE_OR_DATE_TIME_PATTERN, FilterError, canonicalFilters, isCanonicalFilters, filterNamesOf, filterInstantMs, unsupportedFilters, hostnameMatches, resultWithinFilters,
} from './filters';
export type { FilterName, SafeSearch, SearchFilters } from './filters';
export { providerHealthKeys, BREAKER_MODES, MODEL_STATUSES, HEALTH_LATENCY_BUCKETS_MS, HEALTH_MINUTE_TTL_MS } from './provider-health';
export type { HealthSource, BreakerMode, ModelStatus } from './provider-health';
export { OAUTH_PATHS, OAUTH_LIFETIMES, OAUTH_LIMITS } from './oauth';
export {
  WEBHOOK_EVENT_TYPES, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_QUEUE, WEBHOOK_DISPATCH_QUEUE, THRESHOLDS_QUEUE, AUTO_TOPUP_QUEUE, WEBHOOK_ACCOUNT_CONCURRENCY, WEBHOOK_SECRET_OVERLAP_MS, WEBHOOK_RETRY_WINDOW_MS, WEBHOOK_RETRY_BASE_DELAY_MS,
  WEBHOOK_RETRY_MAX_DELAY_MS, WEBHOOK_RESPONSE_HEAD_BYTES, WEBHOOK_TIMEOUT_MS, KEY_LIMIT_THRESHOLD_PERCENTS, isWebhookEventType,
} from './webhooks';
export type { WebhookEventType } from './webhooks';
export { ANSWER_SCHEMAS, API_KEY_FIELDS, MODEL_PRICING_FIELDS, RESEARCH_PRICING_FIELDS, REQUEST_ID_SCHEMA, closedObject, inlineAnswerSchema } from './answers';
export type { AnswerSchema, AnswerSchemaName } from './answers';
export { MODEL_NOT_ALLOWED_MESSAGE, isModelFenceEntry, modelAllowed } from './key-fences';
export { AUDIT_ACTOR_KINDS, AUDIT_ACTIONS, AUDIT_CSV_COLUMNS, auditView, isAuditAction, isAuditActorKind } from './audit';
export type { AuditActor, AuditActorKind, AuditAction, AuditDraft, AuditRow, AuditValue, AuditChange, AuditEntryView } from './audit';
export { RESERVATION_RULE_LUA } from './money-rules';
export { keyFactsHeaders, parseKeyFacts } from './key-facts';
export type { KeyFacts } from './key-facts';
export {
  RESEARCH_PROVIDERS, RESEARCH_METERING, RESEARCH_MODELS, RESEARCH_RULES, RESEARCH_STATUSES, RESEARCH_TERMINAL_STATUSES, RESEARCH_ATTEMPT_STATUSES,
  RESEARCH_QUEUES, RESEARCH_JOB, DEFAULT_RESEARCH_RUN_TIMEOUT_MS, TAVILY_CREDIT_MICROS, TAVILY_CREDIT_PROVIDER_MICROS,
  findResearchModel, minCapMicros, researchReservationKey, attemptMoney, atOurRateMicros, providerCostMicros, dollarsToMicros,
} from './research';
export type { ResearchProvider, ResearchMetering, ResearchModelSpec, ResearchStatus, ResearchAttemptStatus, AttemptMoney } from './research';
export {
  MAIL_QUEUE, ALERT_MAIL_QUEUE, MAIL_QUEUE_PREFIX, MAIL_JOB_NAMES, MAIL_JOB_OPTIONS, ALERT_EVENT_TYPES, EMAIL_ALERT_DEFAULTS, ACCOUNT_MAIL_KINDS, alertJobId, isAlertEventType,
} from './mail';
export type { AlertEvent, AlertEventType, AccountMailKind, MailKind, MailJobs, MailJobName, MailJobData } from './mail';
