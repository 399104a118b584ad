import { freePort } from './ports';
import { redisUrl } from './redis';

/**
 * The environment every service a test starts in its own process shares: a free loopback port
 * for each variable of `ports` (PORT, GRPC_PORT, …), HOST, its database, REDIS_URL on Redis
 * database `redisDb`, INTERNAL_TOKEN, and LOG_LEVEL from TEST_LOG_LEVEL (default silent).
 */
export async function inProcessServiceEnv(
  ports: readonly string[],
  { databaseUrl, redisDb, internalToken }: { databaseUrl: string; redisDb: number; internalToken: string },
): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const name of ports) env[name] = String(await freePort());
  return {
    ...env, HOST: '127.0.0.1', DATABASE_URL: databaseUrl, REDIS_URL: redisUrl(redisDb), INTERNAL_TOKEN: internalToken,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
  };
}
