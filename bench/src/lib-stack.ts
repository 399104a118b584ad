/**
 * What the search benchmarks ask of the platform besides its defaults: every gateway limit
 * that would refuse a load run raised out of its way (the rate limit and burst, the account's
 * and the providers' in-flight caps), everything else as in production.
 */
const UNLIMITED = '100000';

export const NO_LIMITS_ENV: Readonly<Record<string, string>> = {
  RATE_LIMIT_PER_SECOND: UNLIMITED, RATE_LIMIT_BURST: UNLIMITED, ACCOUNT_MAX_IN_FLIGHT: UNLIMITED,
  PROVIDER_MAX_IN_FLIGHT_BRAVE: UNLIMITED, PROVIDER_MAX_IN_FLIGHT_EXA: UNLIMITED, PROVIDER_MAX_IN_FLIGHT_TAVILY: UNLIMITED,
};

/** The simulator answers at once: the benchmarks measure the platform, not a provider's latency. */
export const ZERO_LATENCY_SIMULATOR = { simulator: true, simulatorEnv: { SIM_BASE_LATENCY_MS: '0' } } as const;
