export { BraveAdapter, BRAVE_PRODUCTION_BASE_URL } from './brave.adapter';
export { ExaAdapter, ExaContentsAdapter, EXA_PRODUCTION_BASE_URL } from './exa.adapter';
export { TavilyAdapter, TavilyExtractAdapter, TAVILY_PRODUCTION_BASE_URL } from './tavily.adapter';
export { normaliseUrl } from './page-url';
export { cutPassages, cutText } from './result-fields';
export { ProviderRegistry } from './provider-registry';
export { TimedProvider } from './timed-provider';
export type { ProviderCallObserver } from './timed-provider';
export type { ProviderSetting, ProviderSettings } from './provider-registry';
export type { ProviderHttpOptions } from './provider-http';
export type {
  ExtractOutcome,
  ExtractProvider,
  ExtractSuccess,
  FetchedPage,
  ProviderExtractRequest,
  NormalizedResult,
  ProviderFailure,
  ProviderFailureKind,
  ProviderOutcome,
  ProviderSearchRequest,
  ProviderSuccess,
  SearchProvider,
} from './search-provider';
