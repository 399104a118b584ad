// The configuration variables (docs/development.md, "Environment") that the local stack's
// start command passes from its own environment to every service it starts, over its own
// settings: `PROVIDER_TIMEOUT_MS=5000 npm start` reaches the gateway. Ports and the URLs
// between the local processes are the start command's own and are not taken from outside;
// METRICS_PORT is per service, so it is not passed on either. The provider-key KEK
// variables are read by the start command itself and given to account-admin and the
// gateway only.
'use strict';

const PASSED_ON = [
  'RATE_LIMIT_PER_SECOND', 'RATE_LIMIT_BURST', 'ACCOUNT_MAX_IN_FLIGHT',
  'PROVIDER_MAX_IN_FLIGHT_BRAVE', 'PROVIDER_MAX_IN_FLIGHT_EXA', 'PROVIDER_MAX_IN_FLIGHT_TAVILY',
  'PROVIDER_TIMEOUT_MS', 'KEY_PROPAGATION_MAX_MS', 'BYOK_ENABLED', 'BYOK_FEE_PERCENT',
  'STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET', 'STRIPE_API_BASE',
  'BRAVE_API_KEY', 'EXA_API_KEY', 'TAVILY_API_KEY', 'BRAVE_BASE_URL', 'EXA_BASE_URL', 'TAVILY_BASE_URL',
  'OPERATOR_TOKEN', 'REDIS_URL', 'REDIS_CLUSTER',
  'OTEL_EXPORTER_OTLP_ENDPOINT', 'LOG_LEVEL', 'HTTP_REQUEST_TIMEOUT_MS',
  'SIGN_IN_ATTEMPTS_PER_EMAIL', 'SIGN_IN_ATTEMPTS_PER_ADDRESS', 'SIGN_IN_WINDOW_SECONDS',
  'SEARCH_MAX_DURATION_MS', 'SHUTDOWN_DELAY_MS', 'PROVIDER_BREAKER_ENABLED', 'PROVIDER_BREAKER_COOLDOWN_MS',
  'SIGNUP_CONFIRMATION',
];

/** A service's environment: PATH, the stack's settings, then every passed-on variable set in `outer`. */
function serviceEnv(stackSettings, outer) {
  const env = { PATH: outer.PATH ?? '', ...stackSettings };
  for (const name of PASSED_ON) {
    const value = outer[name];
    if (value !== undefined && value !== '') env[name] = value;
  }
  return env;
}

module.exports = { PASSED_ON, serviceEnv };
