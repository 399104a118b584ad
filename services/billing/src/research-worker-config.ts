import { bool, ConfigError, int, oneOf, parseEnv, secret, str, url, redisUrls } from '@svc/config';
import type { EnvOf } from '@svc/config';
import { DEFAULT_RESEARCH_RUN_TIMEOUT_MS } from '@svc/contracts';

/**
 * The research worker's environment (dist/research-worker.js; docs/decisions/0062), parsed once
 * at start (src/research-worker.ts). The providers' keys and base URLs have the gateway's names:
 * a deployment gives both the same values.
 */
export const RESEARCH_WORKER_ENV = {
  /** /healthz and /readyz only; the deploy files expect 3004. */
  PORT: int({ default: 3004, min: 0, max: 65535 }),
  HOST: str({ default: '0.0.0.0' }),
  /** Prometheus text at GET /metrics on this port. */
  METRICS_PORT: int({ default: 9468, min: 0, max: 65535 }),
  DATABASE_URL: url({ default: 'postgresql://postgres@127.0.0.1:5432/svc_billing', protocols: ['postgresql', 'postgres'] }),
  /** One Redis, or with REDIS_CLUSTER=true a comma-separated list of seed nodes of a Redis Cluster (any node will do). */
  REDIS_URL: redisUrls({ default: 'redis://127.0.0.1:6379' }),
  REDIS_CLUSTER: bool({ default: false }),
  HTTP_REQUEST_TIMEOUT_MS: int({ default: 30_000, min: 100, max: 600_000 }),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
  /** After SIGTERM: how long the worker stays unready while its current steps finish, before it closes. */
  SHUTDOWN_DELAY_MS: int({ default: 2_000, min: 0, max: 600_000 }),
  EXA_API_KEY: secret({ optional: true }),
  EXA_BASE_URL: url({ default: 'https://api.exa.ai', protocols: ['http', 'https'] }),
  TAVILY_API_KEY: secret({ optional: true }),
  TAVILY_BASE_URL: url({ default: 'https://api.tavily.com', protocols: ['http', 'https'] }),
  /** A run's bound from its creation: past it the run is cancelled (Exa) or abandoned (Tavily) and settled. */
  RESEARCH_RUN_TIMEOUT_MS: int({ default: DEFAULT_RESEARCH_RUN_TIMEOUT_MS, min: 10_000, max: 86_400_000 }),
  /** The first poll comes this long after a start; each next one half as long again as the one before, up to RESEARCH_POLL_MAX_MS. */
  RESEARCH_POLL_MIN_MS: int({ default: 2_000, min: 50, max: 600_000 }),
  RESEARCH_POLL_MAX_MS: int({ default: 30_000, min: 50, max: 3_600_000 }),
  /** One call to a provider must answer within this. */
  RESEARCH_CALL_TIMEOUT_MS: int({ default: 20_000, min: 100, max: 300_000 }),
  /** Passing refusals of a start (429, 5xx, unreachable) before the next model is tried. */
  RESEARCH_START_TRIES: int({ default: 8, min: 1, max: 100 }),
  /** Exa's documented request rate for the Agent endpoints, per second (all workers together). */
  RESEARCH_EXA_REQUESTS_PER_SECOND: int({ default: 5, min: 1, max: 10_000 }),
  /** Tavily's documented request rate for research, per minute (all workers together). */
  RESEARCH_TAVILY_REQUESTS_PER_MINUTE: int({ default: 20, min: 1, max: 100_000 }),
  /** Steps one worker process runs at once on each provider's queue. */
  RESEARCH_CONCURRENCY: int({ default: 8, min: 1, max: 1_000 }),
  /** How often the worker re-queues every open run whose job is gone (a Redis that lost its data, a job given up). */
  RESEARCH_SWEEP_INTERVAL_MS: int({ default: 10_000, min: 100, max: 3_600_000 }),
  /** BullMQ's job lock: a step whose worker died is taken again this long after its last renewal (and its stalled check's interval, half of it). */
  RESEARCH_JOB_LOCK_MS: int({ default: 30_000, min: 1_000, max: 600_000 }),
};

export type ResearchWorkerConfig = EnvOf<typeof RESEARCH_WORKER_ENV>;

/** Throws a ConfigError naming the first bad variable (never echoing a secret). */
export function parseResearchWorkerConfig(source: NodeJS.ProcessEnv): ResearchWorkerConfig {
  const config = parseEnv(RESEARCH_WORKER_ENV, source);
  if (config.RESEARCH_POLL_MAX_MS < config.RESEARCH_POLL_MIN_MS) {
    throw new ConfigError('RESEARCH_POLL_MAX_MS', 'must be at least RESEARCH_POLL_MIN_MS');
  }
  return config;
}
