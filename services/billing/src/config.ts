import { bool, int, oneOf, parseEnv, secret, str, url } from '@svc/config';
import type { EnvOf } from '@svc/config';

/** billing's environment, parsed once at start (main.ts) or from a test's own object. */
export const BILLING_ENV = {
  PORT: int({ default: 3002, min: 0, max: 65535 }),
  OPERATOR_PORT: int({ default: 8081, min: 0, max: 65535 }),
  HOST: str({ default: '0.0.0.0' }),
  DATABASE_URL: url({ default: 'postgresql://postgres@127.0.0.1:5432/svc_billing', protocols: ['postgresql', 'postgres'] }),
  REDIS_URL: url({ default: 'redis://127.0.0.1:6379', protocols: ['redis', 'rediss'] }),
  INTERNAL_TOKEN: secret({ minLength: 16 }),
  OPERATOR_TOKEN: secret({ minLength: 16 }),
  ACCOUNT_ADMIN_GRPC_URL: str({ default: '127.0.0.1:50051' }),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
  MIGRATE_ON_START: bool({ default: false }),
};

type ParsedEnv = EnvOf<typeof BILLING_ENV>;

/** The parsed environment; both secrets are required, so they are plain strings here. */
export type BillingConfig = Omit<ParsedEnv, 'INTERNAL_TOKEN' | 'OPERATOR_TOKEN'> & {
  readonly INTERNAL_TOKEN: string;
  readonly OPERATOR_TOKEN: string;
};

/** Throws a ConfigError naming the first bad variable (never echoing a secret). */
export function parseBillingConfig(source: NodeJS.ProcessEnv = process.env): BillingConfig {
  const env = parseEnv(BILLING_ENV, source);
  const { INTERNAL_TOKEN, OPERATOR_TOKEN } = env;
  // secret() without `optional` never yields undefined; this narrows the type.
  if (INTERNAL_TOKEN === undefined || OPERATOR_TOKEN === undefined) throw new Error('unreachable: required secret missing');
  return { ...env, INTERNAL_TOKEN, OPERATOR_TOKEN };
}
