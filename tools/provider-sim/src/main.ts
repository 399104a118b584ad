import { int, loadEnvOrExit, oneOf, str } from '@svc/config';
import { buildSimulator } from './server';

const env = loadEnvOrExit(
  {
    PORT: int({ default: 9090, min: 0, max: 65_535 }),
    HOST: str({ default: '127.0.0.1' }),
    SIM_BASE_LATENCY_MS: int({ default: 0, min: 0, max: 600_000 }),
    SIM_BRAVE_KEY: str({ default: 'sim-brave-key' }),
    SIM_EXA_KEY: str({ default: 'sim-exa-key' }),
    SIM_TAVILY_KEY: str({ default: 'tvly-sim-key' }),
    SIM_RESEARCH_MS: int({ default: 1_500, min: 0, max: 3_600_000 }),
    LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
  },
  'provider-sim',
);

async function main(): Promise<void> {
  const app = buildSimulator({
    braveKey: env.SIM_BRAVE_KEY,
    exaKey: env.SIM_EXA_KEY,
    tavilyKey: env.SIM_TAVILY_KEY,
    baseLatencyMs: env.SIM_BASE_LATENCY_MS,
    logLevel: env.LOG_LEVEL,
    researchMs: env.SIM_RESEARCH_MS,
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      app.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  }
  await app.listen({ port: env.PORT, host: env.HOST });
}

main().catch((error: unknown) => {
  process.stderr.write(`provider-sim: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
