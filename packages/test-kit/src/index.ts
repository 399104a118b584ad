export { freePort } from './ports';
export { startProcess } from './processes';
export type { RunningProcess, StartProcessOptions } from './processes';
export { recreateDatabase, databaseUrl, POSTGRES_BASE_URL } from './databases';
export { redisUrl, REDIS_BASE_URL } from './redis';
export { waitFor } from './wait';
export { repoRoot } from './paths';
export { startStack, call, bearer, newAccount, newApiKey } from './stack';
export type { Stack, StackOptions, JsonResponse } from './stack';
