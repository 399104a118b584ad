import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@svc/test-kit';

// The start command's helper is plain CommonJS (scripts/ runs without a build).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { PASSED_ON, serviceEnv } = require('../../scripts/local-env.cjs') as {
  PASSED_ON: string[];
  serviceEnv: (stack: Record<string, string>, outer: Record<string, string | undefined>) => Record<string, string>;
};

describe('the local stack passes configuration from its environment to every service', () => {
  it('PROVIDER_TIMEOUT_MS=5000 npm start reaches the services, over the stack\'s own settings', () => {
    const env = serviceEnv({ PORT: '8080', PROVIDER_TIMEOUT_MS: '15000' }, { PATH: '/bin', PROVIDER_TIMEOUT_MS: '5000', UNRELATED: 'x' });
    expect(env).toEqual({ PATH: '/bin', PORT: '8080', PROVIDER_TIMEOUT_MS: '5000' });
  });

  it('passes every variable of the documented configuration table', () => {
    const documented = readFileSync(join(repoRoot(), 'docs/development.md'), 'utf8');
    const table = documented.slice(documented.indexOf('## Environment'));
    for (const name of ['RATE_LIMIT_PER_SECOND', 'RATE_LIMIT_BURST', 'ACCOUNT_MAX_IN_FLIGHT', 'PROVIDER_MAX_IN_FLIGHT_BRAVE', 'PROVIDER_MAX_IN_FLIGHT_EXA',
      'PROVIDER_MAX_IN_FLIGHT_TAVILY', 'PROVIDER_TIMEOUT_MS', 'KEY_PROPAGATION_MAX_MS', 'BYOK_ENABLED', 'BYOK_FEE_PERCENT', 'STRIPE_SECRET_KEY',
      'STRIPE_WEBHOOK_SECRET', 'STRIPE_API_BASE', 'BRAVE_API_KEY', 'EXA_API_KEY', 'TAVILY_API_KEY', 'BRAVE_BASE_URL', 'EXA_BASE_URL', 'TAVILY_BASE_URL',
      'OPERATOR_TOKEN', 'REDIS_URL', 'REDIS_CLUSTER', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'SEARCH_MAX_DURATION_MS', 'SHUTDOWN_DELAY_MS',
      'PROVIDER_BREAKER_ENABLED', 'PROVIDER_BREAKER_COOLDOWN_MS', 'SIGNUP_CONFIRMATION']) {
      expect(PASSED_ON).toContain(name);
      expect(table).toContain(name);
    }
  });

  it('the start command builds each service\'s environment with it, and hands the KEK variables to account-admin and the gateway', () => {
    const script = readFileSync(join(repoRoot(), 'scripts/start-local.mjs'), 'utf8');
    expect(script).toContain('env: serviceEnv(service.env, process.env)');
    for (const name of ['PROVIDER_KEY_KEK', 'PROVIDER_KEY_KEK_ID', 'PROVIDER_KEY_KEK_PREVIOUS']) {
      expect(script).toContain(`process.env.${name}`);
      expect(PASSED_ON).not.toContain(name);
    }
  });
});
