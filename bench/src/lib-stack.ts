/**
 * What the search benchmarks ask of the platform besides its defaults: every gateway limit
 * that would refuse a load run raised out of its way (the rate limit and burst, the account's
 * and the providers' in-flight caps), everything else as in production.
 */
const UNLIMITED = '100000';

export const NO_LIMITS_ENV: Readonly<Record<string, string>> = {
  RATE_LIMIT_PER_SECOND: UNLIMITED, RATE_LIMIT_BURST: UNLIMITED, ACCOUNT_MAX_IN_FLIGHT: UNLIMITED,
  PROVIDER_MAX_IN_FLIGHT_BRAVE: UNLIMITED, PROVIDER_MAX_IN_FLIGHT_EXA: UNLIMITED, PROVIDER_MAX_IN_FLIGHT_TAVILY: UNLIMITED,
  // A test stack turns the breaker off by default; a benchmark measures it as production runs it.
  PROVIDER_BREAKER_ENABLED: 'true',
};

/** The simulator answers at once: the benchmarks measure the platform, not a provider's latency. */
export const ZERO_LATENCY_SIMULATOR = {
  simulator: true,
  simulatorEnv: { SIM_BASE_LATENCY_MS: '0' },
} as const;

/** The Redis database of a benchmark's stack (BENCH_REDIS_DB, default 15). */
export const BENCH_REDIS_DB = Number(process.env.BENCH_REDIS_DB ?? 15);

/**
 * The stack of a search benchmark, before its name and gateways: its Redis database, warnings
 * and worse logged, the ledger worker draining (and confirming) the settlements as in
 * production (without it the gateway's retained records would only grow), and the simulator
 * answering at once.
 */
export const BENCH_STACK = { redisDb: BENCH_REDIS_DB, logLevel: 'warn', worker: true, ...ZERO_LATENCY_SIMULATOR } as const;

/** `NAME=value NAME2=value2` as an environment object (empty when unset). */
export function envPairs(text: string | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of (text ?? '').split(/\s+/)) {
    const eq = pair.indexOf('=');
    if (eq > 0) env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return env;
}


/** A benchmark's numeric knobs: each from the environment variable of its name, else the default given here. */
export function knobsFromEnv<T extends Record<string, number>>(defaults: T): T {
  const knobs: Record<string, number> = {};
  for (const [name, value] of Object.entries(defaults)) knobs[name] = Number(process.env[name] ?? value);
  return knobs as T;
}
