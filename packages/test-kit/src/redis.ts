export const REDIS_BASE_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * A Redis URL on a numbered database. Conventions: 1 account-admin integration tests,
 * 2 search-gateway, 3 billing, 4 and up end-to-end suites. Pub/sub is shared by all
 * databases, so channels carry no per-test state.
 */
export function redisUrl(db: number): string {
  return `${REDIS_BASE_URL}/${db}`;
}
