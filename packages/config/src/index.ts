export { parseEnv, loadEnvOrExit, readSetting, ConfigError, int, str, bool, url, secret, oneOf, redisUrls } from './env-schema';
export type { EnvSchema, EnvOf, Field } from './env-schema';
