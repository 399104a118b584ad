export { CATALOG, PROVIDERS, findModel, isProvider, maxCostMicros, costMicros, resultCap } from './catalog';
export type { Provider, ModelSpec } from './catalog';
export { KEY_CHANGES_CHANNEL, evaluateKey, isKeyChangeMessage, LIMIT_RESETS } from './key-record';
export type { KeyRecord, KeyLookup, KeyChangeMessage, LimitReset, RequiredKind, KeyVerdict } from './key-record';
export { periodOf } from './key-periods';
export type { Period } from './key-periods';
export { redisKeys } from './redis-keys';
export { INTERNAL_HEADERS } from './internal-headers';
