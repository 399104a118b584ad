export { refusalError, registerSearchRoutes } from './search.routes';
export type { RateLimitHeaders } from './search.routes';
export { SearchService } from './search.service';
export type { SearchSettings, SearchReply, SearchRefusal, SearchResult, SearchCall, RateLimitState } from './search.service';
export { SearchMetrics } from './search.metrics';
export { SearchLifecycle } from './search.lifecycle';
export { decideOutcome, attemptView } from './search.outcome';
export type { AttemptResult, AttemptSource, SkipReason, SearchOutcome } from './search.outcome';
