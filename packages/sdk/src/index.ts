export { SearchGateway, KeysApi, ProviderKeysApi, AuditLogApi, ResearchApi, DEFAULT_BASE_URL, DEFAULT_TIMEOUT_MS, RESEARCH_WAIT_DEFAULTS } from './client.js';
export type { SearchGatewayOptions, RequestOptions, SearchOptions, FetchLike, ResearchWaitOptions } from './client.js';
export { SearchGatewayError, SearchGatewayConnectionError, SearchGatewayTimeoutError, ResearchWaitTimeoutError, isKnownErrorCode } from './errors.js';
export type { ErrorCodeOrUnknown, SearchGatewayErrorInit } from './errors.js';
export { isRetryableStatus, parseRetryAfter, retryDelayMs, BASE_DELAY_MS, JITTER, MAX_WAIT_MS, DEFAULT_MAX_RETRIES } from './retry.js';
export { ERROR_CODES, FILTER_NAMES, PROVIDERS, ENDPOINTS, WEBHOOK_EVENT_TYPES } from './types.js';
export type * from './types.js';
export { verifyWebhook, WebhookSignatureError, WEBHOOK_SIGNATURE_HEADER, DEFAULT_WEBHOOK_TOLERANCE_SECONDS } from './webhooks.js';
export type { WebhookSignatureFailure, VerifyWebhookOptions } from './webhooks.js';
