export { AuthChain, authError } from './auth/auth-chain';
export type { AuthOutcome, AuthFailure, AuthChainDeps } from './auth/auth-chain';
export { KeyCache } from './auth/key-cache';
export { RedisKeyRecordStore } from './auth/key-record.store';
export type { KeyRecordStore, StoreRead } from './auth/key-record.store';
export { GrpcKeyOwner } from './auth/key-lookup.grpc';
export type { KeyOwner, OwnerLookup } from './auth/key-lookup.grpc';
export { createGateway } from './app';
export { parseGatewayConfig } from './config';
export type { GatewayConfig } from './config';
export { SEARCH_BODY_SCHEMA, MAX_QUERY_CHARS, searchValidatorCompiler } from './search/search.schema';
export { EXTRACT_BODY_SCHEMA } from './search/extract.schema';
export {
  WEB_SEARCH_INPUT_SCHEMA, WEB_SEARCH_OUTPUT_SCHEMA, WEB_FETCH_INPUT_SCHEMA, WEB_FETCH_OUTPUT_SCHEMA, LIST_MODELS_OUTPUT_SCHEMA, GET_CREDITS_OUTPUT_SCHEMA, MCP_DEFAULT_TOTAL_CHARS,
} from './mcp/mcp.tools';
export { FORWARD_ROUTES } from './forward/forward.routes';
export { SearchMetrics } from './search/search.metrics';
export type { SearchRefusal, SearchReply, SearchResult } from './search/search.service';
export type { AttemptResult } from './search/search.outcome';
export { cacheDigest, normaliseQuery } from './cache/cache.key';
export { entryValue } from './cache/result-cache';
