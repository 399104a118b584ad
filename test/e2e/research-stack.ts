/** The research worker's settings for end-to-end suites: fast polls and a generous provider rate, so a run takes the simulator's time and little more. */
export const RESEARCH_WORKER_TEST_ENV = {
  RESEARCH_POLL_MIN_MS: '100', RESEARCH_POLL_MAX_MS: '300', RESEARCH_JOB_LOCK_MS: '2000', RESEARCH_SWEEP_INTERVAL_MS: '500',
  RESEARCH_EXA_REQUESTS_PER_SECOND: '1000', RESEARCH_TAVILY_REQUESTS_PER_MINUTE: '60000', RESEARCH_CALL_TIMEOUT_MS: '5000',
} as const;
